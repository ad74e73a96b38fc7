/**
 * The models of users, groups, memberships and playtime attributes (docs/service-api.md §4), and the request bodies
 * that create them. One domain a module; schemas.ts is the index importers use.
 */
import * as v from "valibot";
import { Id, Json, lenientArray, openEnum } from "./lenient.ts";
import {
  ATTRIBUTE_TYPES,
  DurationSchema,
  ServerbundleShortSchema,
  TimestampSchema,
  UserTypeSchema,
  type UserType,
} from "./schemas-common.ts";

// Each domain's enums with its models: a command that reads only the server record builds none of them.
export const AttributeTypeSchema = openEnum(ATTRIBUTE_TYPES);
export type AttributeType = v.InferOutput<typeof AttributeTypeSchema>;

export const GroupShortSchema = v.looseObject({
  id: Id,
  name: v.string(),
  color: v.nullish(v.string()),
  permission_level: v.number(),
});
export type GroupShort = v.InferOutput<typeof GroupShortSchema>;

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

export const GroupListSchema = lenientArray(GroupSchema);

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

// Request bodies (see schemas.ts).

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
