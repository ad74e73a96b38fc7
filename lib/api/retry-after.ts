/**
 * Reading a 429's Retry-After (docs/service-api.md §1.5) into how long the endpoint's gate stays closed, bounded
 * whatever the service or a proxy sends. A pure function of the header and the time, tested as one (test/api).
 */

export const DEFAULT_RETRY_AFTER_MS = 60_000;
/** A broken or hostile Retry-After must not silence the agent for days. */
export const MAX_RETRY_AFTER_MS = 3_600_000;

/**
 * Retry-After as delay-seconds or an HTTP date; absent, unreadable, negative or a date already past → the default
 * (a past date is a skewed clock, not permission to hammer the service). `now` is the wall-clock time a date is read
 * against: the answer's Date header where it has one (the clock that wrote the date), else ours.
 */
export function parseRetryAfter(header: string | null, now: number, fallbackMs = DEFAULT_RETRY_AFTER_MS): number {
  const raw = header?.trim();
  if (!raw) return fallbackMs;
  let ms: number;
  if (/^\d+(\.\d+)?$/.test(raw)) ms = Number(raw) * 1000;
  else {
    // Date.parse reads "-5" as a year: a number that is not delay-seconds is unreadable, never a date.
    const at = /^[+-]?[\d.]+$/.test(raw) ? NaN : Date.parse(raw);
    if (Number.isNaN(at) || at <= now) return fallbackMs;
    ms = at - now;
  }
  return Math.min(Math.ceil(ms), MAX_RETRY_AFTER_MS);
}
