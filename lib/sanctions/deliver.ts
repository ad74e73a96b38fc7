/**
 * The delivery of the sanction queues (rules 10–12 and the client-side transition table), shared by `run`'s queue
 * job and every one-shot CLI command: `deliverQueues` (round.ts) runs one round holding the cross-process lock
 * "sanctions", so any number of processes can call it at once and each entry is sent by exactly one of them, once.
 * Each kind's protocol is in its own module: kinds/ban.ts, kinds/unban.ts, kinds/warning.ts (docs/service-api.md
 * §1.5 for "4xx other than 404"). A player unknown to the service is created first for bans and warnings. Entries
 * of one player go in creation order, one request in flight per player; a kept entry stops that player's sends for
 * the round so a later unban can never overtake the ban it lifts.
 *
 * Exactly once (attempt.ts): every write is recorded in its entry (attempts, firstAttemptAt, `uncertain`) before it
 * is sent. An entry whose answer was lost (timeout, network error, 5xx, or a crash with the attempt on record) stays
 * uncertain: once `settleMs` have passed since its last attempt (a slow service may still be working on it), it is
 * looked up at the service (reconcile.ts) and a match counts as delivered; only when none is found is it sent again.
 * If the lookup fails, the entry waits. An answer that proves nothing was done (429, 401, 408, connection refused)
 * clears the flag.
 */
import type { Api, Ban, Warning } from "../api/client.ts";
import type { Logger } from "../log.ts";
import type { QueueEntry, Store } from "../store/index.ts";
import { WARNING_CLOCK_SKEW_MS } from "./reconcile.ts";
import type { BanEntry, UnbanEntry, WarningEntry } from "./schemas.ts";
import type { UsersAhead } from "./user-ahead.ts";
export { isUncertain } from "../store/index.ts";

/**
 * - delivered: the service accepted it, or already had it (removed).
 * - not_found: the service does not know the user (removed; for an unban: nothing to unban).
 * - refused:   another 4xx, e.g. 403 missing permission or 422 (removed; `error` says why).
 * - cancelled: a ban lifted by an unban before it was sent (removed, never sent).
 * - kept:      network error, 5xx, 429 or an invalid answer, an uncertain entry not yet looked up, or a lookup that
 *              failed (kept for a later round; `error` says why, `uncertain` that it is checked before it is resent).
 */
export type DeliveryResult = "delivered" | "not_found" | "refused" | "cancelled" | "kept";

export interface OutcomeBase {
  result: DeliveryResult;
  error?: string;
  /** kept: a request may have reached the service; it is looked up there before it is sent again. */
  uncertain?: boolean;
  /** delivered: found at the service by a lookup (an earlier attempt had reached it), not sent again. */
  found?: boolean;
  /** delivered (unban): the user had no active ban issued before the unban, so nothing was sent or lifted. */
  nothingToLift?: boolean;
}

export type DeliveryOutcome =
  | ({ kind: "ban"; entry: QueueEntry<BanEntry>; ban?: Ban } & OutcomeBase)
  | ({ kind: "unban"; entry: QueueEntry<UnbanEntry> } & OutcomeBase)
  | ({ kind: "warning"; entry: QueueEntry<WarningEntry>; warning?: Warning } & OutcomeBase);

export interface DeliveryReport {
  /** True when another process held the delivery lock for longer than `lockTimeoutMs`: nothing was sent. */
  busy: boolean;
  outcomes: DeliveryOutcome[];
  /** The round's last answer found no service (connection refused, timeout): why. */
  unreachable?: string;
}

/**
 * How long an uncertain entry waits after its last attempt before it is looked up: 2 × the API timeout (a slow
 * service may still be working on the request), and at least the timeout plus WARNING_CLOCK_SKEW_MS, so a warning
 * the service made for one entry is already too old to be taken for a later entry of the same player (that entry is
 * only sent once this one is settled).
 */
export function settleTime(apiTimeoutMs: number): number {
  return Math.max(2 * apiTimeoutMs, apiTimeoutMs + WARNING_CLOCK_SKEW_MS);
}

/**
 * When an uncertain entry may be looked up: a settle time after its last attempt, and never later than a settle time
 * from now (an attempt dated in the future, the clock set back since, does not hold it back).
 */
export function lookupDueAt(lastAttemptAt: number, settleMs: number, now: number): number {
  return Math.min(lastAttemptAt, now) + settleMs;
}

/**
 * When this process recorded its latest attempt of each entry, on a monotonic clock (`run` keeps one for all its
 * rounds): an uncertain entry it sent is looked up only once the settle time has passed in real time too. Attempt
 * times on record are wall-clock (they outlive the process): with the clock stepped an hour ahead, the lookup came
 * at once, while the service could still be working on the request, found nothing, and sent it a second time.
 */
export class AttemptClock {
  /** Entry id → monotonic time of its attempt, oldest first. */
  private readonly at = new Map<string, number>();

  constructor(
    private readonly monotonic: () => number,
    /** How long an attempt's answer may still be under way (settleTime), the rounds' too. */
    readonly settleMs: number,
  ) {}

  attempted(id: string): void {
    const now = this.monotonic();
    this.at.delete(id); // re-inserted: the map stays oldest first
    this.at.set(id, now);
    for (const [old, t] of this.at) {
      if (now - t < this.settleMs) break;
      this.at.delete(old); // settled: bounds the map to the attempts of one settle time
    }
  }

  /** How long entry `id` still settles (ms): 0 once it has, or when this process did not send it. */
  settling(id: string): number {
    const t = this.at.get(id);
    return t === undefined ? 0 : Math.max(0, t + this.settleMs - this.monotonic());
  }
}

export interface DeliverDeps {
  api: Api;
  store: Store;
  logger?: Logger;
  /** For attempt times (default Date.now). */
  now?: () => number;
  /** Wait after an uncertain entry's last attempt before looking it up (default `settleTime(DEFAULT_TIMEOUT_MS)`). */
  settleMs?: number;
  /** This process's attempts on a monotonic clock, across its rounds (`run`), with the same settle time. */
  attempts?: AttemptClock;
  /** Players looked up at VyHub as their sanctions were issued (`run`): a round's lookup takes the answer. */
  usersAhead?: UsersAhead;
}

export interface DeliverOptions {
  /** Called for each entry as it is settled (run: tell the creator in game or log; CLI: print). Awaited. */
  onOutcome?: (outcome: DeliveryOutcome) => void | Promise<void>;
  /**
   * Told of a delivery as soon as the service's answer (or a lookup) says so, before its entry is removed (and before
   * onOutcome): only for an entry with its attempt on record, which a removal that fails leaves to be looked up and
   * found, never sent again. `run` answers a waiting command with it. Awaited.
   */
  onKnown?: (outcome: DeliveryOutcome) => void | Promise<void>;
  /** How long to wait for a round of another process (default 10 s; the store's lock default). */
  lockTimeoutMs?: number;
  /** Players sent to in parallel (each player still one request at a time). Default 4. */
  concurrency?: number;
  /**
   * Only these players' entries (their `playerKey` groups, read through the queues' index), all of them in order: a
   * one-shot command delivers its own player's and leaves the rest to `run`, so concurrent commands do not take each
   * other's entries (and answers), and the round costs the same however long the queues are.
   */
  players?: ReadonlySet<string>;
  /**
   * Players to serve at once (`run`: a sanction just issued, by a command or in game), asked every URGENT_POLL_MS while
   * the round lasts and served beside the players in progress, outside the round's learned pace. Their entries are
   * read afresh; one player's entries are never sent by two workers at once.
   */
  urgent?: () => string[];
  /**
   * Told when an urgent player's entries have been through the round (each settled or kept, or one kept first);
   * `listedAt` (performance.now()) is when they were read: an entry handed over after it was not among them.
   */
  onServed?: (player: string, listedAt: number) => void | Promise<void>;
  /** Aborted: no further player is started (`run` stopping or reloading); those in flight finish. */
  signal?: AbortSignal;
  /**
   * `run`'s rounds: when the service rate-limits (429, or the closed gate of an earlier one), wait until it lets
   * requests through again, up to this long, and go on with the same entry (nothing was done, so nothing is
   * reported); a longer wait ends the round, the rest left queued untouched. The round also ends when the service
   * stops answering (UNREACHABLE_STREAK requests in a row without an answer). 0 (default, one-shot commands): such
   * an entry is kept and reported like any other.
   */
  maxPauseMs?: number;
  /** Told how many entries the round found, and then how many more each urgent player brought. */
  onListed?: (count: number) => void;
  /**
   * Keep every outcome in the report (default true). `run` hears them through onOutcome and turns this off: a round of
   * 10,000 would otherwise hold every entry and every ban the service returned until it ends.
   */
  collect?: boolean;
  /** Told when the round waits for the service's rate limit (ms), or ends early (`ended`: why). */
  onPause?: (e: { ms: number } | { ended: string }) => void;
}

/** Answers in a row that found no service (refused, timeout): the round ends instead of trying every player. */
export const UNREACHABLE_STREAK = 4;
