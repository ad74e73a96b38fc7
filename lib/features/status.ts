import { describeError, type ServerStatusPatch, type UserActivityAdd } from "../api/client.ts";
import type { Feature, FeatureContext } from "../feature.ts";
import type { GameStatus } from "../game/bridge.ts";
import type { Users } from "../users.ts";

/**
 * The status body stays under this many bytes: a proxy in front of the service refuses larger bodies (nginx's
 * `client_max_body_size` is 1 MiB by default). About 90 bytes a player: room for 8,000 players with short nicks.
 */
export const STATUS_MAX_BYTES = 768 * 1024;

const bytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).byteLength;

/**
 * Rule 5: the status body. Numbers and booleans (never strings), the map always a string, and only players that
 * already have a service user in user_activities; those past `maxBytes` are left out of the list (users_current
 * still counts them).
 */
export function statusBody(
  status: GameStatus,
  users: Pick<Users, "get">,
  fallbackMap?: string,
  maxBytes = STATUS_MAX_BYTES,
): ServerStatusPatch & { user_activities: UserActivityAdd[] } {
  const body: ServerStatusPatch & { user_activities: UserActivityAdd[] } = {
    users_max: status.maxPlayers,
    users_current: status.players.length,
    map: status.map ?? fallbackMap ?? "",
    is_alive: true,
    user_activities: [],
  };
  let size = bytes(body);
  for (const p of status.players) {
    const user = users.get(p.id);
    if (!user) continue;
    const activity = { user_id: user.id, extra: { Nickname: p.name, ...p.extra } };
    const cost = bytes(activity) + 1; // and its comma
    if (size + cost > maxBytes) continue; // a shorter one may still fit
    size += cost;
    body.user_activities.push(activity);
  }
  return body;
}

/** Rule 5: the status at hub_ready and every `intervals.status`. */
export const status: Feature = (ctx) => {
  ctx.job("status", ctx.deps.config.intervals.status, () => sendStatus(ctx), true);
};

/** Whether the last status of this agent left players out (said once, not every round). */
const cut = new WeakSet<FeatureContext>();

/** One status update: the game's player list, with the service users known for them. */
export async function sendStatus(ctx: FeatureContext): Promise<void> {
  const { api, bridge, config, logger } = ctx.deps;
  const status = await bridge.status();
  const body = statusBody(status, ctx.users, config.game.map);
  const log = logger.withTag("agent");
  const known = status.players.filter((p) => ctx.users.get(p.id)).length;
  if (body.user_activities.length < known && !cut.has(ctx)) {
    cut.add(ctx);
    log.warn(
      `status lists ${body.user_activities.length} of ${known} players: the rest would take the body past ${STATUS_MAX_BYTES} bytes`,
    );
  } else if (body.user_activities.length === known) cut.delete(ctx);
  const res = await api.patchServer(config.api.server_id, body);
  if (res.ok) log.info("status sent", { players: body.users_current, map: body.map });
  else log.warn(`status not accepted: ${describeError(res.error)}`);
}
