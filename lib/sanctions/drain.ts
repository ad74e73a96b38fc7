/**
 * How a delivery round of `run` is getting on: entries left, the rate they are settled at, and when the queues will
 * be empty at that rate. After an outage a round may have thousands of bans to deliver at the rate the service
 * allows; `run` logs this every PROGRESS_LOG_MS during such a round and keeps it in the cache "sanctions_drain"
 * (every PROGRESS_SAVE_MS), which `hub-agent status` and the status page show (lib/monitor/status.ts).
 */
import * as v from "valibot";
import type { Logger } from "../log.ts";
import type { Store } from "../store/index.ts";

export const DRAIN_CACHE = "sanctions_drain";
/** A round with at least this many entries is logged as it goes. */
export const LOGGED_ROUND = 100;
export const PROGRESS_LOG_MS = 10_000;
/** How often the cache is brought up to date during such a round (what `status` reads). */
export const PROGRESS_SAVE_MS = 2_000;
/** The rate is measured over this much of the recent past. */
const RATE_WINDOW_MS = 10_000;

const count = v.pipe(v.number(), v.integer(), v.minValue(0));

export const DrainSchema = v.object({
  pid: count,
  /** running: a round is delivering; done: the last round ended (`left` is what it left queued). */
  state: v.picklist(["running", "done"]),
  started_at: v.string(),
  updated_at: v.string(),
  /** Entries the round found, and those added while it ran (sanctions issued meanwhile). */
  total: count,
  /** Delivered, refused, cancelled or not found: gone from the queues. */
  settled: count,
  /** Still queued: not reached yet, or kept (the service did not answer). */
  left: count,
  /** Entries settled per second over the last ten seconds (the whole round once it is done). */
  rate_per_s: v.number(),
  /** At that rate, seconds until the round has been through every entry; null when nothing is settling. */
  eta_s: v.nullable(v.number()),
  /** The service asked to wait (429) until this time, or null. */
  paused_until: v.nullable(v.string()),
  /** Why the round ended before reaching every entry, when it did. */
  ended_early: v.nullable(v.string()),
});
export type Drain = v.InferOutput<typeof DrainSchema>;

export const drainCache = (store: Store) => store.cache(DRAIN_CACHE, DrainSchema);

/** Counts one round as it goes (monotonic time for the rate, wall time for what is shown). */
export class DrainTracker {
  private total = 0;
  private settled = 0;
  private reached = 0;
  private recent: number[] = [];
  private readonly started = performance.now();
  private readonly startedAt: number;
  private pausedUntil?: number;
  private endedEarly?: string;

  constructor(
    private readonly wallNow: () => number,
    private readonly pid = process.pid,
  ) {
    this.startedAt = wallNow();
  }

  listed(n: number): void {
    this.total += n;
  }

  /** One entry went through the round: settled (gone from the queue) or kept. */
  outcome(settled: boolean): void {
    this.reached++;
    if (!settled) return;
    this.settled++;
    this.recent.push(performance.now());
  }

  paused(ms: number): void {
    this.pausedUntil = this.wallNow() + ms;
  }

  ended(why: string): void {
    this.endedEarly = why;
  }

  get size(): number {
    return this.total;
  }

  snapshot(state: Drain["state"]): Drain {
    const now = performance.now();
    const elapsed = now - this.started;
    let rate: number;
    if (state === "done") rate = elapsed > 0 ? (this.settled * 1000) / elapsed : 0;
    else {
      this.recent = this.recent.filter((t) => now - t <= RATE_WINDOW_MS);
      rate = (this.recent.length * 1000) / Math.min(RATE_WINDOW_MS, Math.max(elapsed, 1));
    }
    const wall = this.wallNow();
    const toGo = Math.max(0, this.total - this.reached);
    return {
      pid: this.pid,
      state,
      started_at: new Date(this.startedAt).toISOString(),
      updated_at: new Date(wall).toISOString(),
      total: this.total,
      settled: this.settled,
      left: Math.max(0, this.total - this.settled),
      rate_per_s: Math.round(rate * 10) / 10,
      eta_s: state === "done" ? 0 : rate > 0 ? Math.ceil(toGo / rate) : null,
      paused_until:
        this.pausedUntil !== undefined && this.pausedUntil > wall ? new Date(this.pausedUntil).toISOString() : null,
      ended_early: this.endedEarly ?? null,
    };
  }
}

/** `1h 2m`, `3m 4s`, `12 s`: a duration for people. */
export function formatSeconds(s: number): string {
  const t = Math.max(0, Math.round(s));
  if (t < 60) return `${t} s`;
  const [h, m, sec] = [Math.floor(t / 3600), Math.floor((t % 3600) / 60), t % 60];
  return h ? `${h}h ${m}m` : `${m}m ${sec}s`;
}

/** The log line (and status line) of a round in progress or done. */
export function drainLine(d: Drain): string {
  const settled = `${d.settled.toLocaleString("en-US")} of ${d.total.toLocaleString("en-US")} settled`;
  if (d.state === "done")
    return `${settled} in ${formatSeconds((Date.parse(d.updated_at) - Date.parse(d.started_at)) / 1000)} (${d.rate_per_s}/s)${d.left ? `, ${d.left.toLocaleString("en-US")} left queued` : ""}${d.ended_early ? `; ended early: ${d.ended_early}` : ""}`;
  const eta = d.eta_s === null ? "" : `, about ${formatSeconds(d.eta_s)} to go`;
  const paused = d.paused_until ? `; the service asked to wait until ${d.paused_until}` : "";
  return `${d.left.toLocaleString("en-US")} left, ${d.rate_per_s}/s (${settled})${eta}${paused}`;
}

/**
 * One round as `run` reports it: the tracker, a log line at the start of a round of LOGGED_ROUND entries or more,
 * every PROGRESS_LOG_MS and at its end, and the cache brought up to date every PROGRESS_SAVE_MS. `whole`: a round over
 * every queued entry (a round of a few urgent players is not announced, but logged if it grows long).
 */
export class DrainLog {
  readonly tracker: DrainTracker;
  private saved = performance.now();
  private shown = performance.now();
  private logged = false;

  constructor(private readonly o: { store: Store; log: Logger; now: () => number; whole: boolean }) {
    this.tracker = new DrainTracker(o.now);
  }

  listed(n: number): void {
    this.tracker.listed(n);
    if (this.o.whole && n >= LOGGED_ROUND && !this.logged) {
      this.logged = true;
      this.o.log.info(`delivering ${n.toLocaleString("en-US")} queued sanctions at the rate the service allows`);
      void this.save("running");
    }
  }

  outcome(settled: boolean): void {
    this.tracker.outcome(settled);
    const now = performance.now();
    if (this.tracker.size < LOGGED_ROUND || now - this.saved < PROGRESS_SAVE_MS) return;
    this.saved = now;
    void this.save("running");
    if (now - this.shown < PROGRESS_LOG_MS) return;
    this.shown = now;
    this.logged = true;
    this.o.log.info(`delivering the sanction queues: ${drainLine(this.tracker.snapshot("running"))}`);
  }

  /** The round ended: its last line and figures, if it was worth a line at all. */
  async done(): Promise<void> {
    if (!this.logged) return;
    this.o.log.info(`delivery round done: ${drainLine(this.tracker.snapshot("done"))}`);
    await this.save("done");
  }

  private save(state: Drain["state"]): Promise<void> {
    return drainCache(this.o.store)
      .set(this.tracker.snapshot(state))
      .catch((e: unknown) => this.o.log.debug(`the round's progress could not be saved: ${(e as Error).message}`));
  }
}
