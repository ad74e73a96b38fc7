/**
 * The models of bans and warnings (docs/service-api.md §4): the ban list, single bans and warnings, their pages, and
 * the request bodies that create them. One domain a module; schemas.ts is the index importers use.
 */
import * as v from "valibot";
import { Id, lenientListMap, openEnum, pageSchema } from "./lenient.ts";
import {
  BAN_STATUSES,
  DurationSchema,
  ServerbundleShortSchema,
  TimestampSchema,
  UserShortSchema,
} from "./schemas-common.ts";

// Each domain's enums with its models: a command that reads only the server record builds none of them.
export const BanStatusSchema = openEnum(BAN_STATUSES);
export type BanStatus = v.InferOutput<typeof BanStatusSchema>;

/** The ban-list value (BanModelReduced): no protests. */
export const BanReducedSchema = v.looseObject({
  id: Id,
  length: DurationSchema,
  reason: v.nullish(v.string()),
  /** null: console or unknown. */
  creator: v.nullish(UserShortSchema),
  created_on: TimestampSchema,
  status: BanStatusSchema,
  /** null: permanent. */
  ends_on: v.nullish(TimestampSchema),
  active: v.boolean(),
  user: UserShortSchema,
  /** null: global ban. */
  serverbundle: v.nullish(ServerbundleShortSchema),
});
export type BanReduced = v.InferOutput<typeof BanReducedSchema>;

export const BanSchema = v.looseObject({
  ...BanReducedSchema.entries,
  protests: v.nullish(v.array(v.looseObject({ id: Id, status: v.nullish(v.string()) }))),
});
export type Ban = v.InferOutput<typeof BanSchema>;

/** Keyed by the banned user's foreign identifier (SteamID64, Minecraft UUID, …). */
export const BanListSchema = lenientListMap(BanReducedSchema);
export type BanList = v.InferOutput<typeof BanListSchema>;

export const WarningSchema = v.looseObject({
  id: Id,
  reason: v.nullish(v.string()),
  /** Required in the typedef, but console warnings may carry none. */
  creator: v.nullish(UserShortSchema),
  created_on: TimestampSchema,
  active: v.boolean(),
  disabled: v.boolean(),
  user: UserShortSchema,
  serverbundle: v.nullish(ServerbundleShortSchema),
});
export type Warning = v.InferOutput<typeof WarningSchema>;

export const BanPageSchema = pageSchema(BanSchema);
export const WarningPageSchema = pageSchema(WarningSchema);

// Request bodies (see schemas.ts).

export interface BanAdd {
  user_id: string;
  /** Seconds; null = permanent. */
  length?: number | null;
  reason?: string | null;
  /** null = global ban. */
  serverbundle_id?: string | null;
  creator_id?: string | null;
  /** Keeps the original time of a ban queued offline. */
  created_on?: string;
  /** UNBANNED when lifted locally while still queued. */
  status?: BanStatus;
}
export interface WarningAdd {
  user_id: string;
  serverbundle_id: string;
  reason?: string;
}
