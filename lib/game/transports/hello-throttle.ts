/**
 * How often the plugin token may be tried (docs/plugin-protocol.md §4.1, "Failed hellos"). A connection is refused
 * before anything is read from it when its address
 * - failed a hello lately: it waits `firstDelayMs` after its first failure, twice that after the second, and so on up
 *   to `maxDelayMs`; after `lockoutAfter` failures in a row it is refused for `lockoutMs`;
 * - already has `pendingPerAddress` connections waiting for their hello;
 * - has never said a correct hello and the failures of all addresses together used up their budget (`budget` at
 *   once, then one more per `budgetRefillMs`; connections of such addresses still waiting for their hello count as
 *   spent): a local user can send from any of 127.0.0.0/8, so a limit per address alone would not bound the guesses.
 * A correct hello clears its address's failures. Time is monotonic; memory is bounded (`maxAddresses`).
 */

import { type Bucket, refill } from "../../token-bucket.ts";

export interface HelloLimits {
  firstDelayMs: number;
  maxDelayMs: number;
  lockoutAfter: number;
  lockoutMs: number;
  pendingPerAddress: number;
  budget: number;
  budgetRefillMs: number;
  /** An address's failures are forgotten this long after its last one. */
  forgetMs: number;
  maxAddresses: number;
}

export const HELLO_LIMITS: HelloLimits = {
  firstDelayMs: 500,
  maxDelayMs: 60_000,
  lockoutAfter: 10,
  lockoutMs: 5 * 60_000,
  pendingPerAddress: 2,
  budget: 20,
  budgetRefillMs: 3_000,
  forgetMs: 15 * 60_000,
  maxAddresses: 4096,
};

/** Addresses a correct hello came from, remembered so a returning plugin is not held to the shared budget. */
const MAX_TRUSTED = 16;

export type Admission =
  { ok: true } | { ok: false; why: "delayed" | "locked_out" | "pending" | "budget"; retryMs: number };

interface Failures {
  count: number;
  last: number;
  until: number;
}

export class HelloThrottle {
  readonly limits: HelloLimits;
  #failures = new Map<string, Failures>();
  #trusted = new Set<string>();
  /** The shared budget of addresses that never said a correct hello. */
  #budget: Bucket;

  constructor(
    private monotonic: () => number,
    limits: Partial<HelloLimits> = {},
  ) {
    this.limits = { ...HELLO_LIMITS, ...limits };
    this.#budget = { tokens: this.limits.budget, at: monotonic() };
  }

  /**
   * Whether a new connection from `address` may say hello, given how many connections wait for theirs: from this
   * address, and from addresses not `trusted`.
   */
  admit(address: string, waiting: { here: number; untrusted: number }): Admission {
    const now = this.monotonic();
    const f = this.#current(address, now);
    if (f && f.until > now)
      return { ok: false, why: f.count >= this.limits.lockoutAfter ? "locked_out" : "delayed", retryMs: f.until - now };
    if (waiting.here >= this.limits.pendingPerAddress)
      return { ok: false, why: "pending", retryMs: this.limits.firstDelayMs };
    const missing = waiting.untrusted + 1 - this.#refill(now);
    if (!this.trusted(address) && missing > 0)
      return { ok: false, why: "budget", retryMs: Math.ceil(this.limits.budgetRefillMs * missing) };
    return { ok: true };
  }

  /** A hello from `address` failed (wrong token, wrong version, anything but a hello, silence). */
  failed(address: string): { count: number; waitMs: number; lockedOut: boolean } {
    const now = this.monotonic();
    const { lockoutAfter, lockoutMs, firstDelayMs, maxDelayMs } = this.limits;
    const count = (this.#current(address, now)?.count ?? 0) + 1;
    const lockedOut = count >= lockoutAfter;
    const waitMs = lockedOut ? lockoutMs : Math.min(firstDelayMs * 2 ** (count - 1), maxDelayMs);
    this.#failures.delete(address); // re-inserted last: the map's order is the order of last failure
    this.#failures.set(address, { count, last: now, until: now + waitMs });
    this.#bound();
    this.#budget.tokens = Math.max(0, this.#refill(now) - 1);
    return { count, waitMs, lockedOut };
  }

  /** A correct hello came from here since hub-agent started: the returning plugin is not held to the budget. */
  trusted(address: string): boolean {
    return this.#trusted.has(address);
  }

  succeeded(address: string): void {
    this.#failures.delete(address);
    this.#trusted.delete(address);
    this.#trusted.add(address);
    if (this.#trusted.size > MAX_TRUSTED) this.#trusted.delete(this.#trusted.values().next().value!);
  }

  #current(address: string, now: number): Failures | undefined {
    const f = this.#failures.get(address);
    if (f && now - f.last >= this.limits.forgetMs) {
      this.#failures.delete(address);
      return undefined;
    }
    return f;
  }

  /** The map is ordered by last failure: the longest quiet addresses go first when it is full. */
  #bound(): void {
    for (const address of this.#failures.keys()) {
      if (this.#failures.size <= this.limits.maxAddresses) return;
      this.#failures.delete(address);
    }
  }

  #refill(now: number): number {
    return refill(this.#budget, now, { burst: this.limits.budget, refillMs: this.limits.budgetRefillMs });
  }
}
