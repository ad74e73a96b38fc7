import type { Clock } from "./clock.ts";
import type { Logger } from "./log.ts";

export interface JobOptions {
  /** Run once right away instead of after the first interval. */
  immediate?: boolean;
  /** Measure the interval from the start of one run to the start of the next (a run that spreads its work over
   * the interval keeps the cadence); by default the wait starts when a run ends. */
  fixedRate?: boolean;
  /** While this says true the job's turns are skipped (not run, not counted): the service refuses the API key. */
  paused?: () => boolean;
}

/** Watches the periodic jobs (`run`'s metrics registry, lib/monitor/metrics.ts). */
export interface JobObserver {
  /** A job was registered to run every `intervalMs`. */
  schedule(name: string, intervalMs: number): void;
  /** Runs one run of job `name`, settling as it does. */
  track<R>(name: string, run: () => Promise<R>): Promise<R>;
}

/**
 * Periodic jobs on an injected clock. A job never overlaps itself (the next wait starts when a run ends),
 * each wait gets a small random jitter so many agents do not hit the service in lockstep, and stop() waits for
 * runs in flight so their writes complete. Waits are monotonic time of any length: the clock chains timers past
 * setTimeout's 24.8-day limit instead of letting one overflow and fire at once.
 */
export class Scheduler {
  private abort = new AbortController();
  private running = new Set<Promise<unknown>>();
  private loops: Promise<void>[] = [];

  constructor(
    private clock: Clock,
    private logger: Logger,
    /** Fraction of the interval added at random to each wait (0 in tests for exact cadence). */
    private jitter = 0.02,
    private random: () => number = Math.random,
    private observer?: JobObserver,
  ) {}

  /** Runs `job` every `intervalMs` until stop(), or until the job returns "done". */
  every(name: string, intervalMs: number, job: () => Promise<void | "done">, opts: JobOptions = {}): void {
    const signal = this.abort.signal;
    this.observer?.schedule(name, intervalMs);
    const loop = async () => {
      let first = true;
      let ran = 0;
      while (!signal.aborted) {
        if (!(first && opts.immediate)) {
          const wait = intervalMs * (1 + this.jitter * this.random()) - (opts.fixedRate ? ran : 0);
          try {
            await this.clock.sleep(Math.max(0, wait), signal);
          } catch {
            return; // stopped
          }
        }
        first = false;
        if (opts.paused?.()) continue;
        const started = this.clock.monotonic();
        if ((await this.runJob(name, job)) === "done") return;
        ran = this.clock.monotonic() - started;
      }
    };
    this.loops.push(loop());
  }

  /** Runs a job once now (tracked, so stop() waits for it); errors are logged, never thrown. */
  async run<R>(name: string, job: () => Promise<R>): Promise<R | undefined> {
    const p = job().catch((e: unknown) => {
      // A store write failure was logged by the store once; repeating it every round would bury the log. A run cut
      // short by stop() (its console closed, its request abandoned) is no error either: the next start redoes it.
      const quiet = (e as { reported?: boolean })?.reported || this.abort.signal.aborted;
      this.logger[quiet ? "debug" : "error"](
        `${name} failed${this.stopped ? " while stopping" : ""}: ${(e as Error)?.message ?? e}`,
      );
      return undefined;
    });
    this.running.add(p);
    try {
      return await p;
    } finally {
      this.running.delete(p);
    }
  }

  /** One run of the periodic job `name` (as `every` does, and `run --once`): tracked like run(), and observed. */
  runJob<R>(name: string, job: () => Promise<R>): Promise<R | undefined> {
    const observer = this.observer;
    return this.run(name, observer ? () => observer.track(name, job) : job);
  }

  /** Runs in flight (tests wait for 0 before moving a manual clock). */
  get busy(): number {
    return this.running.size;
  }

  get stopped(): boolean {
    return this.abort.signal.aborted;
  }

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  /** Stops every timer and waits for the runs in flight. */
  async stop(): Promise<void> {
    this.abort.abort(new Error("scheduler stopped"));
    await Promise.all(this.running);
    await Promise.all(this.loops);
  }
}
