import type { Clock } from "../../clock.ts";

/** Restart after a crash: delays double from `delayMs` to `maxDelayMs`; more than `maxRestarts` in a row is a crash loop. */
export interface RestartPolicy {
  /** Restarts in a row before giving up (default 5). A run that lasted `stableMs` starts a new row. */
  maxRestarts?: number;
  /** Delay before the first restart of a row (default 1 s). */
  delayMs?: number;
  maxDelayMs?: number;
  /** A run at least this long counts as healthy: the next crash restarts after `delayMs` again (default 10 min). */
  stableMs?: number;
}

/** The restart policy's bookkeeping: how long the server ran, how many restarts in a row, the next delay. */
export class Restarts {
  #inRow = 0;
  #startedAt = 0;

  constructor(
    private policy: RestartPolicy | undefined,
    private clock: Clock,
  ) {}

  /** Restarts in the current row. */
  get inRow(): number {
    return this.#inRow;
  }

  /** A run began (a failed start counts as a run that crashed at once). */
  started(): void {
    this.#startedAt = this.clock.monotonic();
  }

  /** After the server exited on its own: whether another start follows (a long healthy run starts a new row). */
  restarting(): boolean {
    const p = this.policy;
    if (!p) return false;
    if (this.clock.monotonic() - this.#startedAt >= (p.stableMs ?? 600_000)) this.#inRow = 0;
    return this.#inRow < (p.maxRestarts ?? 5);
  }

  /** The delay before the next restart, counted in the row: doubling from `delayMs` up to `maxDelayMs`. */
  nextDelay(): number {
    const p = this.policy ?? {};
    const delay = Math.min((p.delayMs ?? 1000) * 2 ** this.#inRow, p.maxDelayMs ?? 60_000);
    this.#inRow++;
    return delay;
  }
}
