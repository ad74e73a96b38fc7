import { defineCommand } from "citty";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { globalArgs, createContext } from "../context.ts";
import { CliError, EXIT } from "../exit.ts";
import { runAgent } from "./run.ts";

/** What the demo is and what the script (cli/demo-timeline.ts) will show; keep the two in step. */
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
  meta: {
    name: "demo",
    description:
      "the agent against the in-memory service and a simulated game, narrated: one script (about 20 s), then a summary",
  },
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
    const duration = args.duration === undefined ? undefined : Number(args.duration);
    if (duration !== undefined && !(duration > 0 && duration <= 86_400))
      throw new CliError(`--duration ${args.duration} is not a number of seconds: use e.g. --duration 20`, EXIT.USAGE);
    const [
      { startSandbox },
      { loadConfig },
      { SimGame },
      { demoTimeline, playTimeline },
      { systemClock: clock },
      { DemoRecorder, summaryLines },
    ] = await Promise.all([
      import("../../lib/sandbox/index.ts"),
      import("../../lib/app/config.ts"),
      import("../../lib/game/sim.ts"),
      import("../demo-timeline.ts"),
      import("../../lib/clock.ts"),
      import("../demo-summary.ts"),
    ]);
    const sb = await startSandbox();
    const dir = mkdtempSync(join(tmpdir(), "hub-demo-"));
    try {
      // The embedded defaults: the built-in service, the simulated game, and intervals of a few seconds.
      const env = {
        HUB_API_URL: sb.url,
        HUB_API_KEY: sb.key,
        HUB_API_SERVER_ID: sb.serverId,
        HUB_STORAGE_DIR: dir,
        HUB_GAME_BRIDGE: "sim",
      };
      const intervals = {
        STATUS: "5",
        GROUPS: "10",
        BANS: "5",
        QUEUES: "5",
        PLAYTIME: "30",
        REWARDS: "5",
        ADVERTS: "8",
        USER_RETRY: "5",
      };
      for (const [k, v] of Object.entries(intervals)) Object.assign(env, { [`HUB_INTERVALS_${k}`]: v });
      const loaded = await loadConfig({ env, cwd: dir });
      if (!loaded.ok) throw new CliError("the demo configuration is invalid", EXIT.FAILURE, loaded.problems);
      ctx.secret(sb.key);
      for (const line of INTRO) ctx.say(line);
      ctx.logger.info(`in-memory service at ${sb.url}; simulated game with players joining and leaving`);

      const sim = new SimGame({ clock, logger: ctx.logger.withTag("game"), map: "sim_island" });
      const recorder = new DemoRecorder(sim, sb);
      const logger = recorder.logger(ctx.logger);
      const abort = new AbortController();
      const loop = args.loop === true || duration !== undefined;
      const script = playTimeline(sim, demoTimeline(), { clock, signal: abort.signal, loop, logger });
      // One script by default; with --duration its time; with --loop only Ctrl-C ends it.
      const until = duration
        ? new Promise<void>((r) => setTimeout(r, duration * 1000).unref())
        : loop
          ? undefined
          : script;
      try {
        ctx.exit(await runAgent({ config: loaded.config, bridge: sim, clock, logger, until }));
      } finally {
        abort.abort();
      }
      const summary = recorder.summary();
      ctx.emit(summary);
      ctx.say("");
      for (const line of summaryLines(summary)) ctx.say(line);
    } finally {
      await sb.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  },
});
