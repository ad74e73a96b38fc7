/**
 * One entry's turn in a delivery round (round.ts): the ways it can end, shared by the three kinds' protocols
 * (kinds/ban.ts, kinds/unban.ts, kinds/warning.ts). It is settled (removed from its queue, then reported), kept (its
 * envelope updated with why), or its attempt is recorded durably before the write goes out, so that a crash or a
 * lost answer from there on leaves it uncertain and looked up before it is ever sent again.
 *
 * The round supplies what every attempt shares (RoundServices): the queues, the clock, the user lookups, and what
 * an answer says about the service as a whole (a 429's pause, a service that stopped answering).
 */
import {
  type Api,
  type ApiError,
  type Ban,
  type Warning,
  describeError,
  isAcceptedWrite,
  isRejected,
} from "../api/client.ts";
import { type Queue, type QueueEntry, isUncertain } from "../store/index.ts";
import type { DeliveryResult, OutcomeBase } from "./deliver.ts";
import type { BanEntry, PlayerRef, SanctionQueues, UnbanEntry, WarningEntry } from "./schemas.ts";

export type Item =
  | { kind: "ban"; entry: QueueEntry<BanEntry> }
  | { kind: "unban"; entry: QueueEntry<UnbanEntry> }
  | { kind: "warning"; entry: QueueEntry<WarningEntry> };

/** The envelope fields a round writes (never the sanction itself). */
export type Patch = Partial<Omit<QueueEntry<unknown>, "id" | "createdAt" | "data">>;

export type UserLookup = { ok: true; id: string } | { ok: false; error: ApiError };

/** What sending one entry came to: undefined when another process took it; "rate_limited": to be sent again. */
export type SendResult = DeliveryResult | undefined | "rate_limited";

/** What the round shares with every attempt. */
export interface RoundServices {
  api: Api;
  queues: SanctionQueues;
  now: () => number;
  warn?: (message: string) => void;
  /** `run`'s rounds wait out a 429 and send the entry again; a command's round keeps it. */
  waitsOutRateLimits: boolean;
  /** A 429 (or the closed gate of an earlier one): the round pauses, or ends if the wait is too long. */
  rateLimited(retryAfterMs: number): "rate_limited";
  /** What one answer says about the service as a whole; none: a success. */
  heard(error?: ApiError): void;
  /** Tells the round's caller what became of an entry. */
  report(item: Item, base: OutcomeBase, value?: Ban | Warning): Promise<void>;
  /** Tells the round's caller of a delivery before its entry is removed (DeliverOptions.onKnown). */
  known(item: Item, base: OutcomeBase, value?: Ban | Warning): Promise<void>;
  /** The player's service user (looked up, created with `create` when unknown), remembered for the round. */
  userOf(p: PlayerRef, create: boolean): Promise<UserLookup>;
  /** Service warnings a lookup matched this round: one warning answers for one entry only. */
  claimed: Set<string>;
  /** An attempt of this entry is on record and about to be sent (DeliverDeps.attempts). */
  attempted?(id: string): void;
}

export class Attempt<I extends Item = Item> {
  constructor(
    readonly round: RoundServices,
    public item: I,
    /** morph_user_id: the creator's (or processor's) service user; undefined for the console. */
    readonly morphUserId?: string,
  ) {}

  get api(): Api {
    return this.round.api;
  }

  private get queue(): Queue<unknown> {
    return this.round.queues[this.item.kind] as Queue<unknown>;
  }

  /** Removes the entry on a final answer and reports it. */
  async done(result: Exclude<DeliveryResult, "kept">, extra: Partial<OutcomeBase> = {}, value?: Ban | Warning) {
    this.round.heard();
    const base = { result, ...extra };
    // At the service, with its attempt on record: an entry that outlives this (a crash, a failed removal) is looked
    // up there before anything is sent again, and found. "delivered" stays true whatever becomes of the removal.
    if (result === "delivered" && isUncertain(this.item.entry)) await this.round.known(this.item, base, value);
    // Lifted in the cached ban list by whoever reads it, until a list asked for after now is cached: a process killed
    // before its lift of the cache (banlist.ts) must not leave the player kicked from there once the entry is gone.
    const { kind, entry } = this.item;
    if (result === "delivered" && kind === "unban" && entry.data.target.identifier !== null)
      await this.round.queues.lifted.add(entry.data);
    // With the entry as read: its player's keys say which index markers go with it.
    await this.queue.remove(this.item.entry.id, this.item.entry);
    await this.round.report(this.item, base, value);
    return result;
  }

  /** Keeps the entry with `patch` (attempts, lastError, …) and reports why. */
  async keep(patch: Patch, error: string) {
    const entry = (await this.queue.update(this.item.entry.id, patch)) ?? this.item.entry;
    await this.round.report({ ...this.item, entry } as Item, {
      result: "kept",
      error,
      ...(isUncertain(entry) ? { uncertain: true } : {}),
    });
    return "kept" as const;
  }

  /**
   * The answer to a request. `sent`: the write itself (its attempt is on record already); otherwise a request
   * before it (a user lookup) failed, which counts as an attempt that sent nothing. `partly`: an earlier write of this
   * attempt went through (an unban's PATCHes), so it stays uncertain whatever this answer proves of this one.
   */
  async answered(error: ApiError, sent: boolean, partly = false): Promise<SendResult> {
    const { round, item } = this;
    round.heard(error);
    if (error.kind === "RateLimited" && round.waitsOutRateLimits) {
      // This request was not carried out (a 429 proves it): an attempt on record is cleared unless an earlier write
      // of it was, nobody is told, and the entry goes again once the service lets requests through.
      if (sent) await this.queue.update(item.entry.id, { uncertain: partly, lastError: describeError(error) });
      return round.rateLimited(error.retryAfterMs);
    }
    if (sent && isAcceptedWrite(error)) {
      round.warn?.(`delivered, but the answer was unreadable: ${describeError(error)}`);
      return this.done("delivered");
    }
    const message = describeError(error);
    // A request before the write failed for good, but an earlier attempt may have reached VyHub: not dropped unseen.
    if (!sent && isUncertain(item.entry) && (error.kind === "NotFound" || isRejected(error)))
      return this.lookupFailed(error);
    // Only the service's own 404 (its error code) says the player is unknown. Routing's (a wrong path in api.url,
    // which a cached server record hides) or a gateway's says nothing of the player: the entry waits.
    if (error.kind === "NotFound") {
      if (error.code) return this.done("not_found", { error: message });
    } else if (isRejected(error)) return this.done("refused", { error: message });
    if (sent) return this.keep({ lastError: message, uncertain: partly || !notCarriedOut(error) }, message);
    // Explicitly certain unless it already was uncertain: a failed lookup before the write sent nothing new.
    const uncertain = isUncertain(item.entry);
    return this.keep(
      { attempts: item.entry.attempts + 1, lastAttemptAt: round.now(), lastError: message, uncertain },
      message,
    );
  }

  /** A lookup at the service failed: the entry waits, not sent. */
  lookupFailed(error: ApiError): Promise<SendResult> {
    this.round.heard(error);
    if (error.kind === "RateLimited" && this.round.waitsOutRateLimits)
      return Promise.resolve(this.round.rateLimited(error.retryAfterMs));
    const message = `looking it up at the service failed: ${describeError(error)}`;
    return this.keep({ lastLookupAt: this.round.now(), lastLookup: "failed", lastError: message }, message);
  }

  /**
   * Records the attempt durably before the request goes out: a crash from here on leaves the entry uncertain.
   * False when another process or worker changed the entry since the round read it: then nothing is sent.
   */
  async record(lookup?: string, data?: WarningEntry): Promise<boolean> {
    const { item } = this;
    const t = this.round.now();
    const patch: Patch & { data?: WarningEntry } = {
      ...(data ? { data } : {}),
      attempts: item.entry.attempts + 1,
      lastAttemptAt: t,
      firstAttemptAt: item.entry.firstAttemptAt ?? t,
      uncertain: true,
      ...(lookup ? { lastLookupAt: t, lastLookup: lookup } : {}),
    };
    // `data` only for a warning (its `seen`); Patch leaves it out so no other write can change a sanction.
    // Only if no other attempt was recorded since this round read the entry: a process frozen past the lock's stale
    // time wakes up here after the one that took over may have sent it (and lost the answer).
    // Nor if an unban cancelled the ban since (otherKeyBans in a round of another worker or process).
    const unchanged = (current: QueueEntry<unknown>) =>
      current.attempts === item.entry.attempts &&
      (current.data as { status?: string }).status === (item.entry.data as { status?: string }).status;
    const entry = await this.queue.update(item.entry.id, patch as Patch, unchanged);
    if (entry) {
      item.entry = entry as never;
      this.round.attempted?.(entry.id);
    }
    return entry !== undefined;
  }
}

/**
 * An answer that proves the write was not carried out: 429 (or our own rate-limit gate: never sent), 401, 408, or a
 * failure before a connection was made (refused, no such host: nothing reached the service). Timeouts, resets, 5xx
 * and unreadable answers prove nothing.
 */
function notCarriedOut(e: ApiError): boolean {
  if (e.kind === "RateLimited") return true;
  if (e.kind === "ClientError") return e.status === 401 || e.status === 408;
  return e.kind === "Network" && e.unsent === true;
}
