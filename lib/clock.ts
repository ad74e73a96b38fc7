/** Time is injected so tests can run the spec's minute- and hour-long cycles in milliseconds. */
export interface Clock {
  now(): number;
  /** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const timer = setTimeout(done, Math.max(0, ms));
      function done() {
        signal?.removeEventListener("abort", abort);
        resolve();
      }
      function abort() {
        clearTimeout(timer);
        reject(signal?.reason);
      }
      signal?.addEventListener("abort", abort, { once: true });
    }),
};

/** A clock that only moves when told to; pending sleeps resolve in time order as it advances. */
export class ManualClock implements Clock {
  private sleepers: { at: number; resolve: () => void }[] = [];
  constructor(private t = Date.UTC(2026, 0, 1)) {}
  now() {
    return this.t;
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const sleeper = { at: this.t + Math.max(0, ms), resolve };
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
    const end = this.t + ms;
    for (;;) {
      this.sleepers.sort((a, b) => a.at - b.at);
      const next = this.sleepers[0];
      if (!next || next.at > end) break;
      this.sleepers.shift();
      this.t = next.at;
      next.resolve();
      await settle();
    }
    this.t = end;
    await settle();
  }
}

/** Lets pending promise continuations (several hops deep) run. */
export async function settle(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await Promise.resolve();
}
