// Applied rewards (what game servers execute) and adverts.
import { advertModel, appliedRewardModel } from "../models.ts";
import { byPath, must, type Ctx, type Route } from "../http.ts";
import { REWARD_STATUSES, type RewardStatus } from "../state.ts";
import { opt } from "../validate.ts";

/** Reward types a game server can run; `for_server_id` keeps only these. */
const GAME_SERVER_TYPES = ["COMMAND", "SCRIPT"];

function appliedRewards(ctx: Ctx) {
  const { input, query, state } = ctx;
  const users = input.queryList(query, "user_id", "uuid");
  const bundles = input.queryList(query, "serverbundle_id", "uuid");
  const statuses = input.queryList(query, "status", { enum: REWARD_STATUSES });
  const packets = input.queryList(query, "applied_packet_id", "uuid");
  const active = input.query<boolean>(query, "active", "bool");
  const forServer = input.query(query, "for_server_id", "uuid");
  const foreignIds = input.query<boolean>(query, "foreign_ids", "bool") ?? false;
  input.done();
  if (forServer) must(state.servers, forServer, "Server");
  const out: Record<string, unknown[]> = {};
  for (const a of state.appliedRewards.values()) {
    if (users && !users.includes(a.user_id)) continue;
    // A reward without a bundle (possible since 2024-04) applies to every bundle.
    if (bundles && a.reward.serverbundle_id !== null && !bundles.includes(a.reward.serverbundle_id)) continue;
    if (statuses && !statuses.includes(a.status)) continue;
    if (packets && !packets.includes(a.applied_packet.id)) continue;
    if (active !== null && a.active !== active) continue;
    if (forServer && (a.executed_on.includes(forServer) || !GAME_SERVER_TYPES.includes(a.reward.type))) continue;
    const user = state.users.get(a.user_id);
    if (!user) continue;
    (out[foreignIds ? user.identifier : user.id] ??= []).push(appliedRewardModel(state, a));
  }
  return out;
}

/**
 * Unions `executed_on` (never replaces it). `status` changes only when the body sets it: the service's rule for
 * flipping to EXECUTED is undocumented, and keeping OPEN lets `for_server_id` alone hide executed rewards.
 */
function patchAppliedReward(ctx: Ctx) {
  const a = byPath(ctx, ctx.state.appliedRewards, "Applied reward");
  const body = ctx.input.body<{ status: RewardStatus | null; executed_on: string[] | null }>(ctx.body, {
    status: opt({ enum: REWARD_STATUSES }),
    executed_on: opt({ list: "uuid" }),
  });
  ctx.input.done();
  for (const id of body.executed_on ?? []) if (!a.executed_on.includes(id)) a.executed_on.push(id);
  if (body.status) a.status = body.status;
  return appliedRewardModel(ctx.state, a);
}

/** `enabled` is the declared filter; the integrations' `active=true` is undeclared and ignored, as by the service. */
function adverts(ctx: Ctx) {
  const bundles = ctx.input.queryList(ctx.query, "serverbundle_id", "uuid");
  const enabled = ctx.input.query<boolean>(ctx.query, "enabled", "bool");
  ctx.input.done();
  return [...ctx.state.adverts.values()]
    .filter((a) => !bundles || a.serverbundle_ids.some((id) => bundles.includes(id)))
    .filter((a) => enabled === null || a.enabled === enabled)
    .sort((a, b) => a.sort_id - b.sort_id)
    .map((a) => advertModel(ctx.state, a));
}

export const rewardRoutes: Route[] = [
  { method: "GET", path: "/packet/reward/applied/user", handle: appliedRewards },
  { method: "PATCH", path: "/packet/reward/applied/{uuid}", handle: patchAppliedReward },
  { method: "GET", path: "/advert/", handle: adverts },
];
