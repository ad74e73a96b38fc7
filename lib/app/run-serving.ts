/**
 * One agent served (lib/app/run-serve.ts composes it): the game's side and the agent started, then one round and out
 * (`--once`) or until stopped; a stop on its budget (lib/shutdown.ts); a reload (SIGHUP) asked for; a wrapped server
 * that ended on its own.
 */
import type { Agent } from "../agent.ts";
import { within } from "../clock.ts";
import type { GameEnd } from "../game/bridge.ts";
import type { Metrics } from "../monitor/metrics.ts";
import type { RunMonitor } from "../monitor/monitor.ts";
import { onceSummary, type OnceSummary } from "../monitor/once.ts";
import { queueStatus, type QueueSummary } from "../queues.ts";
import { STOP_BUDGET_MS, stopWithin } from "../shutdown.ts";
import type { Logger } from "../log.ts";
import type { Config } from "./config.ts";
import { reloadable } from "./run-reload.ts";
import type { RunAgentOptions, RunOutcome } from "./run-types.ts";

export type ServeOptions = RunAgentOptions & {
  /** Running without the instance lock (a full or read-only disk): the features that need it stay off. */
  unlocked: boolean;
  /** When the run started: its uptime goes on across reloads. */
  startedAt: number;
};

/** What serving one agent ended with: the run's outcome, or a reload to serve the next agent with. */
export type Served = RunOutcome | { kind: "reload"; config: Config };

/** How long a reload waits for work in flight before it says what it waits for. */
const RELOAD_NOTICE_MS = 5_000;

export class Serving {
  #stopping: Promise<void> | undefined;
  #reloadTo: Config | undefined;
  #ended: GameEnd | undefined;
  #source: "api" | "cache" | undefined;
  #stopped!: () => void;
  /** Settles when the agent has stopped (a stop, the game's end, a reload). */
  readonly #done = new Promise<void>((resolve) => (this.#stopped = resolve));
  /** A stop while starting (the game or the service not answering yet) ends the wait at once. */
  readonly #halted = this.#done.then(() => false as const);

  constructor(
    private o: ServeOptions,
    private agent: Agent,
    private monitor: RunMonitor,
    private metrics: Metrics,
  ) {}

  async serve(): Promise<Served> {
    const { bridge, control, once, reread, config, logger } = this.o;
    // A wrapped server gone for good ends `run` too: with a non-zero exit when it went on its own (so a process
    // manager restarts the pair, or tells someone), cleanly when the operator typed its stop command.
    const offEnd = bridge.onEnd?.((end) => {
      if (this.#stopping) return; // our own stop
      this.#ended = end;
      void this.stop(end.requested ? "the server was stopped from its console" : end.reason);
    });
    const release = control.serve({
      stop: (why) => void this.stop(why),
      ...(reread
        ? {
            hangup: () =>
              void (once ? reloadable(reread, config, logger, false) : this.#hangup(reread)).catch((e: unknown) =>
                logger.warn(`SIGHUP: the reload failed, the running configuration stays: ${(e as Error).message}`),
              ),
          }
        : {}),
    });
    void this.o.until?.then(() => this.stop("time is up"));
    try {
      return await this.#serve();
    } finally {
      release();
      offEnd?.();
    }
  }

  /** Stops the agent and the game bridge: at most STOP_BUDGET_MS of hub-agent's own work (lib/shutdown.ts). */
  stop(why: string): Promise<void> {
    this.#stopping ??= (async () => {
      const { clock, bridge, logger } = this.o;
      this.monitor.stopping();
      logger.info(`stopping (${why}): finishing work in flight`);
      await Promise.resolve(); // known as stopping before the agent and the game's side are told
      const { abandoned } = await stopWithin({ clock, agent: this.agent, bridge });
      if (abandoned)
        logger.info(
          `work still in flight after ${STOP_BUDGET_MS / 1000} s was left; what was not delivered stays queued for the next run`,
        );
      this.#stopped();
    })();
    return this.#stopping;
  }

  /**
   * SIGHUP (`run`): what can change live is applied by serving a new agent once this one has stopped whole (not on
   * the shutdown's budget: two agents on one store would both run `once` rewards).
   */
  async #hangup(reread: NonNullable<RunAgentOptions["reread"]>): Promise<void> {
    const { config, logger, clock } = this.o;
    if (this.#stopping || this.#reloadTo)
      return logger.info(`SIGHUP: ignored, ${this.#stopping ? "stopping" : "a reload is under way"}`);
    const next = await reloadable(reread, config, logger);
    if (!next || this.#stopping || this.#reloadTo) return;
    this.#reloadTo = next;
    const whole = this.agent.stop();
    if (!(await within(clock, whole, RELOAD_NOTICE_MS))) {
      // A job waiting on the game (a wrapped server not ready yet) or the service holds the reload up, not a stop.
      const busy = [...this.metrics.jobs.values()].filter((j) => j.running > 0).map((j) => j.name);
      logger.warn(
        `SIGHUP: the agent starts again once its work in flight has finished (${busy.join(", ") || "event handlers"}); SIGINT/SIGTERM still stop at once`,
      );
      await whole;
    }
    this.#stopped();
  }

  /** Starts the game's side and the agent, then waits: one round and out (`--once`), or until stopped. */
  async #serve(): Promise<Served> {
    const { bridge, logger, clock, config, once } = this.o;
    const before = once ? await queueStatus(this.agent.deps.store, clock.now()) : [];
    this.agent.events.on("hub_ready", (e) => void (this.#source = e.source));
    try {
      // A stop that came before the start (while the instance lock was taken): the game is never started.
      if (!this.#stopping) await Promise.race([bridge.start(), this.#halted]);
    } catch (e) {
      // The game's side can't start at all (the plugin's port in use): one line, nothing else to stop yet but it.
      await bridge.stop().catch(() => {});
      return { kind: "failed", line: (e as Error).message };
    }
    const started = !this.#stopping && (await Promise.race([this.agent.start(), this.#halted]));
    if (once) return this.#once(started, before);
    if (started) logger.info("ready");
    await this.#done;
    if (this.#reloadTo && !this.#stopping) return { kind: "reload", config: this.#reloadTo };
    await this.#stopping;
    logger.info("stopped");
    const ended = this.#ended;
    if (!ended || ended.requested) return { kind: "stopped" };
    const why = config.game.wrapper.restart ? "it kept crashing: restarts given up" : "game.wrapper.restart is off";
    return { kind: "failed", line: `${ended.reason.replace(/^the server/, "the game server")} (${why})` };
  }

  /** `--once`: one round of every periodic job, then the stop, and what the round did. */
  async #once(started: boolean, before: QueueSummary[]): Promise<RunOutcome> {
    const { clock, logger, control } = this.o;
    if (started) await Promise.race([this.agent.runOnce(), this.#halted]);
    await this.stop("one round done");
    const after = await queueStatus(this.agent.deps.store, clock.now());
    const { metrics, agent } = this;
    const summary = onceSummary({ source: this.#source, metrics, jobNames: agent.jobNames, before, after });
    if (!started && !control.signalled)
      return {
        kind: "unreachable",
        line: "the service is unreachable and no usable cached server record exists",
        summary,
      };
    return onceOutcome(summary, after, logger);
  }
}

/**
 * What cron reads from a round that started: `unreachable` (4) when jobs failed or entries wait while the service
 * does not answer, `failed` (1) when jobs failed otherwise, `queued` (6) while anything queued still waits.
 */
export function onceOutcome(summary: OnceSummary, after: QueueSummary[], logger: Logger): RunOutcome {
  const waiting = after.filter((q) => q.waiting > 0);
  const queued = waiting.map((q) => `${q.queue}: ${q.waiting}`).join(", ");
  const failed = summary.failed_jobs;
  const down = summary.service.reachable === false;
  if (failed.length || (down && waiting.length)) {
    const jobs = failed.length
      ? `${failed.length} of ${summary.jobs.length} jobs failed (${failed.join(", ")})`
      : "nothing was delivered";
    const left = waiting.length ? `; still queued (${queued}), sent by the next round` : "";
    const line = down
      ? `the service did not answer (${summary.service.last_error ?? "no answer"}): ${jobs}${left}`
      : `${jobs}: see the log above${left}`;
    return { kind: down ? "unreachable" : "failed", line, summary };
  }
  if (waiting.length) logger.warn(`not everything queued was delivered (${queued}); see hub-agent queue status`);
  return { kind: "once", summary, waiting: waiting.reduce((n, q) => n + q.waiting, 0) };
}
