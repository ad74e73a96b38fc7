import type { ServerStatusPatch } from "../api/client.ts";
import type { GameStatus } from "../game/bridge.ts";
import type { Users } from "./users.ts";

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
