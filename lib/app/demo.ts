/**
 * `hub-agent demo`: the agent against the in-memory service (seeded with example data) and the simulated game,
 * which plays the demo's script (demo-timeline.ts) while a recorder notes what the game and the service saw
 * (demo-recorder.ts). The agent runs with the caller's `runAgent`, the lifecycle `run` has too.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Clock, systemClock as clock } from "../clock.ts";
import type { GameBridge } from "../game/bridge.ts";
import { SimGame } from "../game/sim.ts";
import type { Logger } from "../log.ts";
import { startSandbox } from "../sandbox/index.ts";
import { type Config, loadConfig } from "./config.ts";
import { DemoRecorder, type DemoSummary } from "./demo-recorder.ts";
import { demoTimeline, playTimeline } from "./demo-timeline.ts";

export type { DemoSummary };

/** The demo's intervals, in seconds: what happens shows within a few seconds. */
const INTERVALS = {
  STATUS: "5",
  GROUPS: "10",
  BANS: "5",
  QUEUES: "5",
  PLAYTIME: "30",
  REWARDS: "5",
  ADVERTS: "8",
  USER_RETRY: "5",
};

export interface DemoOptions {
  logger: Logger;
  /** Repeat the script until `durationS` has passed, or forever (until the agent is stopped by a signal). */
  loop: boolean;
  durationS?: number;
  /** The service is up, the game not yet: its address and its key (to keep out of every line). */
  onStart(service: { url: string; key: string }): void;
  /** Runs the agent until `until` (none: until a signal); its exit code. */
  runAgent(o: {
    config: Config;
    bridge: GameBridge;
    clock: Clock;
    logger: Logger;
    until?: Promise<void>;
  }): Promise<number>;
}

export type DemoOutcome =
  { kind: "invalid_config"; problems: string[] } | { kind: "done"; code: number; summary: DemoSummary };

export async function runDemo(opts: DemoOptions): Promise<DemoOutcome> {
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
      ...Object.fromEntries(Object.entries(INTERVALS).map(([k, v]) => [`HUB_INTERVALS_${k}`, v])),
    };
    const loaded = await loadConfig({ env, cwd: dir });
    if (!loaded.ok) return { kind: "invalid_config", problems: loaded.problems };
    opts.onStart({ url: sb.url, key: sb.key });
    opts.logger.info(`in-memory service at ${sb.url}; simulated game with players joining and leaving`);

    const sim = new SimGame({ clock, logger: opts.logger.withTag("game"), map: "sim_island" });
    const recorder = new DemoRecorder(sim, sb);
    const logger = recorder.logger(opts.logger);
    const abort = new AbortController();
    const { durationS } = opts;
    const loop = opts.loop || durationS !== undefined;
    const script = playTimeline(sim, demoTimeline(), { clock, signal: abort.signal, loop, logger });
    // One script by default; with a duration its time; looping without one, only a signal ends it.
    const until = durationS
      ? new Promise<void>((r) => setTimeout(r, durationS * 1000).unref())
      : loop
        ? undefined
        : script;
    let code: number;
    try {
      code = await opts.runAgent({ config: loaded.config, bridge: sim, clock, logger, until });
    } finally {
      abort.abort();
    }
    return { kind: "done", code, summary: recorder.summary() };
  } finally {
    await sb.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
