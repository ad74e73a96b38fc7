/**
 * One delivery round of the sanction queues (rules 10–12 and the client-side transition table), shared by `run`'s
 * queue job and every one-shot CLI command. The whole round holds the cross-process lock "sanctions", so any number
 * of processes can call it at once and each entry is sent by exactly one of them, once.
 *
 * Per entry (the spec's transition and error tables; api.md §1.5 for "4xx other than 404"):
 * - ban:     UNBANNED → removed, never sent. POST /ban/: 2xx → removed (delivered); 404 → removed (user not
 *            found); other 4xx → removed (refused, the creator is told why); anything else → kept, attempts+1.
 * - unban:   PATCH /user/<user_id>/ban: 2xx → removed; the user unknown to the service → removed (nothing to
 *            unban); other 4xx → removed (refused); anything else → kept.
 * - warning: POST /warning/: the same as a ban.
 * A player unknown to the service is created first (GET /user/<id>?type=…, POST /user/ on 404) for bans and
 * warnings. Entries of one player go in creation order, one request in flight per player; a kept entry stops that
 * player's sends for the round so a later unban can never overtake the ban it lifts.
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
import type { Logger } from "../log.ts";
import { LockTimeoutError, type QueueEntry, type Store } from "../store/index.ts";
import {
  type BanEntry,
  type Creator,
  DELIVERY_LOCK,
  type PlayerRef,
  type UnbanEntry,
  type WarningEntry,
  playerKey,
  sanctionQueues,
} from "./schemas.ts";

/**
 * - delivered: the service accepted it (removed).
 * - not_found: the service does not know the user (removed; for an unban: nothing to unban).
 * - refused:   another 4xx, e.g. 403 missing permission or 422 (removed; `error` says why).
 * - cancelled: a ban lifted by an unban before it was sent (removed, never sent).
 * - kept:      network error, 5xx, 429 or an invalid answer (kept for the next round; `error` says why).
 */
export type DeliveryResult = "delivered" | "not_found" | "refused" | "cancelled" | "kept";

export type DeliveryOutcome =
  | { kind: "ban"; entry: QueueEntry<BanEntry>; result: DeliveryResult; error?: string; ban?: Ban }
  | { kind: "unban"; entry: QueueEntry<UnbanEntry>; result: DeliveryResult; error?: string }
  | { kind: "warning"; entry: QueueEntry<WarningEntry>; result: DeliveryResult; error?: string; warning?: Warning };

export interface DeliveryReport {
  /** True when another process held the delivery lock for longer than `lockTimeoutMs`: nothing was sent. */
  busy: boolean;
  outcomes: DeliveryOutcome[];
}

export interface DeliverDeps {
  api: Api;
  store: Store;
  logger?: Logger;
  /** For attempt times (default Date.now). */
  now?: () => number;
}

export interface DeliverOptions {
  /** Called for each entry as it is settled (run: tell the creator in game or log; CLI: print). Awaited. */
  onOutcome?: (outcome: DeliveryOutcome) => void | Promise<void>;
  /** How long to wait for a round of another process (default 10 s; the store's lock default). */
  lockTimeoutMs?: number;
  /** Players sent to in parallel (each player still one request at a time). Default 4. */
  concurrency?: number;
  /**
   * Only these players' entries (by `playerKey`), all of them in order: a one-shot command delivers its own
   * player's and leaves the rest to `run`, so concurrent commands do not take each other's entries (and answers).
   */
  players?: ReadonlySet<string>;
}

type Item =
  | { kind: "ban"; entry: QueueEntry<BanEntry> }
  | { kind: "unban"; entry: QueueEntry<UnbanEntry> }
  | { kind: "warning"; entry: QueueEntry<WarningEntry> };

type UserLookup = { ok: true; id: string } | { ok: false; error: ApiError };

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
  const log = deps.logger;
  const queues = sanctionQueues(store);
  const [bans, unbans, warnings] = await Promise.all([queues.ban.list(), queues.unban.list(), queues.warning.list()]);
  const byPlayer = new Map<string, Item[]>();
  const add = (item: Item) => {
    const key = playerKey(item.entry.data.target);
    byPlayer.set(key, [...(byPlayer.get(key) ?? []), item]);
  };
  for (const entry of bans) add({ kind: "ban", entry });
  for (const entry of unbans) add({ kind: "unban", entry });
  for (const entry of warnings) add({ kind: "warning", entry });

  // Users resolved this round, by player key; a creator and a target may be the same player.
  const users = new Map<string, Promise<UserLookup>>();
  const lookup = (p: { identifier: string; type: string; name: string }, create: boolean) => {
    const key = `${playerKey(p)}:${create}`;
    let hit = users.get(key);
    if (!hit) {
      hit = findUser(api, p, create);
      users.set(key, hit);
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

  const outcomes: DeliveryOutcome[] = [];
  const settle = async (outcome: DeliveryOutcome) => {
    outcomes.push(outcome);
    try {
      await opts.onOutcome?.(outcome);
    } catch (e) {
      log?.error(`reporting a ${outcome.kind} outcome failed: ${(e as Error).message}`);
    }
  };

  /** Removes on a final answer, or counts the attempt and keeps the entry. */
  const finish = async (item: Item, result: DeliveryResult, error?: ApiError, value?: Ban | Warning) => {
    const queue = queues[item.kind];
    const message = error ? describeError(error) : undefined;
    if (result === "kept") {
      await queue.update(item.entry.id, {
        attempts: item.entry.attempts + 1,
        lastAttemptAt: now(),
        lastError: message,
      });
    } else await queue.remove(item.entry.id);
    const base = { result, ...(message ? { error: message } : {}) };
    if (item.kind === "ban") await settle({ ...item, ...base, ...(value ? { ban: value as Ban } : {}) });
    else if (item.kind === "warning")
      await settle({ ...item, ...base, ...(value ? { warning: value as Warning } : {}) });
    else await settle({ ...item, ...base });
    return result;
  };
  const failed = (item: Item, error: ApiError) => {
    if (isAcceptedWrite(error)) {
      log?.warn(`delivered, but the answer was unreadable: ${describeError(error)}`);
      return finish(item, "delivered");
    }
    return finish(item, error.kind === "NotFound" ? "not_found" : isRejected(error) ? "refused" : "kept", error);
  };

  const send = async (item: Item): Promise<DeliveryResult | undefined> => {
    // Re-read: the entry may have been dropped (`queue drop`) or its ban cancelled by an unban since the listing.
    const current = await queues[item.kind].get(item.entry.id);
    if (!current) return undefined;
    item = { ...item, entry: current } as Item;
    const morph = await morphOf(item.kind === "unban" ? item.entry.data.processor : item.entry.data.creator);
    if (morph && !morph.ok) return failed(item, morph.error);
    const morphUserId = morph?.id;

    if (item.kind === "ban") {
      const ban = item.entry.data;
      if (ban.status === "UNBANNED") return finish(item, "cancelled");
      const user = await userOf(ban.target, true);
      if (!user.ok) return failed(item, user.error);
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
      return res.ok ? finish(item, "delivered", undefined, res.value) : failed(item, res.error);
    }
    if (item.kind === "unban") {
      const unban = item.entry.data;
      const user = await userOf(unban.target, false);
      if (!user.ok) return failed(item, user.error);
      const res = await api.unbanUser(user.id, { morphUserId, bundleId: unban.serverbundle_id });
      return res.ok ? finish(item, "delivered") : failed(item, res.error);
    }
    const warning = item.entry.data;
    const user = await userOf(warning.target, true);
    if (!user.ok) return failed(item, user.error);
    const res = await sendWarning(api, {
      userId: user.id,
      serverbundleId: warning.serverbundle_id,
      reason: warning.reason,
      morphUserId,
    });
    return res.ok ? finish(item, "delivered", undefined, res.value) : failed(item, res.error);
  };

  const players = [...byPlayer.entries()]
    .filter(([key]) => !opts.players || opts.players.has(key))
    .map(([, items]) => items.sort((a, b) => (a.entry.id < b.entry.id ? -1 : 1)));
  let next = 0;
  const worker = async () => {
    while (next < players.length) {
      const items = players[next++] as Item[];
      for (const item of items) {
        if ((await send(item)) === "kept") break;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(opts.concurrency ?? 4, players.length) }, worker));
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
