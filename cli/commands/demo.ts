import { defineCommand } from "citty";
import { globalArgs, createContext } from "../context.ts";
import { CliError, EXIT } from "../exit.ts";
import { runDemo } from "../../lib/app/demo.ts";
import { summaryLines } from "../demo-summary.ts";
import { runAgent } from "./run.ts";
import { helpMeta } from "../args.ts";

/** What the demo is and what the script (lib/app/demo-timeline.ts) will show; keep the two in step. */
const INTRO = [
  "hub-agent demo: the agent as it runs beside a game server, here against an in-memory VyHub service (seeded with",
  "example users, a ban, a reward and adverts) and a simulated game, on this machine only. In about 20 seconds:",
  "Alice joins and gets the VIP rank she bought, newcomers Dave and Erin are registered, Carol (an admin) joins,",
  "Bob is kicked because the service has him banned, !dashboard is answered, Dave spawn-kills Erin and Carol bans",
  "him from the chat, adverts are shown, and everyone leaves. The log below is what hub-agent does; a summary",
  "follows. Ctrl-C stops early; --loop repeats the script until Ctrl-C; --duration N runs for N seconds.",
  "",
];

export default defineCommand({
  meta: helpMeta({
    examples: [
      ["hub-agent demo", "one script, then a summary"],
      ["hub-agent demo --loop", "repeat the script until Ctrl-C"],
      ["hub-agent demo --duration 60 --json > summary.json", "a minute, then the summary as JSON"],
    ],
  }),
  args: {
    ...globalArgs,
    loop: { type: "boolean", description: "repeat the script until Ctrl-C" },
    duration: {
      type: "string",
      description: "run for this many seconds, repeating the script (default: one script)",
      valueHint: "seconds",
    },
  },
  async run({ args, data }) {
    const ctx = createContext(args, data);
    const durationS = args.duration === undefined ? undefined : Number(args.duration);
    if (durationS !== undefined && !(durationS > 0 && durationS <= 86_400))
      throw new CliError(`--duration ${args.duration} is not a number of seconds: use e.g. --duration 20`, EXIT.USAGE);
    const r = await runDemo({
      logger: ctx.logger,
      loop: args.loop === true,
      durationS,
      onStart: ({ key }) => {
        ctx.secret(key);
        for (const line of INTRO) ctx.say(line);
      },
      runAgent,
    });
    if (r.kind === "invalid_config") throw new CliError("the demo configuration is invalid", EXIT.FAILURE, r.problems);
    ctx.exit(r.code);
    ctx.emit(r.summary);
    ctx.say("");
    for (const line of summaryLines(r.summary)) ctx.say(line);
  },
});
