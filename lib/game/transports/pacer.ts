/**
 * Keeps a client under a server's leaky-bucket rate limit (docs/game-consoles.md §2.2): the server counts each
 * request from an address, forgets one per elapsed period, and silently drops a request once the count reached the
 * burst. A dropped console command looks like a lost reply (a timeout, "may have run"), so the client waits instead.
 * The bookkeeping is the server's own, on the client's monotonic clock.
 */
import type { Clock } from "../../clock.ts";

export class Pacer {
  #level = 0;
  #last: number | undefined;

  constructor(
    private clock: Clock,
    /** Requests taken at once before the client waits (the server's burst, less a margin for other clients). */
    private burst: number,
    private periodMs: number,
  ) {}

  /** Resolves once one more request stays under the limit, and counts it; rejects when `signal` aborts first. */
  async take(signal?: AbortSignal): Promise<void> {
    while (!this.tryTake()) await this.clock.sleep(this.#last! + this.periodMs - this.clock.monotonic(), signal);
  }

  /** Counts one more request if it leaves `reserve` requests of the burst free now, and says whether it did. */
  tryTake(reserve = 0): boolean {
    this.#drain(this.clock.monotonic());
    if (this.#level >= this.burst - reserve) return false;
    this.#level++;
    return true;
  }

  /** One count is forgotten per whole period since the last look; the rest of a period carries over. */
  #drain(now: number): void {
    const interval = this.#last === undefined ? 0 : now - this.#last;
    const expired = Math.floor(interval / this.periodMs);
    if (this.#last === undefined || expired > this.#level) {
      this.#level = Math.max(0, this.#level - expired);
      this.#last = now;
      return;
    }
    this.#level -= expired;
    this.#last = now - (interval % this.periodMs);
  }
}
