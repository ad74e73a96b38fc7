import { defineCommand } from "citty";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { globalArgs, createContext } from "../context.ts";
import { CliError, EXIT } from "../exit.ts";
import { runAgent } from "./run.ts";

export default defineCommand({
  meta: {
    name: "demo",
    description: "the agent against the in-memory service and a simulated game with short intervals, narrated",
  },
  args: {
    ...globalArgs,
    duration: {
      type: "string",
      description: "stop after this many seconds (default: until Ctrl-C)",
      valueHint: "seconds",
    },
  },
  async run({ args }) {
    const ctx = createContext(args);
    const duration = args.duration === undefined ? undefined : Number(args.duration);
    if (duration !== undefined && !(duration > 0))
      throw new CliError(`--duration ${args.duration} is not a number of seconds: use e.g. --duration 20`, EXIT.USAGE);
    const [{ startSandbox }, { loadConfig }, { SimGame }, { demoTimeline, playTimeline }, { systemClock: clock }] =
      await Promise.all([
        import("../../lib/sandbox/index.ts"),
        import("../../lib/config/index.ts"),
        import("../../lib/game/sim.ts"),
        import("../demo-timeline.ts"),
        import("../../lib/clock.ts"),
      ]);
    const sb = await startSandbox();
    const dir = mkdtempSync(join(tmpdir(), "hub-demo-"));
    // The embedded defaults: the built-in service, the simulated game, and intervals of a few seconds.
    const env = { HUB_API_URL: sb.url, HUB_API_KEY: sb.key, HUB_API_SERVER_ID: sb.serverId, HUB_STORAGE_DIR: dir };
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
    ctx.logger.info(`in-memory service at ${sb.url}; simulated game with players joining and leaving`);

    const logger = ctx.logger;
    const sim = new SimGame({ clock, logger: logger.withTag("game"), map: "sim_island" });
    const abort = new AbortController();
    const until = duration ? new Promise<void>((r) => setTimeout(r, duration * 1000)) : undefined;
    void playTimeline(sim, demoTimeline(), { clock, signal: abort.signal, loop: true, logger });
    try {
      process.exitCode = await runAgent({ config: loaded.config, bridge: sim, clock, logger, until });
    } finally {
      abort.abort();
      await sb.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  },
});
