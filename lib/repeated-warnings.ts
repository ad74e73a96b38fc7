/**
 * Warnings an outsider can repeat at will (a wrong plugin hello on every connection) must not fill the disk: each
 * source gets one line per kind of warning and window, all sources together at most `maxLines`, and the rest is
 * counted and summed up when the window ends ("… 9,873 more failed or refused hellos from 127.0.0.2 in the last minute").
 */
import type { Clock } from "./clock.ts";
import type { Logger } from "./log.ts";

export interface RepeatedWarningsOptions {
  /** What is counted, plural: "failed or refused hellos". */
  what: string;
  /** Default one minute. */
  windowMs?: number;
  /** Lines written one by one per window, all sources together (default 5). */
  maxLines?: number;
}

/** Sources counted one by one per window; more are summed up as "other addresses". */
const MAX_SOURCES = 1000;
/** Sources named in a summary; the rest share one line. */
const NAMED = 3;

export class RepeatedWarnings {
  #written = new Set<string>();
  #counts = new Map<string, number>();
  #others = { count: 0, sources: 0 };
  #windowStart?: number;
  #timer?: AbortController;
  #windowMs: number;
  #maxLines: number;

  constructor(
    private log: Logger,
    private clock: Clock,
    private opts: RepeatedWarningsOptions,
  ) {
    this.#windowMs = opts.windowMs ?? 60_000;
    this.#maxLines = opts.maxLines ?? 5;
  }

  /** `kind`: warnings of another kind (a refusal, a failure) from the same source get their own first line. */
  warn(source: string, message: string, kind = ""): void {
    if (this.#windowStart === undefined) this.#open();
    const key = `${kind}\0${source}`;
    if (!this.#written.has(key) && this.#written.size < this.#maxLines) {
      this.#written.add(key);
      this.log.warn(message);
      return;
    }
    const n = this.#counts.get(source);
    if (n !== undefined) this.#counts.set(source, n + 1);
    else if (this.#counts.size < MAX_SOURCES) this.#counts.set(source, 1);
    else {
      this.#others.count++;
      this.#others.sources++; // an upper bound: a source past the cap is counted per warning
    }
  }

  /** Writes what was counted and starts a new window (at close: nothing counted is lost). */
  flush(): void {
    if (this.#windowStart === undefined) return;
    const elapsed = this.clock.monotonic() - this.#windowStart;
    const span = elapsed >= this.#windowMs - 1 ? spell(this.#windowMs) : spell(Math.max(1000, elapsed));
    const sorted = [...this.#counts].sort((a, b) => b[1] - a[1]);
    for (const [source, n] of sorted.slice(0, NAMED))
      this.log.warn(`… ${count(n)} more ${this.opts.what} from ${source} in the last ${span}`);
    const rest = sorted.slice(NAMED);
    const others = {
      count: this.#others.count + rest.reduce((sum, [, n]) => sum + n, 0),
      sources: this.#others.sources + rest.length,
    };
    if (others.count)
      this.log.warn(
        `… ${count(others.count)} more ${this.opts.what} from ${count(others.sources)} other addresses in the last ${span}`,
      );
    this.#written.clear();
    this.#counts.clear();
    this.#others = { count: 0, sources: 0 };
    this.#windowStart = undefined;
  }

  close(): void {
    this.#timer?.abort();
    this.flush();
  }

  #open(): void {
    this.#windowStart = this.clock.monotonic();
    const timer = (this.#timer = new AbortController());
    this.clock.sleep(this.#windowMs, timer.signal).then(
      () => this.flush(),
      () => {},
    );
  }
}

function count(n: number): string {
  return n.toLocaleString("en-US");
}

function spell(ms: number): string {
  if (ms === 60_000) return "minute";
  return ms % 60_000 === 0 ? `${ms / 60_000} minutes` : `${Math.round(ms / 1000)} s`;
}
