/**
 * A token bucket that refills continuously: `burst` tokens at most, one more every `refillMs` of monotonic time.
 * The plugin link's shared hello budget and the chat command limit count with it.
 */
export interface Bucket {
  tokens: number;
  /** When `tokens` was last brought up to date (monotonic ms). */
  at: number;
}

/** Brings `b` up to `now` and returns its tokens (fractional). */
export function refill(b: Bucket, now: number, limit: { burst: number; refillMs: number }): number {
  b.tokens = Math.min(limit.burst, b.tokens + (now - b.at) / limit.refillMs);
  b.at = now;
  return b.tokens;
}
