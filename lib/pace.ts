import type { Clock } from "./clock.ts";
import { refill, type Bucket } from "./token-bucket.ts";

/**
 * The requests made once per player (user lookups, group lookups, a connect's reward refresh, playtime reports) and
 * the chunks of a reward round start at most this many a second, `PER_PLAYER_BURST` at once: a restart next to a full
 * server, or a round over 5,000 players, then stays under the service's rate limit instead of bursting into 429s.
 * 5,000 players' group sync alone needs 17 a second at the spec's 5-minute interval.
 */
export const PER_PLAYER_RATE = 30;
export const PER_PLAYER_BURST = 60;

export interface PaceOptions {
  perSecond: number;
  burst?: number;
}

/** A token bucket (lib/token-bucket.ts) on the injected clock's monotonic time, served in call order. */
export class Pace {
  perSecond: number;
  burst: number;
  private bucket: Bucket;
  private limit: { burst: number; refillMs: number };
  private tail: Promise<void> = Promise.resolve();
  /** Callers waiting for their turn (tests read it). */
  waiting = 0;

  constructor(
    private clock: Clock,
    o: PaceOptions = { perSecond: PER_PLAYER_RATE, burst: PER_PLAYER_BURST },
  ) {
    if (!(o.perSecond > 0)) throw new Error(`pace: perSecond must be above 0, got ${o.perSecond}`);
    this.perSecond = o.perSecond;
    this.burst = Math.max(1, o.burst ?? o.perSecond);
    this.limit = { burst: this.burst, refillMs: 1000 / this.perSecond };
    this.bucket = { tokens: this.burst, at: clock.monotonic() };
  }

  /** A new rate from now on (tokens saved up so far are kept, up to the new burst). */
  setRate(o: PaceOptions): void {
    refill(this.bucket, this.clock.monotonic(), this.limit);
    this.perSecond = o.perSecond;
    this.burst = Math.max(1, o.burst ?? o.perSecond);
    this.limit = { burst: this.burst, refillMs: 1000 / this.perSecond };
    this.bucket.tokens = Math.min(this.bucket.tokens, this.burst);
  }

  /** One request starts now without waiting: those that wait after it wait that much longer (a debt of a token). */
  debit(): void {
    refill(this.bucket, this.clock.monotonic(), this.limit);
    this.bucket.tokens -= 1;
  }

  /** Resolves when one request may start; rejects with the signal's reason when it aborts first. */
  take(signal?: AbortSignal): Promise<void> {
    this.waiting++;
    const turn = this.tail.then(() => this.next(signal));
    this.tail = turn.catch(() => {});
    return turn.finally(() => this.waiting--);
  }

  private async next(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    // Again after each wait: a debit meanwhile (a request that could not wait) makes this one wait longer. A thousandth
    // of a token is a timer's rounding, not a reason to wait once more.
    for (let tokens; (tokens = refill(this.bucket, this.clock.monotonic(), this.limit)) < 0.999;)
      await this.clock.sleep((1 - tokens) * this.limit.refillMs, signal);
    this.bucket.tokens -= 1;
  }
}

/** After a 429, a learned pace allows this share of the rate that was refused… */
export const LEARNED_SHARE = 0.85;
/** …growing by this share of it a second while no 429 comes, up to LEARNED_CAP of it… */
export const LEARNED_GROWTH = 0.005;
export const LEARNED_CAP = 0.9;
/** …and past that ten times slower, so that a limit raised meanwhile is found again. */
const PROBE_GROWTH = LEARNED_GROWTH / 10;
/** A rate learned from less than a second of starts is a floor: it grows this much a second until the next 429. */
const PROVISIONAL_GROWTH = 1.05;

/**
 * A pace learned from the service's 429s, for a long run of requests such as a backlog's drain: none until the first
 * 429; then LEARNED_SHARE of the rate that was refused (unpaced: the starts in the second before it; paced: the pace
 * itself, or the starts in the second before it when fewer, down to LEARNED_SHARE of it), growing slowly to LEARNED_CAP of it, then more slowly still. Another 429 learns again (a limit shared
 * with others that now take more). The service's limit is then met about once a minute or two instead of once a
 * window, so requests outside the pace (a sanction typed meanwhile) find the service open instead of waiting out a
 * pause. A 429 within the first second of starts says little about the rate (the window may have been used up by
 * others): that rate grows by a twentieth a second until a 429 says where the limit is.
 */
export class LearnedPace {
  private pace?: Pace;
  /** Monotonic times of the starts in the last second. */
  private starts: number[] = [];
  private firstStart?: number;
  private refusedAt = -Infinity;
  /** The rate that was refused. */
  private ceiling = 0;
  private provisional = false;
  private grownAt = 0;

  constructor(private clock: Clock) {}

  /** The current rate (starts a second), or undefined while unpaced. */
  get perSecond(): number | undefined {
    return this.pace?.perSecond;
  }

  /** Resolves when one more may start; rejects with the signal's reason when it aborts first. */
  async take(signal?: AbortSignal): Promise<void> {
    if (this.pace) {
      this.grow();
      await this.pace.take(signal);
    }
    this.started();
  }

  /**
   * One that must not wait (a sanction typed meanwhile, its player kicked and the operator waiting) starts now, in
   * the pace's place: counted, and the paced ones after it make room, so the rate the service sees stays the pace
   * instead of the pace plus it. On top of the pace it met the limit it was learned from, and a 429 paused it too.
   */
  jump(): void {
    this.pace?.debit();
    this.started();
  }

  private started(): void {
    const now = this.clock.monotonic();
    this.firstStart ??= now;
    this.starts.push(now);
    while ((this.starts[0] as number) <= now - 1000) this.starts.shift();
  }

  /** A 429 came. Those that follow it within a second (the other requests then in flight) say nothing new. */
  refused(): void {
    const now = this.clock.monotonic();
    if (now - this.refusedAt < 1000) return;
    this.refusedAt = now;
    const started = this.starts.filter((t) => t > now - 1000).length;
    if (this.pace) {
      // The pace was too much. Fewer starts than it allows in the last second (a pause for the last 429 in it, or
      // workers slower than the pace) are what went through: nearer the limit, so an overshoot is corrected in one
      // or two 429s instead of one a second for several. At most LEARNED_SHARE less at once: the second may have
      // held a long pause, or others may have used the window, and a learned ceiling also sets how fast it grows.
      const pace = this.pace.perSecond;
      this.ceiling = Math.min(pace, Math.max(started, pace * LEARNED_SHARE));
      this.provisional = false;
    } else {
      this.ceiling = Math.max(1, started);
      this.provisional = now - (this.firstStart ?? now) < 1000;
    }
    const o = LearnedPace.options(this.ceiling * LEARNED_SHARE);
    if (this.pace) this.pace.setRate(o);
    else this.pace = new Pace(this.clock, o);
    this.grownAt = now;
  }

  /** One at a time: a burst would go past the limit in a window the rate fits in. */
  private static options(rate: number) {
    return { perSecond: Math.max(1, rate), burst: 1 };
  }

  private grow(): void {
    const now = this.clock.monotonic();
    const pace = this.pace as Pace;
    const seconds = Math.floor((now - this.grownAt) / 1000);
    if (seconds < 1) return;
    this.grownAt += seconds * 1000;
    const cap = this.ceiling * LEARNED_CAP;
    let rate: number;
    if (this.provisional) rate = pace.perSecond * PROVISIONAL_GROWTH ** Math.min(seconds, 60);
    else if (pace.perSecond < cap) rate = Math.min(cap, pace.perSecond + LEARNED_GROWTH * this.ceiling * seconds);
    else rate = pace.perSecond + PROBE_GROWTH * this.ceiling * seconds;
    pace.setRate(LearnedPace.options(rate));
  }
}
