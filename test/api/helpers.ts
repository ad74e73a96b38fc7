import type { Clock } from "../../lib/clock.ts";

/** Virtual time that jumps forward on every sleep, so backoff and 429 waits cost nothing. */
export class FastClock implements Clock {
  readonly sleeps: number[] = [];
  constructor(public t = Date.UTC(2026, 0, 1)) {}
  now() {
    return this.t;
  }
  monotonic() {
    return this.t;
  }
  async sleep(ms: number) {
    this.sleeps.push(ms);
    this.t += Math.max(0, ms);
  }
}
