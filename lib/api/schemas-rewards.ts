/**
 * The models of rewards and the packets that grant them (docs/service-api.md §4): applied rewards keyed by user, with
 * their packet and purchase. One domain a module; schemas.ts is the index importers use.
 */
import * as v from "valibot";
import { Id, Json, lenientListMap, openEnum } from "./lenient.ts";
import {
  REWARD_EVENTS,
  REWARD_STATUSES,
  REWARD_TYPES,
  ServerbundleShortSchema,
  TimestampSchema,
  UserShortSchema,
} from "./schemas-common.ts";

// Each domain's enums with its models: a command that reads only the server record builds none of them.
export const RewardStatusSchema = openEnum(REWARD_STATUSES);
export const RewardTypeSchema = openEnum(REWARD_TYPES);
export const RewardEventSchema = openEnum(REWARD_EVENTS);
export type RewardStatus = v.InferOutput<typeof RewardStatusSchema>;
export type RewardType = v.InferOutput<typeof RewardTypeSchema>;
export type RewardEvent = v.InferOutput<typeof RewardEventSchema>;

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
