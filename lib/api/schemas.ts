/**
 * valibot schemas for the VyHub response models (docs/service-api.md §4). Lenient on purpose: the service grows
 * fields and enum values between releases, so objects are loose, every optional field is nullish and
 * enums are open (known values ∪ any string).
 */
import * as v from "valibot";

/** Known values plus any other string; the known literals stay visible to the type checker. */
function openEnum<const T extends readonly [string, ...string[]]>(known: T) {
  return v.union([v.picklist(known), v.custom<string & {}>((x) => typeof x === "string", "Expected a string")]);
}

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
export const BanStatusSchema = openEnum(BAN_STATUSES);
export const RewardStatusSchema = openEnum(REWARD_STATUSES);
export const RewardTypeSchema = openEnum(REWARD_TYPES);
export const RewardEventSchema = openEnum(REWARD_EVENTS);
export const AttributeTypeSchema = openEnum(ATTRIBUTE_TYPES);

export type UserType = v.InferOutput<typeof UserTypeSchema>;
export type ServerType = v.InferOutput<typeof ServerTypeSchema>;
export type ServerStatus = v.InferOutput<typeof ServerStatusSchema>;
export type BanStatus = v.InferOutput<typeof BanStatusSchema>;
export type RewardStatus = v.InferOutput<typeof RewardStatusSchema>;
export type RewardType = v.InferOutput<typeof RewardTypeSchema>;
export type RewardEvent = v.InferOutput<typeof RewardEventSchema>;
export type AttributeType = v.InferOutput<typeof AttributeTypeSchema>;

/**
 * ISO-8601 with `Z` or `±hh:mm` and an optional fraction (Pydantic omits zero microseconds). Years past 9999 come
 * in the expanded form (`+192159-…`, six digits and a sign); Date.parse reads them.
 */
export const TIMESTAMP_RE = /^(?:\d{4}|[+-]\d{6})-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})$/i;
/** Timestamps stay strings (the wire form); use `Date.parse` where a number is needed. */
export const TimestampSchema = v.pipe(v.string(), v.regex(TIMESTAMP_RE, "Expected an ISO-8601 timestamp with offset"));
/** Durations are seconds, usually floats (`604800.0`); null means permanent / unlimited. */
export const DurationSchema = v.nullish(v.number());
const Id = v.string();
const Json = v.record(v.string(), v.unknown());

/** An item of a list answer that failed its schema and was left out. */
export interface SkippedItem {
  /** Where in the answer, e.g. `76561198012345671[0]` or `items[3]`. */
  at: string;
  /** The item's own id when it has one, so an operator can find it. */
  id?: string;
  /** The first problem, e.g. `ends_on: Invalid format`. */
  problem: string;
}

/** Items skipped while one answer is parsed; parsing is synchronous, so one collector at a time is enough. */
let skipped: SkippedItem[] | undefined;

/** Parses with `parse` and returns what the lenient lists inside left out, for the caller to report. */
export function collectSkipped<T>(parse: () => T): { result: T; skipped: SkippedItem[] } {
  const outer = skipped;
  const mine: SkippedItem[] = [];
  skipped = mine;
  try {
    return { result: parse(), skipped: mine };
  } finally {
    skipped = outer;
  }
}

/** The items that match `item`; one unreadable item is skipped (and collected), never voids the list. */
function keepValid<T extends v.GenericSchema>(item: T, list: unknown[], at: (i: number) => string) {
  const out: v.InferOutput<T>[] = [];
  for (const [i, x] of list.entries()) {
    const r = v.safeParse(item, x);
    if (r.success) {
      out.push(r.output);
      continue;
    }
    const issue = r.issues[0];
    const field = v.getDotPath(issue);
    const id =
      x && typeof x === "object" && typeof (x as { id?: unknown }).id === "string"
        ? (x as { id: string }).id
        : undefined;
    skipped?.push({ at: at(i), ...(id ? { id } : {}), problem: `${field ? `${field}: ` : ""}${issue.message}` });
  }
  return out;
}

/**
 * A list answer read item by item (see keepValid). Typed as taking the items' input, like a strict array, so it
 * also serves caches (whose schemas read back what they wrote); at run time it takes any array.
 */
export function lenientArray<T extends v.GenericSchema>(item: T, name = "") {
  return v.pipe(
    v.array(v.unknown()),
    v.transform((list) => keepValid(item, list, (i) => `${name}[${i}]`)),
  ) as unknown as v.GenericSchema<v.InferInput<T>[], v.InferOutput<T>[]>;
}

/** A keyed answer of lists (foreign id → items), read item by item (see keepValid). */
export function lenientListMap<T extends v.GenericSchema>(item: T) {
  return v.pipe(
    v.record(v.string(), v.array(v.unknown())),
    v.transform((map) => {
      const out: Record<string, v.InferOutput<T>[]> = {};
      for (const [key, list] of Object.entries(map)) out[key] = keepValid(item, list, (i) => `${key}[${i}]`);
      return out;
    }),
  ) as unknown as v.GenericSchema<Record<string, v.InferInput<T>[]>, Record<string, v.InferOutput<T>[]>>;
}

export const ServerbundleShortSchema = v.looseObject({
  id: Id,
  name: v.string(),
  icon: v.nullish(v.string()),
  sort_id: v.nullish(v.number()),
});
export type ServerbundleShort = v.InferOutput<typeof ServerbundleShortSchema>;

export const GroupShortSchema = v.looseObject({
  id: Id,
  name: v.string(),
  color: v.nullish(v.string()),
  permission_level: v.number(),
});
export type GroupShort = v.InferOutput<typeof GroupShortSchema>;

export const ServerSchema = v.looseObject({
  id: Id,
  name: v.string(),
  type: ServerTypeSchema,
  address: v.nullish(v.string()),
  port: v.nullish(v.number()),
  users_max: v.nullish(v.number()),
  users_current: v.nullish(v.number()),
  map: v.nullish(v.string()),
  serverbundle_id: v.nullish(Id),
  extra: v.nullish(Json),
  hidden: v.nullish(v.boolean()),
  last_update: v.nullish(TimestampSchema),
  serverbundle: v.nullish(ServerbundleShortSchema),
  status: v.nullish(ServerStatusSchema),
});
export type Server = v.InferOutput<typeof ServerSchema>;

export const UserShortSchema = v.looseObject({
  id: Id,
  username: v.nullish(v.string()),
  type: UserTypeSchema,
  identifier: v.string(),
  avatar: v.nullish(v.string()),
});
export type UserShort = v.InferOutput<typeof UserShortSchema>;

export const UserActivitySchema = v.looseObject({
  extra: v.nullish(Json),
  last_online: v.nullish(TimestampSchema),
});

export const UserSchema = v.looseObject({
  id: Id,
  type: UserTypeSchema,
  identifier: v.string(),
  registered_on: v.nullish(TimestampSchema),
  username: v.nullish(v.string()),
  avatar: v.nullish(v.string()),
  admin: v.nullish(v.boolean()),
  credit_account_id: v.nullish(Id),
  attributes: v.nullish(Json),
  email: v.nullish(v.string()),
  email_notification: v.nullish(v.boolean()),
  activities: v.nullish(v.array(UserActivitySchema)),
  linked_users: v.nullish(v.array(v.looseObject({ id: Id, type: UserTypeSchema, identifier: v.string() }))),
});
export type User = v.InferOutput<typeof UserSchema>;

export const PropertySchema = v.looseObject({
  name: v.string(),
  granted: v.boolean(),
  value: v.nullish(v.string()),
});
export type Property = v.InferOutput<typeof PropertySchema>;

export const MappingSchema = v.looseObject({
  id: v.nullish(Id),
  name: v.string(),
  /** null: valid for every bundle. */
  serverbundle_id: v.nullish(Id),
  group_id: v.nullish(Id),
});
export type Mapping = v.InferOutput<typeof MappingSchema>;

export const GroupSchema = v.looseObject({
  id: Id,
  name: v.string(),
  permission_level: v.number(),
  color: v.nullish(v.string()),
  properties: v.nullish(v.record(v.string(), PropertySchema)),
  mappings: v.array(MappingSchema),
  is_team: v.nullish(v.boolean()),
  max_ban_length: DurationSchema,
});
export type Group = v.InferOutput<typeof GroupSchema>;

export const MembershipSchema = v.looseObject({
  id: Id,
  bounds: v.nullish(v.string()),
  begin: TimestampSchema,
  end: v.nullish(TimestampSchema),
  group: GroupShortSchema,
  active: v.boolean(),
  user_id: Id,
  serverbundle: v.nullish(ServerbundleShortSchema),
});
export type Membership = v.InferOutput<typeof MembershipSchema>;

export const SuccessSchema = v.nullish(v.looseObject({ success: v.nullish(v.boolean()) }));
export type Success = v.InferOutput<typeof SuccessSchema>;

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

export interface Page<T> {
  items: T[];
  total: number;
  page: number;
  size: number;
}
/** Page[T]: 1-based `page`; `total` counts all items before slicing. */
export function pageSchema<T extends v.GenericSchema>(item: T) {
  return v.looseObject({ items: lenientArray(item, "items"), total: v.number(), page: v.number(), size: v.number() });
}
export const BanPageSchema = pageSchema(BanSchema);
export const WarningPageSchema = pageSchema(WarningSchema);

export const AttributeDefinitionSchema = v.looseObject({
  id: Id,
  name: v.string(),
  title: v.nullish(v.string()),
  /** Free string: "HOURS" or "Hours" in the wild. */
  unit: v.nullish(v.string()),
  type: AttributeTypeSchema,
  statistics_interval: v.nullish(v.string()),
  accumulation_interval: v.nullish(v.string()),
  unspecific: v.nullish(v.boolean()),
  requirement_set_id: v.nullish(Id),
});
export type AttributeDefinition = v.InferOutput<typeof AttributeDefinitionSchema>;

/** POST /user/attribute/ echoes its input model (no id). */
export const UserAttributeSchema = v.looseObject({
  definition_id: Id,
  user_id: Id,
  value: v.union([v.string(), v.number()]),
  serverbundle_id: v.nullish(Id),
  date: v.nullish(TimestampSchema),
});
export type UserAttribute = v.InferOutput<typeof UserAttributeSchema>;

export const RewardSchema = v.looseObject({
  id: Id,
  name: v.string(),
  type: RewardTypeSchema,
  /** COMMAND: {command}, SCRIPT: {script}; other types carry other keys. */
  data: v.nullish(Json),
  order: v.nullish(v.number()),
  once: v.nullish(v.boolean()),
  once_from_all: v.nullish(v.boolean()),
  on_event: RewardEventSchema,
  reactivate_on_extend: v.nullish(v.boolean()),
  /** Nullable since 2024-04 (rewards without a bundle). */
  serverbundle: v.nullish(ServerbundleShortSchema),
  requirement_set: v.nullish(Json),
});
export type Reward = v.InferOutput<typeof RewardSchema>;

export const PurchaseSchema = v.looseObject({
  id: Id,
  date: v.nullish(TimestampSchema),
  amount_total: v.nullish(v.number()),
  /** e.g. "4.99 €", used for %purchase_amount%. */
  amount_text: v.nullish(v.string()),
  status: v.nullish(v.string()),
  credits: v.nullish(v.number()),
});
export type Purchase = v.InferOutput<typeof PurchaseSchema>;

export const AppliedPacketSchema = v.looseObject({
  id: Id,
  status: v.nullish(v.string()),
  packet: v.looseObject({ id: Id, title: v.string() }),
  /** null when applied manually. */
  purchase: v.nullish(PurchaseSchema),
  bounds: v.nullish(v.string()),
  begin: v.nullish(TimestampSchema),
  end: v.nullish(TimestampSchema),
});
export type AppliedPacket = v.InferOutput<typeof AppliedPacketSchema>;

export const AppliedRewardSchema = v.looseObject({
  /** The applied-reward id: the executed queue and PATCH use this, not reward.id. */
  id: Id,
  active: v.boolean(),
  reward: RewardSchema,
  user: UserShortSchema,
  applied_packet_id: Id,
  applied_packet: AppliedPacketSchema,
  status: RewardStatusSchema,
  /** Server ids the reward has run on. */
  executed_on: v.array(Id),
});
export type AppliedReward = v.InferOutput<typeof AppliedRewardSchema>;

/** Keyed by foreign identifier (foreign_ids=true) or VyHub user id. */
export const AppliedRewardMapSchema = lenientListMap(AppliedRewardSchema);
export type AppliedRewardMap = v.InferOutput<typeof AppliedRewardMapSchema>;

export const AdvertSchema = v.looseObject({
  id: Id,
  title: v.nullish(v.string()),
  /** Multi-line; may hold <red>…</red> colour tags. */
  content: v.string(),
  sort_id: v.nullish(v.number()),
  /** Pydantic Color: a CSS name, #rgb, #rrggbb or with alpha. */
  color: v.nullish(v.string()),
  enabled: v.boolean(),
  serverbundles: v.nullish(v.array(ServerbundleShortSchema)),
});
export type Advert = v.InferOutput<typeof AdvertSchema>;

export const GroupListSchema = lenientArray(GroupSchema);
export const AdvertListSchema = lenientArray(AdvertSchema);

/** GET /general/frontend-url: the community's web address, for links such as the server dashboard. */
export const FrontendUrlSchema = v.looseObject({ frontend_url: v.pipe(v.string(), v.url()) });

// Request bodies (sent as typed JSON; the service would coerce strings, but we don't rely on it).

export interface UserActivityAdd {
  /** VyHub user id. */
  user_id: string;
  extra?: Record<string, unknown>;
}
export interface ServerStatusPatch {
  users_max?: number;
  users_current?: number;
  map?: string;
  is_alive?: boolean;
  user_activities?: UserActivityAdd[];
}
export interface UserAdd {
  identifier: string;
  type: UserType;
  username?: string;
}
export interface MembershipAdd {
  group_id: string;
  serverbundle_id: string;
  begin?: string | null;
  /** Omitted or null: unlimited. */
  end?: string | null;
}
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
export interface AttributeDefinitionAdd {
  name: string;
  title: string;
  unit: string;
  type: AttributeType;
  accumulation_interval?: string;
  statistics_interval?: string;
  unspecific: boolean;
}
export interface UserAttributeAdd {
  definition_id: string;
  user_id: string;
  /** Hours as a decimal string ("1.25"): the contract types it `string`. */
  value: string;
  serverbundle_id?: string;
  date?: string;
}
