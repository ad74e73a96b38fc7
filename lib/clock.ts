/**
 * Time is injected so tests can run the spec's minute- and hour-long cycles in milliseconds. Two readings: `now()` is
 * the wall clock (dates sent to the service, timestamps persisted across restarts), `monotonic()` only ever moves
 * forward at the rate of real time, so waits and "how long ago" inside one process survive the wall clock being set
 * back or forward (NTP, a VM resumed, an operator fixing the date).
 */
export interface Clock {
  /** Wall-clock epoch milliseconds. */
  now(): number;
  /** Milliseconds from an arbitrary origin; never goes back. Compare only with other monotonic() readings. */
  monotonic(): number;
  /** Resolves after `ms` of monotonic time, or rejects with the signal's reason when it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** setTimeout's limit: a longer delay (2^31 ms is 24.8 days) overflows and fires at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** True when `p` settled within `ms` of `clock`'s time (resolved or rejected), false when the time ran out first. */
export async function within(clock: Clock, p: Promise<unknown>, ms: number): Promise<boolean> {
  const timer = new AbortController();
  const expired = clock.sleep(ms, timer.signal).then(
    () => false,
    () => false,
  );
  const settled = await Promise.race([
    p.then(
      () => true,
      () => true,
    ),
    expired,
  ]);
  timer.abort();
  return settled;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  sleep: (ms, signal) =>
    new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const end = performance.now() + Math.max(0, ms);
      let timer: ReturnType<typeof setTimeout>;
      // Chained timers of at most MAX_TIMER_MS until the end is reached.
      const arm = () => {
        const left = end - performance.now();
        if (left <= 0) return done();
        timer = setTimeout(arm, Math.min(left, MAX_TIMER_MS));
      };
      function done() {
        signal?.removeEventListener("abort", abort);
        resolve();
      }
      function abort() {
        clearTimeout(timer);
        reject(signal?.reason);
      }
      signal?.addEventListener("abort", abort, { once: true });
      timer = setTimeout(arm, Math.min(Math.max(0, ms), MAX_TIMER_MS));
    }),
};

/**
 * A clock that only moves when told to; pending sleeps resolve in time order as it advances. `advance` moves both
 * readings, `jump` only the wall clock (a clock set back or forward).
 */
export class ManualClock implements Clock {
  private sleepers: { at: number; resolve: () => void }[] = [];
  /** Monotonic time. */
  private m = 0;
  constructor(private t = Date.UTC(2026, 0, 1)) {}
  now() {
    return this.t;
  }
  monotonic() {
    return this.m;
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const sleeper = { at: this.m + Math.max(0, ms), resolve };
      this.sleepers.push(sleeper);
      signal?.addEventListener(
        "abort",
        () => {
          this.sleepers = this.sleepers.filter((s) => s !== sleeper);
          reject(signal.reason);
        },
        { once: true },
      );
    });
  }
  /** Sleeps not yet woken: a test waits for this to return to its resting value after waking a job. */
  get pending(): number {
    return this.sleepers.length;
  }
  /** Moves time forward by `ms`, waking sleepers in order and letting their continuations run. */
  async advance(ms: number): Promise<void> {
    const end = this.m + ms;
    for (;;) {
      this.sleepers.sort((a, b) => a.at - b.at);
      const next = this.sleepers[0];
      if (!next || next.at > end) break;
      this.sleepers.shift();
      this.t += next.at - this.m;
      this.m = next.at;
      next.resolve();
      await settle();
    }
    this.t += end - this.m;
    this.m = end;
    await settle();
  }
  /** Sets the wall clock `ms` forward (negative: back) without any time passing; no sleeper wakes. */
  jump(ms: number): void {
    this.t += ms;
  }
}

/** Lets pending promise continuations (several hops deep) run. */
export async function settle(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await Promise.resolve();
}
