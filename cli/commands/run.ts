import { defineCommand } from "citty";
import { globalArgs, createContext, type Invocation } from "../context.ts";
import { CliError, EXIT } from "../exit.ts";
import type { Config, LoadResult } from "../../lib/config/index.ts";
import type { GameBridge, GameEnd } from "../../lib/game/bridge.ts";
import type { Logger } from "../../lib/log.ts";
import type { Clock } from "../../lib/clock.ts";
import type { Agent } from "../../lib/agent.ts";
import type { RunMonitor } from "../../lib/monitor/monitor.ts";
import type { MonitorListener } from "../../lib/monitor/listen.ts";
import type { Metrics } from "../../lib/monitor/metrics.ts";
import type { RunSignals } from "../run-signals.ts";
import type { OnceSummary } from "../../lib/monitor/once.ts";
import type { PaceOptions } from "../../lib/pace.ts";

export default defineCommand({
  meta: {
    name: "run",
    description: "run the agent: every timer and event of the client interface, until SIGINT/SIGTERM",
  },
  args: {
    ...globalArgs,
    once: { type: "boolean", description: "one round of every periodic job, then exit (for cron)" },
  },
  async run({ args, data }) {
    const ctx = createContext(args, data);
    const config = await ctx.config({ warnings: "changed", timePatterns: true });
    // SIGHUP reads the configuration again (the same file and environment) and applies what can change live.
    const { loadConfig } = await import("../../lib/app/config.ts");
    const reread = async () => {
      const result = await loadConfig({ file: args.config, env: process.env, cwd: process.cwd(), timePatterns: true });
      for (const secret of result.secrets) ctx.secret(secret); // a new key or password never reaches the log
      return result;
    };
    const { createBridge } = await import("../../lib/game/index.ts");
    const { systemClock } = await import("../../lib/clock.ts");
    // A wrapped server's console is copied to stdout for the operator (logs are on stderr); --json keeps stdout clean.
    // Left to the wrapper to take: process.stdout builds Node's stream objects, memory no other bridge needs.
    const output = ctx.json ? null : undefined;
    const bridge = await createBridge(config, { clock: systemClock, logger: ctx.logger, output, redact: ctx.redact });
    // --once --json: one object on stdout, the round's summary with the exit code (an error too, instead of the
    // runner's {"error": …}); the error's line still goes to the log.
    let summary: OnceSummary | undefined;
    const onceReport = args.once && ctx.json ? (s: OnceSummary) => void (summary = s) : undefined;
    const agentRun = runAgent({
      config,
      bridge,
      clock: systemClock,
      logger: ctx.logger,
      once: !!args.once,
      reread,
      onceReport,
      invocation: ctx.invocation,
    });
    if (!onceReport) {
      ctx.exit(await agentRun);
      return;
    }
    let code: number;
    let error: string | null = null;
    try {
      code = await agentRun;
    } catch (e) {
      if (!(e instanceof CliError) || !summary) throw e;
      ctx.logger.error(e.message);
      [code, error] = [e.code, e.message];
    }
    const result =
      { [EXIT.OK]: "ok", [EXIT.QUEUED]: "queued", [EXIT.UNREACHABLE]: "unreachable", [EXIT.CONFIG]: "refused" }[code] ??
      "failed";
    ctx.emit({ exit_code: code, result, error, ...summary });
    ctx.exit(code);
  },
});

/** Shared by `run` and `demo`: start, serve until a signal (or one round with `once`), stop cleanly. */
export async function runAgent(opts: {
  config: Config;
  bridge: GameBridge;
  clock: Clock;
  logger: Logger;
  once?: boolean;
  until?: Promise<void>;
  /** Reads the configuration again on SIGHUP (`run`); without it SIGHUP keeps its default action (the demo). */
  reread?: () => Promise<LoadResult>;
  /** `run --once --json`: what the round did, told before `run` exits (with or without an error). */
  onceReport?: (summary: OnceSummary) => void;
  /** The command line `run --once` exits for: a refused key or unknown server id makes it exit 3. */
  invocation?: Invocation;
  /** The pace of per-player requests (bench/: scaled with its intervals); default lib/pace.ts's. */
  pace?: PaceOptions;
}): Promise<number> {
  const { logger } = opts;
  // One handler per signal for the whole run, from before the instance lock (cli/run-signals.ts).
  const { RunSignals } = await import("../run-signals.ts");
  const signals = new RunSignals({
    hangup: !!opts.reread,
    onForce: (signal, code) => {
      logger.warn(`${signal} again: exiting now, without waiting for the rest`);
      process.exit(code);
    },
  });
  signals.install();
  try {
    return await runLocked(opts, signals);
  } finally {
    signals.uninstall();
  }
}

async function runLocked(opts: Parameters<typeof runAgent>[0], signals: RunSignals): Promise<number> {
  const { config, logger } = opts;
  const [{ resolve }, { holdInstance, InstanceBusyError, InstanceLockError }] = await Promise.all([
    import("node:path"),
    import("../../lib/store/instance.ts"),
  ]);
  // Held before anything starts (the game bridge too), for the whole run: two agents on one store would each
  // execute `once` rewards and report their own view of the server.
  let instance;
  let unlocked = false;
  try {
    instance = await holdInstance(resolve(config.storage.dir));
  } catch (e) {
    if (e instanceof InstanceBusyError) throw new CliError(e.message, EXIT.INSTANCE);
    if (!(e instanceof InstanceLockError)) throw e;
    const { DISK_REFUSES, fsErrorLine, isStoreErrno } = await import("../../lib/store/errors.ts");
    // A path set up wrong (no permission, a file in the way) is the store's exit code, like every other command's.
    if (!e.code || !DISK_REFUSES.has(e.code))
      throw new CliError(e.message, isStoreErrno(e.code) ? EXIT.STORE : EXIT.FAILURE);
    // A full or read-only disk must not stop enforcement: bans are kicked from the cache, without what needs the lock.
    unlocked = true;
    const dir = resolve(config.storage.dir);
    logger.error(
      `${fsErrorLine(e.code, dir, dir)}; running without the instance lock: bans are enforced from the cache, ` +
        "rewards and playtime stay off until hub-agent is restarted with a writable store",
    );
  }
  if (instance?.tookOverFrom) {
    const { pid, host, since } = instance.tookOverFrom;
    logger.info(
      `took over the storage directory from a run that is gone (pid ${pid} on ${host}, since ${new Date(since).toISOString()})`,
    );
  }
  try {
    // A reload (SIGHUP) serves the agent again with the new configuration: the game bridge and the lock stay.
    let served = { ...opts, signals, startedAt: opts.clock.now() };
    for (;;) {
      const result = await serve(served, unlocked);
      if (typeof result === "number") return result;
      served = { ...served, config: result.reload };
    }
  } finally {
    await instance?.release();
  }
}

type ServeOptions = Parameters<typeof runAgent>[0] & { signals: RunSignals; startedAt: number };

async function serve(opts: ServeOptions, unlocked: boolean): Promise<number | { reload: Config }> {
  const { config, bridge, clock, logger } = opts;
  const [{ Agent }, { serviceApi }, { openStore }, { attachHooks }, { loadMessages }, { Metrics }, { RunMonitor }] =
    await Promise.all([
      import("../../lib/agent.ts"),
      import("../../lib/app/service.ts"),
      import("../../lib/store/index.ts"),
      import("../../lib/hooks.ts"),
      import("../../lib/messages.ts"),
      import("../../lib/monitor/metrics.ts"),
      import("../../lib/monitor/monitor.ts"),
    ]);
  const messages = await loadMessages(config.lang, { logger });
  // The one registry of what this run did: fed by the HTTP client and the scheduler, read by `hub-agent status`,
  // the status page and /metrics (docs/monitoring.md).
  const metrics = new Metrics(clock);
  const { describeCredentialProblem } = await import("../../lib/api/credentials.ts");
  const { api, guard } = await serviceApi(config, {
    clock,
    logger: logger.withTag("api"),
    onRequest: metrics.request,
    // `run --once` exits 3 on it; `run` keeps enforcing from its cache and says so once, and once more when it ends.
    watched: (opts.once && opts.invocation?.guards) || null,
    onChange: (problem, previous) => {
      if (problem)
        logger.error(
          `${describeCredentialProblem(problem, config.api.server_id)}; until then bans are enforced from the cached ban list` +
            (problem.kind === "key_refused"
              ? ", queued entries wait, and the service is asked again with growing pauses (at most 30 min)"
              : ""),
        );
      else if (previous?.kind === "key_refused") logger.info("the service accepts the API key again");
      else logger.info(`the service knows server ${config.api.server_id} again`);
    },
  });
  const store = await openStore({ dir: config.storage.dir, logger, clock, reportWriteErrors: true });
  const features = unlocked ? (await import("../../lib/features/index.ts")).FEATURES_WITHOUT_INSTANCE : undefined;
  const agent = new Agent({
    config,
    api,
    store,
    bridge,
    clock,
    logger,
    messages,
    once: opts.once,
    features,
    jobs: metrics,
    ...(opts.pace ? { pace: opts.pace } : {}),
    servicePaused: () => guard.problem()?.kind === "key_refused" && guard.waitMs() > 0,
  });
  attachHooks(agent.events, config.hooks, logger.withTag("hooks"));
  const monitor = new RunMonitor({
    store,
    clock,
    logger,
    metrics,
    mode: opts.once ? "once" : "run",
    unlocked,
    bridge: { kind: config.game.bridge, health: bridge.health?.bind(bridge) },
    players: () => agent.players.values(),
    startedAt: opts.startedAt, // the run's uptime goes on across reloads
  });
  agent.events.on("hub_ready", ({ source }) => monitor.ready(source));
  monitor.start();
  const listener = opts.once ? undefined : await listenHttp(config, monitor, logger);
  try {
    const code = await serveAgent(opts, agent, monitor, metrics).catch((e: unknown) => {
      // `run --once` could not start: a refused key or unknown server id is the reason to name (exit 3).
      if (opts.once && guard.problem() && e instanceof CliError && e.code === EXIT.UNREACHABLE) return EXIT.CONFIG;
      throw e;
    });
    const problem = opts.once ? guard.problem() : undefined;
    if (problem) throw new CliError(describeCredentialProblem(problem, config.api.server_id), EXIT.CONFIG);
    return code;
  } finally {
    await listener?.stop();
    await monitor.stop();
  }
}

/** `[http] listen`: the status page and metrics. A port in use is logged, not fatal: enforcement goes on. */
async function listenHttp(config: Config, monitor: RunMonitor, logger: Logger): Promise<MonitorListener | undefined> {
  const text = config.http.listen;
  if (!text) return undefined;
  const [{ parseListen }, { isLoopback }, { monitorHandler }, { listenMonitor }] = await Promise.all([
    import("../../lib/config/listen.ts"),
    import("../../lib/loopback.ts"),
    import("../../lib/monitor/http.ts"),
    import("../../lib/monitor/listen.ts"),
  ]);
  const at = parseListen(text);
  if (!at) return undefined; // the configuration was validated
  try {
    const listener = listenMonitor(at, monitorHandler(monitor, { anyHost: !isLoopback(at.hostname) }));
    monitor.listening({ url: listener.url, error: null });
    logger.info(`status page on ${listener.url} (metrics: ${listener.url}metrics)`);
    return listener;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === "EADDRINUSE" ? "the port is in use: pick another" : (e as Error).message;
    monitor.listening({ url: null, error: why });
    logger.error(`http.listen = "${text}": ${why}; running without the status page and /metrics`);
    return undefined;
  }
}

async function serveAgent(
  opts: ServeOptions,
  agent: Agent,
  monitor: RunMonitor,
  metrics: Metrics,
): Promise<number | { reload: Config }> {
  const { config, bridge, logger, clock } = opts;
  let stopping: Promise<void> | undefined;
  let stopped!: () => void;
  const done = new Promise<void>((resolve) => (stopped = resolve));
  const stop = (why: string) => {
    stopping ??= (async () => {
      monitor.stopping();
      logger.info(`stopping (${why}): finishing work in flight`);
      // At most STOP_BUDGET_MS of hub-agent's own work, whatever the game's console does (lib/shutdown.ts).
      const { stopWithin, STOP_BUDGET_MS } = await import("../../lib/shutdown.ts");
      const { abandoned } = await stopWithin({ clock, agent, bridge });
      if (abandoned)
        logger.info(
          `work still in flight after ${STOP_BUDGET_MS / 1000} s was left; what was not delivered stays queued for the next run`,
        );
      stopped();
    })();
    return stopping;
  };
  // SIGHUP (`run`): the configuration read again; what can change live is applied by serving a new agent once this
  // one has stopped whole (not on the shutdown's budget: two agents on one store would both run `once` rewards).
  let reloadTo: Config | undefined;
  const hangup = async () => {
    if (stopping || reloadTo) return logger.info(`SIGHUP: ignored, ${stopping ? "stopping" : "a reload is under way"}`);
    const next = await reloadable(opts.reread!, config, logger);
    if (!next || stopping || reloadTo) return;
    reloadTo = next;
    const whole = agent.stop();
    const { within } = await import("../../lib/clock.ts");
    if (!(await within(clock, whole, RELOAD_NOTICE_MS))) {
      // A job waiting on the game (a wrapped server not ready yet) or the service holds the reload up, not a stop.
      const busy = [...metrics.jobs.values()].filter((j) => j.running > 0).map((j) => j.name);
      logger.warn(
        `SIGHUP: the agent starts again once its work in flight has finished (${busy.join(", ") || "event handlers"}); SIGINT/SIGTERM still stop at once`,
      );
      await whole;
    }
    stopped();
  };
  // A wrapped server gone for good ends `run` too: with a non-zero exit when it went on its own (so a process
  // manager restarts the pair, or tells someone), cleanly when the operator typed its stop command.
  let ended: GameEnd | undefined;
  const offEnd = bridge.onEnd?.((end) => {
    if (stopping) return; // our own stop
    ended = end;
    void stop(end.requested ? "the server was stopped from its console" : end.reason);
  });
  const release = opts.signals.serve({
    stop: (why) => void stop(why),
    ...(opts.reread
      ? {
          hangup: () =>
            void (opts.once ? reloadable(opts.reread!, config, logger, false) : hangup()).catch((e: unknown) =>
              logger.warn(`SIGHUP: the reload failed, the running configuration stays: ${(e as Error).message}`),
            ),
        }
      : {}),
  });
  void opts.until?.then(() => stop("time is up"));
  const serve: Serving = {
    opts,
    agent,
    metrics,
    done,
    stop,
    stopping: () => stopping,
    reloadTo: () => reloadTo,
    ended: () => ended,
  };
  try {
    return await serving(serve);
  } finally {
    release();
    offEnd?.();
  }
}

/** One serve of an agent, as serveAgent keeps it: how it stops, a reload asked for, how the game ended. */
interface Serving {
  opts: ServeOptions;
  agent: Agent;
  metrics: Metrics;
  /** Settles when the agent has stopped (a signal, the game's end, a reload). */
  done: Promise<void>;
  stop(why: string): Promise<void>;
  stopping(): Promise<void> | undefined;
  reloadTo(): Config | undefined;
  ended(): GameEnd | undefined;
}

/** Starts the game's side and the agent, then waits: one round and out (`--once`), or until stopped. */
async function serving(s: Serving): Promise<number | { reload: Config }> {
  const { opts, agent, metrics, done } = s;
  const { bridge, logger, clock, config } = opts;
  const store = agent.deps.store;
  // A stop while starting (the game or the service not answering yet) ends the wait at once.
  const halted = done.then(() => false as const);
  const { queueStatus } = await import("../../lib/queues.ts");
  const before = opts.once ? await queueStatus(store, clock.now()) : [];
  let source: "api" | "cache" | undefined;
  agent.events.on("hub_ready", (e) => void (source = e.source));
  try {
    // A signal that came before the start (while the instance lock was taken): the game is never started.
    if (!s.stopping()) await Promise.race([bridge.start(), halted]);
  } catch (e) {
    // The game's side can't start at all (the plugin's port in use): one line, nothing else to stop yet but it.
    await bridge.stop().catch(() => {});
    throw new CliError((e as Error).message, EXIT.FAILURE);
  }
  const started = !s.stopping() && (await Promise.race([agent.start(), halted]));
  if (opts.once) {
    if (started) await Promise.race([agent.runOnce(), halted]);
    await s.stop("one round done");
    const after = await queueStatus(store, clock.now());
    if (opts.onceReport) {
      const { onceSummary } = await import("../../lib/monitor/once.ts");
      opts.onceReport(onceSummary({ source, metrics, jobNames: agent.jobNames, before, after }));
    }
    if (!started && !opts.signals.signalled)
      throw new CliError("the service is unreachable and no usable cached server record exists", EXIT.UNREACHABLE);
    // Cron reads the exit code: 6 while anything queued still waits for the service.
    const waiting = after.filter((q) => q.waiting > 0);
    if (!waiting.length) return EXIT.OK;
    const list = waiting.map((q) => `${q.queue}: ${q.waiting}`).join(", ");
    logger.warn(`not everything queued was delivered (${list}); see hub-agent queue status`);
    return EXIT.QUEUED;
  }
  if (started) logger.info("ready");
  await done;
  const reloadTo = s.reloadTo();
  if (reloadTo && !s.stopping()) return { reload: reloadTo };
  await s.stopping();
  logger.info("stopped");
  const ended = s.ended();
  if (ended && !ended.requested) {
    const why = config.game.wrapper.restart ? "it kept crashing: restarts given up" : "game.wrapper.restart is off";
    throw new CliError(`${ended.reason.replace(/^the server/, "the game server")} (${why})`, EXIT.FAILURE);
  }
  return EXIT.OK;
}

/** How long a reload waits for work in flight before it says what it waits for. */
const RELOAD_NOTICE_MS = 5_000;

/**
 * Keys the game bridge was built from (lib/game/index.ts createBridge) and the store's place: a reload keeps their
 * running values, since changing them means a new bridge (a wrapped server restarted) or another store.
 */
const RESTART_ONLY = [/^game\./, /^storage\./, /^intervals\.player_poll$/, /^commands\.(ban|unban|warn|warns)$/];

/**
 * SIGHUP: the configuration read and checked again, told in one line: not valid (the running one stays), unchanged,
 * or what is applied and what only a restart applies. Returns the configuration to serve next (the new one with the
 * restart-only keys as they run), or undefined; `apply` false (`run --once`) only checks.
 */
async function reloadable(
  reread: () => Promise<LoadResult>,
  running: Config,
  logger: Logger,
  apply = true,
): Promise<Config | undefined> {
  const result = await reread().catch((e: unknown) => ({ ok: false as const, problems: [String(e)], file: undefined }));
  const where = result.file ?? "the environment";
  if (!result.ok) {
    // A TOML error's excerpt (`| line`, `| caret`) is part of its problem, not more problems.
    const count = result.problems.filter((p) => !p.startsWith("| ")).length;
    const more = count > 1 ? ` (and ${count - 1} more: see hub-agent doctor)` : "";
    logger.warn(`SIGHUP: ${where} is not valid, the running configuration stays: ${result.problems[0]}${more}`);
    return undefined;
  }
  const { changedKeys } = await import("../../lib/config/changes.ts");
  const changed = changedKeys(running, result.config);
  if (!changed.length) {
    logger.info(`SIGHUP: ${where} is valid and unchanged`);
    return undefined;
  }
  const list = (keys: string[]) =>
    keys.length > 8 ? `${keys.slice(0, 8).join(", ")} and ${keys.length - 8} more` : keys.join(", ");
  const later = changed.filter((k) => RESTART_ONLY.some((re) => re.test(k)));
  const now = apply ? changed.filter((k) => !later.includes(k)) : [];
  const restart = (keys: string[]) => `${list(keys)} apply only at a restart (systemctl restart hub-agent)`;
  if (!now.length) {
    logger.warn(`SIGHUP: ${where} is valid; the running configuration stays: ${restart(apply ? later : changed)}`);
    return undefined;
  }
  logger.info(
    `SIGHUP: ${where} is valid; applying ${list(now)} (the agent starts again, the game bridge keeps running)` +
      (later.length ? `; ${restart(later)}` : ""),
  );
  const c = result.config;
  const { ban, unban, warn, warns } = running.commands;
  return {
    ...c,
    game: running.game,
    storage: running.storage,
    intervals: { ...c.intervals, player_poll: running.intervals.player_poll },
    commands: { ...c.commands, ban, unban, warn, warns },
  };
}
