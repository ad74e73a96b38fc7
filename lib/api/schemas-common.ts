/**
 * What the response models share: the service's enums (open: known values ∪ any string), timestamps, durations,
 * and the short forms of a bundle and a user that many answers embed. Its own module so each domain's models
 * (schemas-*.ts) build on it without importing one another.
 */
import * as v from "valibot";
import { Id, openEnum } from "./lenient.ts";

export const USER_TYPES = ["CENTRAL", "STEAM", "DISCORD", "MINECRAFT", "TEAMSPEAK3", "FIVEM", "ASA"] as const;
export const SERVER_TYPES = [
  "GMOD",
  "MINECRAFT",
  "TEAMSPEAK3",
  "DISCORD",
  "FIVEM",
  "RUST",
  "SEVEN_DAYS",
  "ASA",
  "SOURCE",
] as const;
export const SERVER_STATUSES = ["ONLINE", "OFFLINE", "UNKNOWN"] as const;
export const BAN_STATUSES = ["ACTIVE", "UNBANNED"] as const;
export const REWARD_STATUSES = ["OPEN", "EXECUTED", "FAILED"] as const;
export const REWARD_TYPES = ["COMMAND", "SCRIPT", "CREDITS", "MEMBERSHIP", "HTTP"] as const;
export const REWARD_EVENTS = ["DIRECT", "CONNECT", "SPAWN", "DEATH", "DISCONNECT", "DISABLE"] as const;
export const ATTRIBUTE_TYPES = ["NEWEST", "ACCUMULATED"] as const;

export const UserTypeSchema = openEnum(USER_TYPES);
export const ServerTypeSchema = openEnum(SERVER_TYPES);
export const ServerStatusSchema = openEnum(SERVER_STATUSES);

export type UserType = v.InferOutput<typeof UserTypeSchema>;
export type ServerType = v.InferOutput<typeof ServerTypeSchema>;
export type ServerStatus = v.InferOutput<typeof ServerStatusSchema>;

/**
 * ISO-8601 with `Z` or `±hh:mm` and an optional fraction (Pydantic omits zero microseconds). Years past 9999 come
 * in the expanded form (`+192159-…`, six digits and a sign); Date.parse reads them.
 */
export const TIMESTAMP_RE = /^(?:\d{4}|[+-]\d{6})-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})$/i;
/** Timestamps stay strings (the wire form); use `Date.parse` where a number is needed. */
export const TimestampSchema = v.pipe(v.string(), v.regex(TIMESTAMP_RE, "Expected an ISO-8601 timestamp with offset"));
/** Durations are seconds, usually floats (`604800.0`); null means permanent / unlimited. */
export const DurationSchema = v.nullish(v.number());

export const ServerbundleShortSchema = v.looseObject({
  id: Id,
  name: v.string(),
  icon: v.nullish(v.string()),
  sort_id: v.nullish(v.number()),
});
export type ServerbundleShort = v.InferOutput<typeof ServerbundleShortSchema>;

export const UserShortSchema = v.looseObject({
  id: Id,
  username: v.nullish(v.string()),
  type: UserTypeSchema,
  identifier: v.string(),
  avatar: v.nullish(v.string()),
});
export type UserShort = v.InferOutput<typeof UserShortSchema>;

export const SuccessSchema = v.nullish(v.looseObject({ success: v.nullish(v.boolean()) }));
export type Success = v.InferOutput<typeof SuccessSchema>;
