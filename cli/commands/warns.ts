import { defineCommand } from "citty";
import { globalArgs, createContext } from "../context.ts";
import { PLAYER_HELP, playerJson, sessionOf, settle } from "../sanction.ts";
import { helpMeta } from "../args.ts";

export default defineCommand({
  meta: helpMeta({ examples: [["hub-agent warns Bob", "Bob's warnings in this serverbundle"]] }),
  args: {
    ...globalArgs,
    player: { type: "positional", description: PLAYER_HELP, required: true },
  },
  async run({ args, data }) {
    const ctx = createContext(args, data);
    const { warns } = await import("../../lib/app/sanction.ts");
    const o = settle(ctx, await warns(sessionOf(ctx), { player: args.player }));
    ctx.emit({ player: playerJson(o.target), total: o.total, warnings: o.warnings });
    for (const line of o.lines) ctx.say(line);
  },
});
