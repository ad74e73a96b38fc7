/**
 * One delivery round of the sanction queues (rules 10–12 and the client-side transition table), shared by `run`'s
 * queue job and every one-shot CLI command. The whole round holds the cross-process lock "sanctions", so any number
 * of processes can call it at once and each entry is sent by exactly one of them, once.
 *
 * Per entry (the spec's transition and error tables; docs/service-api.md §1.5 for "4xx other than 404):
 * - ban:     UNBANNED → removed, never sent. POST /ban/: 2xx → removed (delivered); 404 → removed (user not
 *            found); other 4xx → removed (refused, the creator is told why); anything else → kept.
 * - unban:   the user's active bans in the bundle are looked up first, every time (an unban may wait in the queue
 *            while a new ban is issued on the web, and must never lift that): none issued up to the unban → delivered
 *            (nothing left to lift); only such → PATCH /user/<user_id>/ban; older and newer ones → PATCH /ban/<id>
 *            for each older one. Answers as for a ban; the user unknown to the service → removed (nothing to unban).
 *            Players with an unban go after the others, and an unban first settles a ban of its user queued before it
 *            under the other key (game id vs service user id), as queueUnban does with the same key (otherKeyBans).
 * - warning: POST /warning/: the same as a ban.
 * A player unknown to the service is created first (GET /user/<id>?type=…, POST /user/ on 404) for bans and
 * warnings. Entries of one player go in creation order, one request in flight per player; a kept entry stops that
 * player's sends for the round so a later unban can never overtake the ban it lifts.
 *
 * Exactly once: every write is recorded in its entry (attempts, firstAttemptAt, `uncertain`) before it is sent. An
 * entry whose answer was lost (timeout, network error, 5xx, or a crash with the attempt on record) stays uncertain:
 * once `settleMs` have passed since its last attempt (a slow service may still be working on it), it is looked up at
 * the service (lib/sanctions/reconcile.ts) and a match counts as delivered; only when none is found is it sent
 * again. A warning has no key of its own: the ids of the service's like warnings are recorded with its attempt. If
 * the lookup fails, the entry waits. An answer that proves nothing was done (429, 401, 408, connection refused)
 * clears the flag.
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
import { DEFAULT_TIMEOUT_MS } from "../api/http.ts";
import type { Logger } from "../log.ts";
import { LockTimeoutError, type Queue, type QueueEntry, type Store, isUncertain } from "../store/index.ts";
import { type Lookup, WARNING_CLOCK_SKEW_MS, bansAround, findBan, findWarning, warningsLike } from "./reconcile.ts";
import {
  type BanEntry,
  type Creator,
  DELIVERY_LOCK,
  type PlayerRef,
  type UnbanEntry,
  type WarningEntry,
  entriesByKeys,
  groupIndexKeyOf,
  playerKey,
  playerLabel,
  sanctionQueues,
  unbanCancels,
} from "./schemas.ts";
import { serialByKey } from "../serial.ts";
import { systemClock } from "../clock.ts";
import { LearnedPace } from "../pace.ts";

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

interface OutcomeBase {
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

export interface DeliverDeps {
  api: Api;
  store: Store;
  logger?: Logger;
  /** For attempt times (default Date.now). */
  now?: () => number;
  /** Wait after an uncertain entry's last attempt before looking it up (default `settleTime(DEFAULT_TIMEOUT_MS)`). */
  settleMs?: number;
}

export interface DeliverOptions {
  /** Called for each entry as it is settled (run: tell the creator in game or log; CLI: print). Awaited. */
  onOutcome?: (outcome: DeliveryOutcome) => void | Promise<void>;
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
  /** Told when an urgent player's entries have been through the round (each settled or kept, or one kept first). */
  onServed?: (player: string) => void | Promise<void>;
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
/** The shortest wait after a 429. */
const MIN_PAUSE_MS = 250;
/** User lookups a round remembers (creators and targets come back; a backlog's thousands of players do not). */
const LOOKUPS_KEPT = 1_000;
/** 429s in a row for one entry that end the round. */
const MAX_RATE_LIMITED = 20;
/** While a round lasts, how often it looks for urgent players. */
const URGENT_POLL_MS = 20;

type Item =
  | { kind: "ban"; entry: QueueEntry<BanEntry> }
  | { kind: "unban"; entry: QueueEntry<UnbanEntry> }
  | { kind: "warning"; entry: QueueEntry<WarningEntry> };

/** The envelope fields a round writes (never the sanction itself). */
type Patch = Partial<Omit<QueueEntry<unknown>, "id" | "createdAt" | "data">>;

type UserLookup = { ok: true; id: string } | { ok: false; error: ApiError };

/** What sending one entry came to: undefined when another process took it; "rate_limited": to be sent again. */
type SendResult = DeliveryResult | undefined | "rate_limited";

/** Waits `ms`, or less when `signal` aborts (a pause for a 429 must not hold up a stop). */
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });

/**
 * An answer that proves the write was not carried out: 429 (or our own rate-limit gate: never sent), 401, 408, or a
 * refused connection (nothing reached the service). Timeouts, resets, 5xx and unreadable answers prove nothing.
 */
function notCarriedOut(e: ApiError): boolean {
  if (e.kind === "RateLimited") return true;
  if (e.kind === "ClientError") return e.status === 401 || e.status === 408;
  return e.kind === "Network" && !e.timeout && /ECONNREFUSED|ConnectionRefused/i.test(e.message);
}

/** Sends every queued ban, unban and warning once; see the module comment for the rules. */
export async function deliverQueues(deps: DeliverDeps, opts: DeliverOptions = {}): Promise<DeliveryReport> {
  try {
    return await deps.store.withLock(DELIVERY_LOCK, () => round(deps, opts), { timeoutMs: opts.lockTimeoutMs });
  } catch (e) {
    if (e instanceof LockTimeoutError) return { busy: true, outcomes: [] };
    throw e;
  }
}

async function round(deps: DeliverDeps, opts: DeliverOptions): Promise<DeliveryReport> {
  const { api, store } = deps;
  const now = deps.now ?? Date.now;
  const settleMs = deps.settleMs ?? settleTime(DEFAULT_TIMEOUT_MS);
  const log = deps.logger;
  const queues = sanctionQueues(store);
  /** Every queued entry, or only those of these players (by playerKey, read through the index). */
  const load = async (players?: ReadonlySet<string>): Promise<Item[]> => {
    const keys = players && [...new Set([...players].map(groupIndexKeyOf))];
    const read = <T>(q: Queue<T>) => (keys ? entriesByKeys(q, keys) : q.list());
    const [bans, unbans, warnings] = await Promise.all([read(queues.ban), read(queues.unban), read(queues.warning)]);
    const items: Item[] = [
      ...bans.map((entry) => ({ kind: "ban" as const, entry })),
      ...unbans.map((entry) => ({ kind: "unban" as const, entry })),
      ...warnings.map((entry) => ({ kind: "warning" as const, entry })),
    ];
    return players ? items.filter((i) => players.has(playerKey(i.entry.data.target))) : items;
  };
  const byId = (a: Item, b: Item) => (a.entry.id < b.entry.id ? -1 : 1);
  /** Each player's entries in creation order; players by their oldest entry, so a backlog drains oldest first. */
  const groups = (items: Item[]): Item[][] => {
    const byPlayer = new Map<string, Item[]>();
    for (const item of items) {
      const key = playerKey(item.entry.data.target);
      const mine = byPlayer.get(key);
      if (mine) mine.push(item);
      else byPlayer.set(key, [item]);
    }
    return [...byPlayer.values()].map((g) => g.sort(byId)).sort((a, b) => byId(a[0] as Item, b[0] as Item));
  };
  // Read while the first urgent players are served: listing a backlog of 10,000 takes seconds.
  const listing = load(opts.players);
  /** Entries counted for onListed (urgent ones may come before the listing). */
  const counted = new Set<string>();
  const count = (items: Item[]) => {
    const fresh = items.filter((i) => !counted.has(i.entry.id));
    for (const i of fresh) counted.add(i.entry.id);
    opts.onListed?.(fresh.length);
  };

  // Rate limits and a service gone: shared by the workers (maxPauseMs).
  const maxPauseMs = opts.maxPauseMs ?? 0;
  let pausedUntil = 0;
  let ended: string | undefined;
  let unanswered = 0;
  // run's rounds learn the service's rate from its 429s (lib/pace.ts): a backlog then meets the limit about once, and
  // urgent players, who skip the pace, seldom find a pause to wait out.
  const learned = maxPauseMs ? new LearnedPace(systemClock) : undefined;
  /**
   * A 429 (or its gate): every worker waits until it has passed (at least MIN_PAUSE_MS, so a `Retry-After: 0` does
   * not turn into a loop of requests), or the round ends if that is too long.
   */
  const rateLimited = (retryAfterMs: number) => {
    learned?.refused();
    const ms = Math.max(retryAfterMs, MIN_PAUSE_MS);
    if (ms > maxPauseMs) {
      if (!ended) opts.onPause?.({ ended: (ended = `the service asks to wait ${Math.ceil(ms / 1000)} s (429)`) });
    } else {
      pausedUntil = Math.max(pausedUntil, performance.now() + ms);
      opts.onPause?.({ ms });
    }
    return "rate_limited" as const;
  };
  /** What one answer says about the service as a whole (run's rounds end when it stops answering); none: success. */
  const heard = (error?: ApiError) => {
    if (!maxPauseMs) return;
    if (error?.kind !== "Network") unanswered = 0;
    else if (++unanswered >= UNREACHABLE_STREAK && !ended) {
      ended = `the service did not answer ${unanswered} times in a row (${describeError(error)})`;
      opts.onPause?.({ ended });
    }
  };

  // Users resolved this round, by player key; a creator and a target may be the same player.
  const users = new Map<string, Promise<UserLookup>>();
  const lookup = (p: { identifier: string; type: string; name: string }, create: boolean) => {
    const key = `${playerKey(p)}:${create}`;
    let hit = users.get(key);
    if (!hit) {
      const asked = findUser(api, p, create);
      users.set(key, asked);
      // A backlog of thousands of players must not keep every lookup until the round ends.
      if (users.size > LOOKUPS_KEPT) users.delete(users.keys().next().value as string);
      // A failure is not kept: the entry asks again (after a 429's wait, or in a later round).
      void asked.then((r) => {
        if (!r.ok && users.get(key) === asked) users.delete(key);
      });
      hit = asked;
    }
    return hit;
  };
  // Without a user id the target has its game id (PlayerRefSchema).
  const userOf = (p: PlayerRef, create: boolean): Promise<UserLookup> =>
    p.user_id
      ? Promise.resolve({ ok: true, id: p.user_id })
      : lookup({ ...p, identifier: p.identifier as string }, create);
  /** morph_user_id of a creator: undefined for the console. */
  const morphOf = async (c: Creator | null): Promise<UserLookup | undefined> => {
    if (!c) return undefined;
    if (c.user_id) return { ok: true, id: c.user_id };
    return lookup({ identifier: c.identifier as string, type: c.type as string, name: c.name }, true);
  };
  // Service warnings a lookup matched this round: one warning answers for one entry only.
  const claimed = new Set<string>();

  const outcomes: DeliveryOutcome[] = [];
  const settle = async (outcome: DeliveryOutcome) => {
    if (opts.collect !== false) outcomes.push(outcome);
    try {
      await opts.onOutcome?.(outcome);
    } catch (e) {
      log?.error(`reporting a ${outcome.kind} outcome failed: ${(e as Error).message}`);
    }
  };
  const report = (item: Item, base: OutcomeBase, value?: Ban | Warning) => {
    if (item.kind === "ban") return settle({ ...item, ...base, ...(value ? { ban: value as Ban } : {}) });
    if (item.kind === "warning") return settle({ ...item, ...base, ...(value ? { warning: value as Warning } : {}) });
    return settle({ ...item, ...base });
  };

  /** Removes the entry on a final answer and reports it. */
  const done = async (
    item: Item,
    result: Exclude<DeliveryResult, "kept">,
    extra: Partial<OutcomeBase> = {},
    value?: Ban | Warning,
  ) => {
    heard();
    // With the entry as read: its player's keys say which index markers go with it.
    await (queues[item.kind] as Queue<unknown>).remove(item.entry.id, item.entry);
    await report(item, { result, ...extra }, value);
    return result;
  };
  /** Keeps the entry with `patch` (attempts, lastError, …) and reports why. */
  const keep = async (item: Item, patch: Patch, error: string) => {
    const entry = (await queues[item.kind].update(item.entry.id, patch)) ?? item.entry;
    await report({ ...item, entry } as Item, {
      result: "kept",
      error,
      ...(isUncertain(entry) ? { uncertain: true } : {}),
    });
    return "kept" as const;
  };
  /**
   * The answer to a request. `sent`: the write itself (its attempt is on record already); otherwise a request
   * before it (a user lookup) failed, which counts as an attempt that sent nothing.
   */
  const answered = async (item: Item, error: ApiError, sent: boolean): Promise<SendResult> => {
    heard(error);
    if (error.kind === "RateLimited" && maxPauseMs) {
      // Nothing was done (a 429 proves it): an attempt on record is cleared, nobody is told, and the entry goes
      // again once the service lets requests through.
      if (sent) await queues[item.kind].update(item.entry.id, { uncertain: false, lastError: describeError(error) });
      return rateLimited(error.retryAfterMs);
    }
    if (sent && isAcceptedWrite(error)) {
      log?.warn(`delivered, but the answer was unreadable: ${describeError(error)}`);
      return done(item, "delivered");
    }
    const message = describeError(error);
    // A request before the write failed for good, but an earlier attempt may have reached VyHub: not dropped unseen.
    if (!sent && isUncertain(item.entry) && (error.kind === "NotFound" || isRejected(error)))
      return lookupFailed(item, error);
    if (error.kind === "NotFound") return done(item, "not_found", { error: message });
    if (isRejected(error)) return done(item, "refused", { error: message });
    if (sent) return keep(item, { lastError: message, uncertain: !notCarriedOut(error) }, message);
    // Explicitly certain unless it already was uncertain: a failed lookup before the write sent nothing new.
    const uncertain = isUncertain(item.entry);
    return keep(
      item,
      { attempts: item.entry.attempts + 1, lastAttemptAt: now(), lastError: message, uncertain },
      message,
    );
  };
  /** A lookup at the service failed: the entry waits, not sent. */
  const lookupFailed = (item: Item, error: ApiError): Promise<SendResult> => {
    heard(error);
    if (error.kind === "RateLimited" && maxPauseMs) return Promise.resolve(rateLimited(error.retryAfterMs));
    const message = `looking it up at the service failed: ${describeError(error)}`;
    return keep(item, { lastLookupAt: now(), lastLookup: "failed", lastError: message }, message);
  };
  /** Records the attempt durably before the request goes out: a crash from here on leaves the entry uncertain. */
  const recordAttempt = async (item: Item, lookup?: string, data?: WarningEntry): Promise<boolean> => {
    const t = now();
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
    const entry = await queues[item.kind].update(item.entry.id, patch as Patch, unchanged);
    if (entry) item.entry = entry as never;
    return entry !== undefined;
  };

  /**
   * A ban of the unban's user queued before it under the player's other key (game id vs `user:<uuid>`), which
   * queueUnban could not match offline: cancelled like one of the same key when the unban may; otherwise returned,
   * and the unban waits for it (sent first, it is then lifted as an older ban). Runs after every such ban's round.
   */
  const otherKeyBans = async (unban: QueueEntry<UnbanEntry>, userId: string): Promise<Lookup<BanEntry | undefined>> => {
    const key = playerKey(unban.data.target);
    // Through the index: bans queued under the user id, or (for an unban by user id) under that user's game id.
    const keys = [`user:${userId}`];
    if (unban.data.target.identifier === null) {
      const user = await api.getUser(userId);
      if (!user.ok && user.error.kind !== "NotFound") return user;
      if (user.ok) keys.push(`id:${user.value.identifier.toLowerCase()}`);
    }
    for (const e of await entriesByKeys(queues.ban, keys)) {
      const ban = e.data;
      if (e.id > unban.id || ban.status !== "ACTIVE" || playerKey(ban.target) === key) continue;
      // Two game ids are two players: only a service user id on one side can hide the same person.
      if (ban.target.identifier !== null && unban.data.target.identifier !== null) continue;
      const owner = await userOf(ban.target, false);
      if (!owner.ok) {
        if (owner.error.kind === "NotFound") continue;
        return owner;
      }
      if (owner.id !== userId) continue;
      // Not cancelled while it may already be at VyHub (its answer lost): the unban waits for its lookup.
      if (!unbanCancels(unban.data, ban) || isUncertain(e)) return { ok: true, value: ban };
      // Only while nobody is sending it: a worker that recorded its attempt first makes the unban wait for it.
      const idle = (cur: QueueEntry<BanEntry>) => cur.data.status === "ACTIVE" && !isUncertain(cur);
      const cancelled = await queues.ban.update(e.id, { data: { ...ban, status: "UNBANNED" } }, idle);
      if (!cancelled && (await queues.ban.get(e.id))) return { ok: true, value: ban };
    }
    return { ok: true, value: undefined };
  };

  const send = async (item: Item): Promise<SendResult> => {
    // Re-read: the entry may have been dropped (`queue drop`) or its ban cancelled by an unban since the listing.
    const current = await queues[item.kind].get(item.entry.id);
    if (!current) return undefined;
    item = { ...item, entry: { ...current, uncertain: isUncertain(current) } } as Item;
    if (item.kind === "ban" && item.entry.data.status === "UNBANNED" && !item.entry.uncertain)
      return done(item, "cancelled");
    if (item.entry.uncertain && (item.entry.lastAttemptAt ?? 0) > now()) {
      // The clock was set back since that attempt: its settle time counts from now, not from a time still to come.
      const moved = await queues[item.kind].update(item.entry.id, { lastAttemptAt: now() });
      if (!moved) return undefined;
      item.entry = { ...moved, uncertain: true } as never;
    }
    const entry = item.entry;
    const due = entry.lastAttemptAt === undefined ? 0 : lookupDueAt(entry.lastAttemptAt, settleMs, now());
    if (entry.uncertain && now() < due) {
      const at = new Date(due).toISOString();
      // Not looked up yet: the first request may still be in progress at the service.
      await report(item, {
        result: "kept",
        uncertain: true,
        error: `${entry.lastError ?? "no answer"}; looked up from ${at}`,
      });
      return "kept";
    }
    const morph = await morphOf(item.kind === "unban" ? item.entry.data.processor : item.entry.data.creator);
    if (morph && !morph.ok) return answered(item, morph.error, false);
    const morphUserId = morph?.id;

    if (item.kind === "ban") {
      const ban = item.entry.data;
      const user = await userOf(ban.target, true);
      if (!user.ok) return answered(item, user.error, false);
      let looked: string | undefined;
      if (item.entry.uncertain) {
        // Also when an unban cancelled it meanwhile: sent before, it may be at VyHub, and then the unban (after it in
        // this player's order) must lift it rather than find nothing.
        const found = await findBan(api, user.id, ban);
        if (!found.ok) return lookupFailed(item, found.error);
        if (found.value) return done(item, "delivered", { found: true }, found.value);
        if (ban.status === "UNBANNED") return done(item, "cancelled");
        looked = "not found";
      }
      if (!(await recordAttempt(item, looked))) return undefined;
      const res = await api.createBan(
        {
          user_id: user.id,
          serverbundle_id: ban.serverbundle_id,
          length: ban.length,
          reason: ban.reason,
          created_on: ban.created_on,
          status: "ACTIVE",
        },
        { morphUserId },
      );
      return res.ok ? done(item, "delivered", {}, res.value) : answered(item, res.error, true);
    }
    if (item.kind === "unban") {
      const unban = item.entry.data;
      const user = await userOf(unban.target, false);
      if (!user.ok) return answered(item, user.error, false);
      const other = await otherKeyBans(item.entry, user.id);
      if (!other.ok) return lookupFailed(item, other.error);
      if (other.value) {
        const message = `waits for the ban of the same player queued before it as ${playerLabel(other.value.target)}`;
        return keep(item, { lastError: message }, message);
      }
      const around = await bansAround(api, user.id, unban.serverbundle_id, unban.created_on);
      if (!around.ok) return lookupFailed(item, around.error);
      const { older, newer } = around.value;
      if (older.length === 0)
        return done(item, "delivered", item.entry.uncertain ? { found: true } : { nothingToLift: true });
      if (!(await recordAttempt(item, `${older.length} older, ${newer.length} newer active ban(s)`))) return undefined;
      if (newer.length === 0) {
        const res = await api.unbanUser(user.id, { morphUserId, bundleId: unban.serverbundle_id });
        return res.ok ? done(item, "delivered") : answered(item, res.error, true);
      }
      // A ban issued after the unban stays: lift the older ones one by one.
      for (const b of older) {
        const res = await api.patchBan(b.id, { status: "UNBANNED" }, { morphUserId });
        if (!res.ok && !isAcceptedWrite(res.error)) return answered(item, res.error, true);
      }
      return done(item, "delivered");
    }
    const warning = item.entry.data;
    const user = await userOf(warning.target, true);
    if (!user.ok) return answered(item, user.error, false);
    let looked: string | undefined;
    if (item.entry.uncertain) {
      const first = item.entry.firstAttemptAt ?? item.entry.createdAt;
      const found = await findWarning(api, user.id, warning, first, claimed);
      if (!found.ok) return lookupFailed(item, found.error);
      if (found.value) {
        claimed.add(found.value.id);
        return done(item, "delivered", { found: true }, found.value);
      }
      looked = "not found";
    }
    // What the service has before this send, so a lost answer is matched by id, not by either clock. An uncertain
    // entry not found keeps its list: nothing outside it is ours yet.
    let seen = warning.seen;
    if (!item.entry.uncertain || !seen) {
      const like = await warningsLike(api, user.id, warning);
      // A key that may not list warnings still sends them (a lost answer is then matched by time).
      if (!like.ok && !isRejected(like.error)) return lookupFailed(item, like.error);
      seen = like.ok ? like.value : undefined;
    }
    if (!(await recordAttempt(item, looked, { ...warning, seen }))) return undefined;
    const res = await sendWarning(api, {
      userId: user.id,
      serverbundleId: warning.serverbundle_id,
      reason: warning.reason,
      morphUserId,
    });
    if (res.ok) claimed.add(res.value.id);
    return res.ok ? done(item, "delivered", {}, res.value) : answered(item, res.error, true);
  };

  // One player's entries are sent by one worker at a time, whether listed or urgent; an urgent call serves the player
  // afresh, so their listed group is not sent again in this round.
  const onePlayer = serialByKey();
  const served = new Set<string>();
  /** A player's entries in order; a kept one stops the rest (a later unban never overtakes the ban it lifts). */
  const sendGroup = async (items: Item[], paced: boolean) => {
    for (let i = 0, limited = 0; i < items.length && !ended;) {
      if (paced && learned) await learned.take(opts.signal).catch(() => {});
      const wait = pausedUntil - performance.now();
      if (wait > 0) await sleep(wait, opts.signal);
      if (opts.signal?.aborted) ended ??= "stopping";
      if (ended) break;
      const result = await send(items[i] as Item);
      if (result === "rate_limited") {
        // The same entry once the service lets requests through; a service that never does ends the round.
        if (++limited >= MAX_RATE_LIMITED && !ended)
          opts.onPause?.({ ended: (ended = `the service answered 429 ${limited} times in a row`) });
        continue;
      }
      limited = 0;
      if (result === "kept") break;
      i++;
    }
  };
  const serveUrgent = async (key: string) => {
    served.add(key);
    await onePlayer(key, async () => {
      const items = (await load(new Set([key]))).sort(byId);
      count(items);
      await sendGroup(items, false);
    });
    await opts.onServed?.(key);
  };
  /**
   * Urgent players are taken by each worker before its next player, and every URGENT_POLL_MS while the round lasts
   * (workers may all be waiting for the service or the pace): served at once, beside the players in progress.
   */
  const serving: Promise<void>[] = [];
  let urgentFailure: { error: unknown } | undefined;
  const takeUrgent = () => {
    const now = (opts.urgent?.() ?? []).map((key) =>
      serveUrgent(key).catch((error: unknown) => void (urgentFailure ??= { error })),
    );
    serving.push(...now);
    return Promise.all(now);
  };
  let sending = true;
  const urgentLoop = async () => {
    if (!opts.urgent) return;
    while (sending && !ended) {
      void takeUrgent();
      await sleep(URGENT_POLL_MS, opts.signal);
      if (opts.signal?.aborted) ended ??= "stopping";
    }
    await Promise.all(serving);
    if (urgentFailure) throw urgentFailure.error;
  };
  const sendAll = async (list: Item[][]) => {
    let next = 0;
    const worker = async () => {
      for (;;) {
        await takeUrgent();
        if (opts.signal?.aborted) ended ??= "stopping";
        if (ended || next >= list.length) return;
        const items = list[next] as Item[];
        list[next++] = []; // let go of what was sent: a backlog's entries are not all kept to the end
        const key = playerKey((items[0] as Item).entry.data.target);
        if (!served.has(key)) await onePlayer(key, () => sendGroup(items, true));
      }
    };
    // Every worker finishes before the round (and its lock) ends, also when one of them failed.
    const results = await Promise.allSettled(
      Array.from({ length: Math.max(1, Math.min(opts.concurrency ?? 4, list.length)) }, worker),
    );
    const failed = results.find((r) => r.status === "rejected");
    if (failed) throw failed.reason;
  };
  const urgentServed = urgentLoop();
  try {
    const listed = await listing;
    count(listed);
    const players = groups(listed);
    // Players with an unban last: a ban of the same person queued under their other key is then sent or kept, never
    // in flight while the unban looks (otherKeyBans; an urgent unban relies on the checks there and in recordAttempt).
    const hasUnban = (items: Item[]) => items.some((i) => i.kind === "unban");
    await sendAll(players.filter((items) => !hasUnban(items)));
    await sendAll(players.filter(hasUnban));
  } finally {
    sending = false;
    await urgentServed;
  }
  return { busy: false, outcomes };
}

/** GET /user/<identifier>?type=…; with `create`, POST /user/ on 404 (and read again if another creator won). */
async function findUser(
  api: Api,
  p: { identifier: string; type: string; name: string },
  create: boolean,
): Promise<UserLookup> {
  const got = await api.getUser(p.identifier, p.type);
  if (got.ok) return { ok: true, id: got.value.id };
  if (got.error.kind !== "NotFound" || !create) return { ok: false, error: got.error };
  const made = await api.createUser({ identifier: p.identifier, type: p.type, username: p.name || undefined });
  if (made.ok) return { ok: true, id: made.value.id };
  if (made.error.kind === "ClientError" && made.error.status === 409) {
    const again = await api.getUser(p.identifier, p.type);
    if (again.ok) return { ok: true, id: again.value.id };
  }
  return { ok: false, error: made.error };
}

/**
 * POST /warning/ (rule 12), with `morph_user_id` when a user issued it (the service then checks their permission)
 * and without for the console. Callers refresh the ban list afterwards: the service may auto-ban at its threshold.
 */
export function sendWarning(
  api: Api,
  w: { userId: string; serverbundleId: string; reason: string; morphUserId?: string },
): ReturnType<Api["createWarning"]> {
  return api.createWarning(
    { user_id: w.userId, serverbundle_id: w.serverbundleId, reason: w.reason },
    { morphUserId: w.morphUserId },
  );
}
