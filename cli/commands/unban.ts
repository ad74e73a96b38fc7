import { defineCommand } from "citty";
import { globalArgs, createContext } from "../context.ts";
import { AS_ARG, PLAYER_HELP, creatorJson, issuedJson, sayIssued, sessionOf, settle } from "../sanction.ts";
import { helpMeta } from "../args.ts";

export default defineCommand({
  meta: helpMeta({
    examples: [
      ["hub-agent unban Bob", "lift Bob's bans"],
      ["hub-agent unban STEAM_0:0:63694297", "by any spelling of the platform id"],
    ],
  }),
  args: {
    ...globalArgs,
    player: { type: "positional", description: PLAYER_HELP, required: true },
    as: AS_ARG,
  },
  async run({ args, data }) {
    const ctx = createContext(args, data);
    const { unban } = await import("../../lib/app/sanction.ts");
    const o = settle(ctx, await unban(sessionOf(ctx), { player: args.player, as: args.as }));
    ctx.emit({
      ...issuedJson("unban", o),
      /** Queued bans of the player that will now never be sent. */
      cancelled_queued_bans: o.cancelled,
      as: creatorJson(o.creator),
      ...(o.error ? { error: o.error } : {}),
    });
    sayIssued(ctx, o);
  },
});
