import { defineCommand } from "citty";
import { globalArgs, createContext } from "../context.ts";
import { AS_ARG, PLAYER_HELP, creatorJson, issuedJson, reasonOf, sayIssued, sessionOf, settle } from "../sanction.ts";
import { helpMeta } from "../args.ts";

export default defineCommand({
  meta: helpMeta({
    examples: [
      ['hub-agent ban Bob 30m "spawn killing"', "an online player by nick, for 30 minutes"],
      ["hub-agent ban 76561198087654322 perm cheating", "by SteamID64, permanently (an offline player too)"],
      ["hub-agent ban Bob 1d griefing --as Carol", "as Carol: VyHub checks her permission"],
    ],
  }),
  args: {
    ...globalArgs,
    player: { type: "positional", description: PLAYER_HELP, required: true },
    length: {
      type: "positional",
      description: "minutes (90), a duration (30m, 1d12h, 2w), or 0/perm for permanent",
      required: true,
    },
    reason: { type: "positional", description: "why: the rest of the line", required: true },
    as: AS_ARG,
  },
  async run({ args, data }) {
    const ctx = createContext(args, data);
    const reason = reasonOf(args._, 2, "ban <player> <length> <reason…>");
    const { issueSanction } = await import("../../lib/app/sanction.ts");
    const request = { kind: "ban", player: args.player, length: args.length, reason, as: args.as } as const;
    const o = settle(ctx, await issueSanction(sessionOf(ctx), request));
    ctx.emit({
      ...issuedJson("ban", o),
      length_s: o.seconds,
      length: o.length,
      reason,
      as: creatorJson(o.creator),
      ...(o.banId ? { ban_id: o.banId } : {}),
      ...(o.error ? { error: o.error } : {}),
    });
    sayIssued(ctx, o);
  },
});
