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
  readonly perSecond: number;
  readonly burst: number;
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

  /** Resolves when one request may start; rejects with the signal's reason when it aborts first. */
  take(signal?: AbortSignal): Promise<void> {
    this.waiting++;
    const turn = this.tail.then(() => this.next(signal));
    this.tail = turn.catch(() => {});
    return turn.finally(() => this.waiting--);
  }

  private async next(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    const tokens = refill(this.bucket, this.clock.monotonic(), this.limit);
    if (tokens < 1) {
      await this.clock.sleep((1 - tokens) * this.limit.refillMs, signal);
      refill(this.bucket, this.clock.monotonic(), this.limit);
    }
    this.bucket.tokens = Math.max(0, this.bucket.tokens - 1);
  }
}
