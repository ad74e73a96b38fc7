// The sandbox's own control routes (not VyHub's API, not in its openapi.json): what `hub-agent sandbox reward`
// calls on a running sandbox, so an operator can try rewards without a shop.
import { appliedRewardModel } from "../models.ts";
import { ApiError, type Ctx, type Route } from "../http.ts";
import { findPlayer } from "../players.ts";
import { REWARD_EVENTS } from "../state.ts";
import { opt, req } from "../validate.ts";

/** Relative to the base path, like every route. */
export const REWARD_CONTROL_PATH = "/_sandbox/reward";

/**
 * Adds a COMMAND reward for a player (nick, platform id or user id), as if they had bought a packet: once, valid in
 * every bundle, run on `on_event` (DIRECT: by the next rewards round while the player is online).
 */
function addReward(ctx: Ctx) {
  const body = ctx.input.body<{ player: string; command: string; on_event: string | null; name: string | null }>(
    ctx.body,
    { player: req("str"), command: req("str"), on_event: opt({ enum: REWARD_EVENTS }), name: opt("str") },
  );
  ctx.input.done();
  if (!body.command.trim()) throw new ApiError(422, "empty_command", "The command is empty.");
  const user = findPlayer(ctx.state, body.player);
  if (!user) {
    const known = [...ctx.state.users.values()].map((u) => u.username ?? u.identifier);
    throw new ApiError(404, "not_found", "Player not found.", { known });
  }
  const name = body.name ?? "Sandbox reward";
  const applied = ctx.state.addReward({
    user_id: user.id,
    reward: { name, type: "COMMAND", data: { command: body.command }, on_event: body.on_event ?? "DIRECT" },
    applied_packet: { packet: { id: crypto.randomUUID(), title: name } },
  });
  return appliedRewardModel(ctx.state, applied);
}

export const controlRoutes: Route[] = [{ method: "POST", path: REWARD_CONTROL_PATH, handle: addReward }];
