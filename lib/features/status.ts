import { describeError, type ServerStatusPatch } from "../api/client.ts";
import type { Feature, FeatureContext } from "../feature.ts";
import type { GameStatus } from "../game/bridge.ts";
import type { Users } from "../users.ts";

/**
 * Rule 5: the status body. Numbers and booleans (never strings), the map always a string, and only players that
 * already have a service user in user_activities.
 */
export function statusBody(status: GameStatus, users: Pick<Users, "get">, fallbackMap?: string): ServerStatusPatch {
  const activities = status.players.flatMap((p) => {
    const user = users.get(p.id);
    return user ? [{ user_id: user.id, extra: { Nickname: p.name, ...p.extra } }] : [];
  });
  return {
    users_max: status.maxPlayers,
    users_current: status.players.length,
    map: status.map ?? fallbackMap ?? "",
    is_alive: true,
    user_activities: activities,
  };
}

/** Rule 5: the status at hub_ready and every `intervals.status`. */
export const status: Feature = (ctx) => {
  ctx.job("status", ctx.deps.config.intervals.status, () => sendStatus(ctx), true);
};

/** One status update: the game's player list, with the service users known for them. */
export async function sendStatus(ctx: FeatureContext): Promise<void> {
  const { api, bridge, config, logger } = ctx.deps;
  const body = statusBody(await bridge.status(), ctx.users, config.game.map);
  const res = await api.patchServer(config.api.server_id, body);
  const log = logger.withTag("agent");
  if (res.ok) log.info("status sent", { players: body.users_current, map: body.map });
  else log.warn(`status not accepted: ${describeError(res.error)}`);
}
