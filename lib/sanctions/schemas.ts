/**
 * The durable sanction queues (client-interface.md rules 10–12, "Ban queue entry (client side)"): one store queue
 * each for bans ("ban"), unbans ("unban") and warnings ("warning"), filled by `run` (in-game and console commands)
 * and by one-shot CLI commands, drained by `deliverQueues`. Entries are validated on every read, so a hand-edited
 * or truncated file is quarantined instead of poisoning the queue (integrations.md, "Queue poisoning").
 */
import * as v from "valibot";
import { TimestampSchema } from "../api/schemas.ts";
import type { Store } from "../store/index.ts";

const text = v.pipe(v.string(), v.nonEmpty());

/** A player as the sanction is about: the game's id and the service's user type, plus what is known of them. */
export const PlayerRefSchema = v.object({
  /** The player's unique id at the authentication source (SteamID64, Minecraft UUID, …); the ban list's key. */
  identifier: text,
  /** The service's user type (STEAM, MINECRAFT, …). */
  type: text,
  /** The service user id when already known; otherwise looked up (and created) at delivery. */
  user_id: v.nullable(text),
  /** Nick, for messages. */
  name: v.string(),
});
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
});
export type BanEntry = v.InferOutput<typeof BanEntrySchema>;

/** Queue "unban": PATCH /user/<user_id>/ban for the target, with the processor as morph. */
export const UnbanEntrySchema = v.object({
  target: PlayerRefSchema,
  /** The processor (the spec's "processor id"); null = console. */
  processor: v.nullable(CreatorSchema),
  created_on: TimestampSchema,
  serverbundle_id: text,
});
export type UnbanEntry = v.InferOutput<typeof UnbanEntrySchema>;

/** Queue "warning": POST /warning/; the service may auto-ban at its warning threshold, so bans refresh after. */
export const WarningEntrySchema = v.object({
  target: PlayerRefSchema,
  reason: text,
  creator: v.nullable(CreatorSchema),
  created_on: TimestampSchema,
  serverbundle_id: text,
});
export type WarningEntry = v.InferOutput<typeof WarningEntrySchema>;

/** The three typed queues over a store (several processes may hold them on the same directory). */
export function sanctionQueues(store: Store) {
  return {
    ban: store.queue("ban", BanEntrySchema),
    unban: store.queue("unban", UnbanEntrySchema),
    warning: store.queue("warning", WarningEntrySchema),
  };
}
export type SanctionQueues = ReturnType<typeof sanctionQueues>;

/** The lock that makes a delivery round exclusive across `run` and every one-shot CLI process. */
export const DELIVERY_LOCK = "sanctions";

/** Game ids compare case-insensitively (Minecraft UUIDs arrive in either case). */
export function sameIdentifier(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

/** A player's key for "one send in flight per player" and for matching queue entries to a player. */
export function playerKey(p: { identifier: string; type: string }): string {
  return `${p.type}:${p.identifier.toLowerCase()}`;
}
