import { defineCommand } from "citty";
import { globalArgs, createContext } from "../context.ts";
import { AS_ARG, PLAYER_HELP, creatorJson, issuedJson, reasonOf, sayIssued, sessionOf, settle } from "../sanction.ts";
import { helpMeta } from "../args.ts";

export default defineCommand({
  meta: helpMeta({ examples: [['hub-agent warn Bob "mic spam"', "VyHub may ban at its warning threshold"]] }),
  args: {
    ...globalArgs,
    player: { type: "positional", description: PLAYER_HELP, required: true },
    reason: { type: "positional", description: "why: the rest of the line", required: true },
    as: AS_ARG,
  },
  async run({ args, data }) {
    const ctx = createContext(args, data);
    const reason = reasonOf(args._, 1, "warn <player> <reason…>");
    const { issueSanction } = await import("../../lib/app/sanction.ts");
    const request = { kind: "warning", player: args.player, reason, as: args.as } as const;
    const o = settle(ctx, await issueSanction(sessionOf(ctx), request));
    ctx.emit({
      ...issuedJson("warn", o),
      reason,
      as: creatorJson(o.creator),
      ...(o.warningId ? { warning_id: o.warningId } : {}),
      /** Whether the service banned the player because of this warning (null: not known). */
      auto_banned: o.autoBanned,
      ...(o.error ? { error: o.error } : {}),
    });
    sayIssued(ctx, o);
  },
});
