/**
 * The durable sanction queues (docs/client-interface.md rules 10–12, §4.6): one store queue
 * each for bans ("ban"), unbans ("unban") and warnings ("warning"), filled by `run` (in-game and console commands)
 * and by one-shot CLI commands, drained by `deliverQueues`. Entries are validated on every read, so a hand-edited
 * or truncated file is quarantined instead of poisoning the queue (docs/pitfalls.md, pitfall 7).
 */
import * as v from "valibot";
import { TimestampSchema } from "../api/schemas-common.ts";
import type { Queue, QueueEntry, Store } from "../store/index.ts";

const text = v.pipe(v.string(), v.nonEmpty());

/**
 * A player as the sanction is about: the game's id and the service's user type, plus what is known of them. Either
 * `identifier` or `user_id` is known: a service user id named while the service did not answer is queued as given
 * (identifier null) and resolved by the service at delivery.
 */
export const PlayerRefSchema = v.pipe(
  v.object({
    /** The player's unique id at the authentication source (SteamID64, Minecraft UUID, …); the ban list's key. */
    identifier: v.nullable(text),
    /** The service's user type (STEAM, MINECRAFT, …). */
    type: text,
    /** The service user id when already known; otherwise looked up (and created) at delivery. */
    user_id: v.nullable(text),
    /** Nick, for messages. */
    name: v.string(),
  }),
  v.check((p) => p.identifier !== null || p.user_id !== null, "a player needs identifier or user_id"),
);
export type PlayerRef = v.InferOutput<typeof PlayerRefSchema>;

/**
 * Who issued a sanction, when it was a player or a user acting via `--as`: sent as `morph_user_id` so the service
 * checks their permissions. Either `user_id` is known, or `identifier` + `type` let delivery look it up.
 * A null creator is the console operator: sent without morph (the service checks the server's own rights).
 */
export const CreatorSchema = v.pipe(
  v.object({
    name: v.string(),
    user_id: v.nullable(text),
    identifier: v.nullable(text),
    type: v.nullable(text),
  }),
  v.check(
    (c) => c.user_id !== null || (c.identifier !== null && c.type !== null),
    "creator needs user_id or identifier+type",
  ),
);
export type Creator = v.InferOutput<typeof CreatorSchema>;

/**
 * When a queued ban or unban counts for local enforcement (the kick at connect) before the service has answered:
 * - now:       at once: the console, the CLI, and players in a trusted in-game group (config commands.trusted_groups).
 * - on_accept: only once the service accepted it: any other player, whose permission only the service can check.
 * Decided when the entry is written; an entry without it (written by an older version) counts as "now".
 */
const ENFORCE_MODES = ["now", "on_accept"] as const;
export type Enforce = (typeof ENFORCE_MODES)[number];

/** Whether a queued ban or unban counts for local enforcement before delivery. */
export function enforcedNow(entry: { enforce?: Enforce | undefined }): boolean {
  return (entry.enforce ?? "now") === "now";
}

export const QUEUED_BAN_STATUSES = ["ACTIVE", "UNBANNED"] as const;
export type QueuedBanStatus = (typeof QUEUED_BAN_STATUSES)[number];

/** Queue "ban": one ban to send with POST /ban/. */
export const BanEntrySchema = v.object({
  target: PlayerRefSchema,
  /** Seconds; null = permanent (sent as null). */
  length: v.nullable(v.pipe(v.number(), v.integer(), v.minValue(1))),
  reason: text,
  creator: v.nullable(CreatorSchema),
  /** When the ban was issued (sent as created_on, so a ban delivered late still ends when it should). */
  created_on: TimestampSchema,
  /** UNBANNED once an unban of the player was issued while this entry was still queued: never sent. */
  status: v.picklist(QUEUED_BAN_STATUSES),
  serverbundle_id: text,
  enforce: v.optional(v.picklist(ENFORCE_MODES)),
});
export type BanEntry = v.InferOutput<typeof BanEntrySchema>;

/** Queue "unban": PATCH /user/<user_id>/ban for the target, with the processor as morph. */
export const UnbanEntrySchema = v.object({
  target: PlayerRefSchema,
  /** The processor (the spec's "processor id"); null = console. */
  processor: v.nullable(CreatorSchema),
  created_on: TimestampSchema,
  serverbundle_id: text,
  enforce: v.optional(v.picklist(ENFORCE_MODES)),
});
export type UnbanEntry = v.InferOutput<typeof UnbanEntrySchema>;

/** Queue "warning": POST /warning/; the service may auto-ban at its warning threshold, so bans refresh after. */
export const WarningEntrySchema = v.object({
  target: PlayerRefSchema,
  reason: text,
  creator: v.nullable(CreatorSchema),
  created_on: TimestampSchema,
  serverbundle_id: text,
  /**
   * The ids of the service's warnings with this user, bundle and reason just before the entry was last sent
   * (recorded with the attempt): after a lost answer, any other such warning is the one it created.
   */
  seen: v.optional(v.array(text)),
});
export type WarningEntry = v.InferOutput<typeof WarningEntrySchema>;

/**
 * The keys a sanction is found by in its queue's index (store `byKey`): its player's game id (any type, compared in
 * lower case like sameIdentifier) and their service user id when known. One player's entries are read without
 * reading the queue: a one-shot command's round, the unban's cancelling, the is-banned check at connect.
 */
export function playerIndexKeys(p: { identifier: string | null; user_id: string | null }): string[] {
  const keys: string[] = [];
  if (p.identifier !== null) keys.push(`id:${p.identifier.toLowerCase()}`);
  if (p.user_id !== null) keys.push(`user:${p.user_id}`);
  return keys;
}

/**
 * The index key under which every entry of a delivery group is found, from its playerKey: `<type>:<game id>` is
 * found under `id:<game id>`, `user:<id>` under itself (user types are upper case, so none is "user").
 */
export function groupIndexKeyOf(key: string): string {
  return key.startsWith("user:") ? key : `id:${key.slice(key.indexOf(":") + 1)}`;
}

const indexed = { keys: (d: { target: PlayerRef }) => playerIndexKeys(d.target) };

/**
 * The three typed queues over a store (several processes may hold them on the same directory), one set of queue
 * objects a store: a queue learns once that its index is built, where a new object read the index's
 * `built` file again at every ban check (40 reads a second for a host's server at ×60, which filled the file
 * system's thread pool and held back a kick behind them).
 */
const opened = new WeakMap<Store, ReturnType<typeof openSanctionQueues>>();
const openSanctionQueues = (store: Store) => ({
  ban: store.queue("ban", BanEntrySchema, indexed),
  unban: store.queue("unban", UnbanEntrySchema, indexed),
  warning: store.queue("warning", WarningEntrySchema, indexed),
  /** Delivered unbans the cached ban list may not show lifted yet (banlist.ts cachedBans), never sent again. */
  lifted: store.queue("ban_lifts", UnbanEntrySchema),
});

export function sanctionQueues(store: Store): ReturnType<typeof openSanctionQueues> {
  let queues = opened.get(store);
  if (!queues) opened.set(store, (queues = openSanctionQueues(store)));
  return queues;
}

/** The entries of `queue` under any of `keys` (byKey), each once, oldest first. */
export async function entriesByKeys<T>(queue: Queue<T>, keys: readonly string[]): Promise<QueueEntry<T>[]> {
  // One key (a player known by game id only, as a ban's usually is): byKey's entries are those, each once, in order.
  if (keys.length === 1) return queue.byKey(keys[0]!);
  const byId = new Map<string, QueueEntry<T>>();
  for (const key of keys) for (const e of await queue.byKey(key)) byId.set(e.id, e);
  return [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
}
export type SanctionQueues = ReturnType<typeof sanctionQueues>;

/** The lock that makes a delivery round exclusive across `run` and every one-shot CLI process. */
export const DELIVERY_LOCK = "sanctions";

/** Game ids compare case-insensitively (Minecraft UUIDs arrive in either case); an unknown id matches nothing. */
export function sameIdentifier(a: string | null, b: string | null): boolean {
  return a !== null && b !== null && a.toLowerCase() === b.toLowerCase();
}

/**
 * A player's key for "one send in flight per player" and for matching queue entries to a player: the game id, or
 * for a target known only by its service user id, that id.
 */
export function playerKey(p: { identifier: string | null; type: string; user_id?: string | null }): string {
  return p.identifier !== null ? `${p.type}:${p.identifier.toLowerCase()}` : `user:${p.user_id ?? ""}`;
}

/** The same player: the same game id, or the same service user id. */
export function samePlayer(a: PlayerRef, b: PlayerRef): boolean {
  return playerKey(a) === playerKey(b) || (a.user_id !== null && a.user_id === b.user_id);
}

/** The same issuer (a player or `--as` user); the console (null) is never "the same" as anyone. */
export function sameIssuer(a: Creator | null, b: Creator | null): boolean {
  if (!a || !b) return false;
  if (a.user_id !== null && a.user_id === b.user_id) return true;
  return a.type === b.type && sameIdentifier(a.identifier, b.identifier);
}

/**
 * Whether an unban cancels a still-queued ban of its player: one enforced now (console, CLI, trusted group) every
 * such ban; one whose permission only the service can check only the processor's own.
 */
export function unbanCancels(unban: { enforce?: Enforce | undefined; processor: Creator | null }, ban: BanEntry) {
  return enforcedNow(unban) || sameIssuer(ban.creator, unban.processor);
}

/** How a player is named in messages: nick, else game id, else service user id. */
export function playerLabel(p: PlayerRef): string {
  return p.name || p.identifier || `VyHub user ${p.user_id ?? "?"}`;
}
