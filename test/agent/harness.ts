import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent } from "../../lib/agent.ts";
import { createApi, type Api } from "../../lib/api/client.ts";
import { ManualClock } from "../../lib/clock.ts";
import { COMMAND_LIMIT } from "../../lib/command-limit.ts";
import { loadConfig, type Config } from "../../lib/app/config.ts";
import { HUB_EVENTS, type HubEventName } from "../../lib/events.ts";
import { SimGame, type SimGameOptions } from "../../lib/game/sim.ts";
import { memoryLogger } from "../../lib/log.ts";
import { loadMessages } from "../../lib/messages.ts";
import type { Feature } from "../../lib/features/index.ts";
import { users } from "../../lib/features/users.ts";
import { startSandbox, type Sandbox } from "../../lib/sandbox/index.ts";
import { openStore, type Store } from "../../lib/store/index.ts";
import { holdInstance, type Instance } from "../../lib/store/instance.ts";
import { delivererCache } from "../../lib/sanctions/handoff.ts";
import type { PaceOptions } from "../../lib/pace.ts";
import { until as pollUntil } from "../support/until.ts";
import { sandboxEnv } from "../support/sandbox-env.ts";

/** Polls (in real time) until `cond` holds: the agent's HTTP calls are real I/O, not microtasks. */
export function until(cond: () => boolean, what = "condition", timeoutMs = 10_000): Promise<void> {
  return pollUntil(cond, what, { timeoutMs, everyMs: 5 });
}

export interface Harness {
  clock: ManualClock;
  sb: Sandbox;
  sim: SimGame;
  api: Api;
  store: Store;
  config: Config;
  agent: Agent;
  events: HubEventName[];
  logger: ReturnType<typeof memoryLogger>;
  /** Waits until no job or event handler is running, so every timer is asleep on the clock. */
  idle(): Promise<void>;
  /** Makes a fresh agent over the same store, service and game (a restart). */
  restart(): Agent;
  /** A player joins / types in chat / the operator types at the console; each then waits until the agent is idle. */
  join(p: { id: string; name: string }): Promise<void>;
  chat(p: { id: string }, text: string): Promise<void>;
  /** A chat line at a human pace: then the command limit's refill time passes (lib/command-limit.ts). */
  typed(p: { id: string }, text: string): Promise<void>;
  consoleLine(line: string): Promise<void>;
  /** What the agent said privately to the player, in order. */
  said(p: { id: string }): string[];
  /**
   * `run`: the agent started holding the store's instance lock (as lib/app/run.ts holds it), once it takes commands'
   * handed-over entries (cache "deliverer"). `close` releases the lock.
   */
  startRun(): Promise<void>;
  close(): Promise<void>;
}

export async function harness(
  opts: {
    env?: Record<string, string>;
    sim?: SimGameOptions;
    timeoutMs?: number;
    dir?: string;
    /** Only these feature modules (default: all). */
    features?: readonly Feature[];
    /** Agents as `run --once` makes them: no timers; the test calls runOnce(). */
    once?: boolean;
    /** The pace of per-player requests (default the agent's own). */
    pace?: PaceOptions;
    /** GET retries of the API client (default 0; `run`'s client retries, and waits out a 429's gate in between). */
    retries?: number;
  } = {},
): Promise<Harness> {
  const clock = new ManualClock(Date.UTC(2026, 10, 21, 12));
  const sb = await startSandbox({ now: () => clock.now() });
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), "hub-agent-"));
  const loaded = await loadConfig({
    env: {
      ...sandboxEnv(sb, dir),
      ...opts.env,
    },
    cwd: dir,
  });
  if (!loaded.ok) throw new Error(loaded.problems.join("\n"));
  const config = loaded.config;
  const logger = memoryLogger();
  const store = await openStore({ dir, clock });
  const sim = new SimGame({ clock, ...opts.sim });
  const api = createApi({
    url: sb.url,
    key: sb.key,
    retries: opts.retries ?? 0,
    clock,
    timeoutMs: opts.timeoutMs ?? 2000,
    logger: logger.withTag("api"),
  });
  const messages = await loadMessages(config.lang, { logger });
  const events: HubEventName[] = [];
  let instance: Instance | undefined;
  const make = () => {
    const agent = new Agent({
      config,
      api,
      store,
      bridge: sim,
      clock,
      logger,
      messages,
      jitter: 0,
      // Rule 6's lookup is a feature too; every agent test needs its users.
      features: opts.features && [...opts.features, users],
      once: opts.once,
      ...(opts.pace ? { pace: opts.pace } : {}),
    });
    for (const name of HUB_EVENTS) agent.events.on(name, () => void events.push(name));
    return agent;
  };
  const h: Harness = {
    clock,
    sb,
    sim,
    api,
    store,
    config,
    agent: make(),
    events,
    logger,
    idle: () => until(() => h.agent.scheduler.busy === 0 && h.agent.events.busy === 0, "the agent to be idle"),
    restart() {
      h.agent = make();
      return h.agent;
    },
    async join(p) {
      sim.join(p);
      await h.idle();
    },
    async chat(p, text) {
      sim.chat(p.id, text);
      await h.idle();
    },
    async typed(p, text) {
      await h.chat(p, text);
      await clock.advance(COMMAND_LIMIT.refillMs);
      await h.idle();
    },
    async consoleLine(line) {
      sim.operatorInput(line);
      await h.idle();
    },
    said: (p) =>
      sim
        .actionsOf("message")
        .filter((m) => m.player === p.id)
        .map((m) => m.text ?? ""),
    async startRun() {
      instance = await holdInstance(store.dir);
      await h.agent.start();
      const said = async () => (await delivererCache(store).get())?.data.pid;
      await pollUntil(async () => (await said()) === process.pid, "run to take handed-over entries");
    },
    async close() {
      await h.agent.stop();
      await instance?.release();
      await sb.stop();
    },
  };
  return h;
}
