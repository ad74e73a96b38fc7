/**
 * Rule 9: the bundle's active bans (GET /server/bundle/<bundle>/ban?active=true, keyed by game identifier), cached
 * in the store as "bans", and the one is-banned check used by the connect hook and the kick after every refresh.
 */
import type { Api, BanList, BanReduced } from "../api/client.ts";
import { describeError } from "../api/errors.ts";
import type { Clock } from "../clock.ts";
import { following } from "../serial.ts";
import { BanListSchema } from "../api/schemas-sanctions.ts";
import type { Messages } from "../messages.ts";
import { type Queue, type QueueEntry, type Store, cacheWrite, idTime } from "../store/index.ts";
import { issuedAfter } from "./reconcile.ts";
import { type BanEntry, type UnbanEntry, enforcedNow, entriesByKeys, sanctionQueues } from "./schemas.ts";

/**
 * The store cache of the last ban list fetched (no age limit: bans are better stale than absent). A list fetched
 * again unchanged is not written again (cache.ts, `sameKept`).
 */
export function banCache(store: Store) {
  return store.cache("bans", BanListSchema, { sameKept: true });
}

export type BanListSource = "api" | "cache" | "none";

/**
 * Each list's keys by lower-cased game id (game ids compare in any case: sameIdentifier), built once per list, so
 * that a player is looked up in a list of 100,000 bans without walking it. A list changes in place only through
 * addListedBan (a new key) and liftBans (new values), which keep it in step.
 */
const keysOf = new WeakMap<BanList, Map<string, string[]>>();

function indexKey(index: Map<string, string[]>, key: string): void {
  const lower = key.toLowerCase();
  const keys = index.get(lower);
  if (keys) keys.push(key);
  else index.set(lower, [key]);
}

/** The keys of `list` that are `identifier` in any case. */
function listedKeys(list: BanList, identifier: string): string[] {
  let index = keysOf.get(list);
  if (!index) {
    index = new Map();
    for (const key of Object.keys(list)) indexKey(index, key);
    keysOf.set(list, index);
  }
  return index.get(identifier.toLowerCase()) ?? [];
}

/** The bans `list` holds for this game id, in any case. */
function listedBans(list: BanList, identifier: string): BanReduced[] {
  return listedKeys(list, identifier).flatMap((key) => list[key] ?? []);
}

/** A delivered ban added to `list` in place (a backlog of thousands must not copy the list once per ban). */
export function addListedBan(list: BanList, ban: BanReduced): void {
  const id = ban.user.identifier;
  const bans = list[id];
  if (bans) return void bans.push(ban);
  list[id] = [ban];
  const index = keysOf.get(list);
  if (index) indexKey(index, id);
}

/**
 * A delivered unban of `identifier` created at `createdOn`: the bans it lifted (issued up to it, as `now` judges:
 * issuedAfter) go from `list`, in place; later ones stay. True when one went. (A delivered unban that found nothing
 * to lift says the same of them: the service holds none of them active.)
 */
export function liftBans(list: BanList, identifier: string, createdOn: string, now: number): boolean {
  const at = Date.parse(createdOn);
  let lifted = false;
  for (const id of listedKeys(list, identifier)) {
    const kept = (list[id] ?? []).filter((b) => issuedAfter(Date.parse(b.created_on), at, now));
    lifted ||= kept.length !== list[id]?.length;
    list[id] = kept;
  }
  return lifted;
}

/**
 * The same in the cached list, so that no process enforces it from there (`run` starting next, or the service down
 * meanwhile): a list cached before the unban would kick the player just unbanned. One read and at most one write for
 * all of `unbans`. A write that fails only leaves the next refresh to correct it.
 */
export async function liftCachedBans(store: Store, unbans: readonly UnbanEntry[], now: number): Promise<void> {
  if (!unbans.some((u) => u.target.identifier !== null)) return;
  const cached = await banCache(store)
    .get()
    .catch(() => undefined);
  if (cached && liftUnbans(cached.data, unbans, now))
    await banCache(store)
      .set(cached.data)
      .catch(() => {});
}

/** liftBans for each of `unbans` known by game id, in place; true when one lifted something. */
function liftUnbans(list: BanList, unbans: readonly UnbanEntry[], now: number): boolean {
  let lifted = false;
  for (const u of unbans)
    if (u.target.identifier !== null) lifted = liftBans(list, u.target.identifier, u.created_on, now) || lifted;
  return lifted;
}

/**
 * The cached list, with the bans lifted that unbans delivered since it was fetched lifted: the cache lags behind them
 * (cachedBanLifts), and a process killed before its lift leaves it behind until the next list is cached.
 */
export async function cachedBans(store: Store, now: number): Promise<{ savedAt: number; data: BanList } | undefined> {
  const cached = await banCache(store).get();
  if (!cached) return undefined;
  // Unreadable: the list as cached, as before there were any.
  const lifted = await sanctionQueues(store)
    .lifted.list()
    .then((entries) => entries.map((e) => e.data))
    .catch(() => []);
  liftUnbans(cached.data, lifted, now);
  return cached;
}

/**
 * A delivered unban is kept for lifting the cached list this long at least: another process's list, asked for before
 * it and answered slowly (a `warn`'s, beside `run`), may be cached after a newer one.
 */
const LIFTED_KEPT_MS = 10 * 60_000;

/** The list asked for at `asked` is cached: it shows the unbans delivered before then (a failure: next time). */
async function forgetLifted(store: Store, asked: number): Promise<void> {
  const lifted = sanctionQueues(store).lifted;
  const before = Math.min(asked, Date.now() - LIFTED_KEPT_MS);
  // By the ids' times (never before the records' own): every fetch of the list, no record read.
  for (const id of await lifted.ids().catch(() => [])) if (idTime(id) < before) await lifted.remove(id).catch(() => {});
}

/** A lift of the cached list waits after the one before for this many times as long as that one took. */
const LIFT_SPACING = 9;

/**
 * liftCachedBans for `run`'s rounds, in the background: the unbans delivered meanwhile are lifted together by the next
 * write, and a write waits after the one before for LIFT_SPACING times as long as it took, so that a drain of
 * thousands of unbans spends at most a tenth of its time reading and writing a list of 100,000 bans, never once per
 * unban. The cache lags by at most that wait and one write (a stop cuts the wait short); `settled` resolves once every
 * unban given so far is in it (a round waits for it, so the refresh after the round never races a lift), and cuts the
 * wait short too: a round of one handed-over unban must not wait nine writes of the list for it.
 */
export function cachedBanLifts(
  store: Store,
  clock: Clock,
  signal?: AbortSignal,
): { lift(unban: UnbanEntry): void; settled(): Promise<void> } {
  let pending: UnbanEntry[] = [];
  let nextAt = -Infinity;
  let last: Promise<void> = Promise.resolve();
  let rush = false;
  let cut: AbortController | undefined;
  const write = following(async () => {
    const wait = nextAt - clock.monotonic();
    if (wait > 0 && !rush && !signal?.aborted) {
      cut = new AbortController();
      await clock.sleep(wait, signal ? AbortSignal.any([signal, cut.signal]) : cut.signal).catch(() => {});
    }
    if (!pending.length) return;
    const batch = pending;
    pending = [];
    const started = clock.monotonic();
    await liftCachedBans(store, batch, clock.now());
    nextAt = clock.monotonic() + LIFT_SPACING * (clock.monotonic() - started);
  });
  return {
    lift(unban) {
      rush = false;
      pending.push(unban);
      last = write().catch(() => {});
    },
    settled() {
      rush = true;
      cut?.abort();
      return last;
    },
  };
}

/**
 * Fetches the active bans and caches them; when the service does not answer, the cached list (rule 9, error table
 * "service unreachable (bans)"). `error` says why the live list was not used; `notCached`, why the live list used
 * could not be cached (other than the disk's failures, which the store reports).
 */
export async function fetchBanList(
  api: Api,
  store: Store,
  bundleId: string,
): Promise<{ list: BanList; source: BanListSource; savedAt?: number; error?: string; notCached?: string }> {
  const asked = Date.now();
  const res = await api.getBundleBans(bundleId);
  if (res.ok) {
    // Neither a full disk nor a list over the store's record cap (64 MiB: some 80,000 bans) stops the live list being
    // enforced. The list is BanListSchema's output: validated again on the way to disk, a refresh of 10,000 bans cost
    // the agent 290 ms of CPU instead of 146 (without the JIT).
    const notCached = await cacheWrite(banCache(store).set(res.value, undefined, { checked: true })).then(
      () => undefined,
      (e: unknown) => (e as Error).message,
    );
    if (!notCached) await forgetLifted(store, asked);
    return { list: res.value, source: "api", ...(notCached ? { notCached } : {}) };
  }
  const error = describeError(res.error);
  const cached = await cachedBans(store, Date.now());
  return cached
    ? { list: cached.data, source: "cache", savedAt: cached.savedAt, error }
    : { list: {}, source: "none", error };
}

export type BanVerdict =
  | { banned: false }
  /**
   * `ban` from the service's list, or `queued` when only a queued ban (not yet delivered) holds; without an id, a ban
   * a command announced before queueing it (kick-line.ts).
   */
  | { banned: true; ban?: BanReduced; queued?: { id?: string; data: BanEntry } };

/** A listed ban still holds at `now`: its status is active and it has not ended (a cached list ages). */
export function banHolds(ban: BanReduced, now: number): boolean {
  if (ban.status === "UNBANNED" || ban.active === false) return false;
  return !ban.ends_on || Date.parse(ban.ends_on) > now;
}

/**
 * Whether the player with this game id is banned: a queued ban (ACTIVE, not yet delivered) counts; a queued unban
 * wins over every ban issued before it (queueUnban has marked those of its key UNBANNED; one queued under the
 * player's other key counts only if queued after it), and a listed ban issued after it (on the web, while it
 * waits) still holds; otherwise the (cached) list decides. Only queued entries enforced now count: a ban or
 * unban from a player whose permission only the service can check takes effect when the service accepts it (the
 * delivered ban joins the list; the delivered unban clears it). The queues are read from the store, so bans written
 * by one-shot CLI processes apply at once.
 */
export async function isBanned(store: Store, list: BanList, playerId: string, now: number): Promise<BanVerdict> {
  return (await banCheck(store, list, now, [playerId]))(playerId);
}

/**
 * Up to this many players are looked up one by one through the index, without counting the queue first: a connect,
 * a ban. Each lookup is two folder reads (bans, unbans), so for more players one listing of each queue is cheaper
 * while the queues are shorter than the player list (the kick after every refresh of the list).
 */
const FEW_PLAYERS = 2;

/**
 * isBanned for many players (the kick after a refresh): reads the queued sanctions once, then answers without I/O.
 * With `playerIds`, only theirs are read (through the queues' index) unless there are many and the queues are
 * shorter than their list: a connect costs the same with 10,000 bans queued as with none. Without, every queued ban
 * and unban is read. The list is never walked per player (listedKeys): nor does a list of 100,000 bans cost a connect.
 */
export async function banCheck(
  store: Store,
  list: BanList,
  now: number,
  playerIds?: readonly string[],
): Promise<(playerId: string) => BanVerdict> {
  const queues = sanctionQueues(store);
  const idKeys = [...new Set((playerIds ?? []).map((id) => `id:${id.toLowerCase()}`))];
  // A few players (a connect, a new ban): their entries alone. Many (the kick after a refresh): the whole queue
  // unless it is longer than their number.
  const whole = async (q: Queue<unknown>) =>
    !playerIds || (playerIds.length > FEW_PLAYERS && (await q.size()) <= playerIds.length);
  const [allBans, allUnbans] = await Promise.all([whole(queues.ban), whole(queues.unban)]);
  const [bans, unbans] = await Promise.all([
    allBans ? queues.ban.list() : entriesByKeys(queues.ban, idKeys),
    allUnbans ? queues.unban.list() : entriesByKeys(queues.unban, idKeys),
  ]);
  const queued = groupBy(bans, (e) => e.data.target.identifier?.toLowerCase());
  // The service users a player's bans (listed or queued) name: an unban by user id (identifier null: the service
  // could not be asked) is theirs. Read through the index only for players such a ban could kick.
  const userIds = (playerId: string) => {
    const key = playerId.toLowerCase();
    const ids = listedBans(list, key).map((b) => b.user.id);
    return new Set([...ids, ...(queued.get(key) ?? []).flatMap((e) => e.data.target.user_id ?? [])]);
  };
  const userKeys = playerIds ? [...new Set(playerIds.flatMap((id) => [...userIds(id)]))].map((u) => `user:${u}`) : [];
  if (!allUnbans && userKeys.length) {
    const read = new Set(unbans.map((e) => e.id));
    unbans.push(...(await entriesByKeys(queues.unban, userKeys)).filter((e) => !read.has(e.id)));
  }
  const unbansOf = groupBy(unbans, (e) => e.data.target.identifier?.toLowerCase() ?? `user:${e.data.target.user_id}`);
  return (playerId) => {
    const key = playerId.toLowerCase();
    const mine = [key, ...[...userIds(playerId)].map((u) => `user:${u}`)]
      .flatMap((k) => unbansOf.get(k) ?? [])
      .filter((e) => enforcedNow(e.data));
    // A queued ban holds unless an unban enforced now was queued after it: queueUnban marks those of the same key
    // UNBANNED; one by user id could not find it there, and cancels it at delivery (kinds/ban.ts).
    const lastUnban = mine.reduce((a, e) => (e.id > a ? e.id : a), "");
    const ban = (queued.get(key) ?? [])
      .filter((e) => e.id > lastUnban && queuedBanHolds(e.data, now))
      .reduce<QueueEntry<BanEntry> | undefined>((a, e) => (!a || e.id > a.id ? e : a), undefined);
    if (ban) return { banned: true, queued: ban };
    // A queued unban overrides the listed bans issued up to it (those it will lift), compared as liftBans does.
    const unbannedAt = Math.max(...mine.map((e) => Date.parse(e.data.created_on)));
    const after = (b: BanReduced) => !mine.length || issuedAfter(Date.parse(b.created_on), unbannedAt, now);
    const holding = listedBans(list, key).filter((b) => banHolds(b, now) && after(b));
    if (!holding.length) return { banned: false };
    // The ban that holds longest explains the kick best: permanent first, then the latest end.
    const end = (b: BanReduced) => (b.ends_on ? Date.parse(b.ends_on) : Number.POSITIVE_INFINITY);
    return { banned: true, ban: holding.reduce((a, b) => (end(b) > end(a) ? b : a)) };
  };
}

/** Items by `key` (none for an undefined key), in their order. */
function groupBy<T>(items: readonly T[], key: (item: T) => string | undefined): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    if (k === undefined) continue;
    const group = out.get(k);
    if (group) group.push(item);
    else out.set(k, [item]);
  }
  return out;
}

/**
 * A queued ban counts for local enforcement at `now`: active (no unban issued since), enforced now, not ended. Also
 * what `run` checks a command's kick line by (kick-line.ts).
 */
export function queuedBanHolds(ban: BanEntry, now: number): boolean {
  if (ban.status !== "ACTIVE" || !enforcedNow(ban)) return false;
  return ban.length === null || Date.parse(ban.created_on) + ban.length * 1000 > now;
}

/** `2026-11-21 12:00 UTC`: one unambiguous form for every player, whatever the server's zone. */
export function formatDate(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

/** The kick text (lang `ban.kick`): reason, creator, end date or "never", and the ban id. */
export function banMessage(messages: Messages, verdict: Extract<BanVerdict, { banned: true }>): string {
  if (verdict.ban) {
    const b = verdict.ban;
    return messages.t("ban.kick", {
      reason: b.reason || "-",
      creator: b.creator?.username || messages.t("ban.console"),
      end: b.ends_on ? formatDate(Date.parse(b.ends_on)) : messages.t("ban.never"),
      ban_id: b.id,
    });
  }
  const q = verdict.queued?.data;
  return messages.t("ban.kick", {
    reason: q?.reason || "-",
    creator: q?.creator?.name || messages.t("ban.console"),
    end: q?.length ? formatDate(Date.parse(q.created_on) + q.length * 1000) : messages.t("ban.never"),
    ban_id: messages.t("ban.pending_id"),
  });
}
