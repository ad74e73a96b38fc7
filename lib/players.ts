/**
 * `<player>` as an operator types it: a platform id in any of its usual spellings (normalised to the form the
 * service keys users by), a service user id, or the nick of an online player (from the "online" cache that
 * `run` keeps, see features/online.ts).
 */
import { describeError, isRejected, type Api, type ApiError, type User, type UserType } from "./api/client.ts";
import type { Online, OnlinePlayer } from "./features/online.ts";
import { anySteamTo64, minecraftUuid } from "./game/presets/ids.ts";

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export type PlayerArg =
  /** A platform id of the bridge's user type, normalised. */
  | { kind: "id"; id: string }
  /** A dashed UUID: a service user id; on Minecraft it may also be a player's UUID. */
  | { kind: "uuid"; uuid: string }
  | { kind: "nick"; nick: string };

/** The spellings a user type's ids are accepted in, for error messages. */
export function idForms(userType: string): string {
  switch (userType) {
    case "STEAM":
      return "a SteamID64, STEAM_X:Y:Z or [U:1:N]";
    case "MINECRAFT":
      return "a Minecraft UUID (with or without dashes)";
    case "FIVEM":
      return "a license (license:<40 hex digits>)";
    case "ASA":
      return "an EOS id (32 hex digits)";
    default:
      return `a ${userType} id`;
  }
}

/** Parses without I/O. The id forms depend on the game's user type; anything else is a nick. */
export function parsePlayerArg(input: string, userType: string): PlayerArg {
  const text = input.trim();
  const id = platformId(text, userType);
  if (id) return { kind: "id", id };
  if (UUID_RE.test(text)) return { kind: "uuid", uuid: text.toLowerCase() };
  return { kind: "nick", nick: text };
}

function platformId(text: string, userType: string): string | undefined {
  switch (userType) {
    case "STEAM":
      return anySteamTo64(text);
    case "MINECRAFT":
      // Undashed only: a dashed UUID is decided later (a player's UUID or a service user id).
      return /^[0-9a-f]{32}$/i.test(text) ? minecraftUuid(text) : undefined;
    case "FIVEM":
      return /^(license:)?[0-9a-f]{40}$/i.test(text) ? text.replace(/^license:/i, "").toLowerCase() : undefined;
    case "ASA":
      return /^[0-9a-f]{32}$/i.test(text) ? text.toLowerCase() : undefined;
    default:
      return undefined;
  }
}

export type PlayerErrorKind = "unknown" | "ambiguous" | "stale" | "unreachable" | "refused";

/** Why `<player>` names nobody (or not one player); the message is one line for the operator. */
export class PlayerError extends Error {
  override name = "PlayerError";
  constructor(
    readonly kind: PlayerErrorKind,
    message: string,
  ) {
    super(message);
  }
}

export interface ResolvedPlayer {
  /** The platform id; null when only a service user id is known (its user has no id of this game's type). */
  id: string | null;
  /** The service user id, when known (or looked up: see `user`). */
  userId: string | null;
  name: string | null;
}

export interface ResolveOptions {
  userType: string;
  /** The online cache (for nicks) and the oldest it may be, in ms. */
  online: () => Promise<{ savedAt: number; data: Online } | undefined>;
  maxAgeMs: number;
  now: number;
  /** Needed for service user ids and `user` lookups; without it only ids and nicks resolve. */
  api?: Api;
  /** "lookup": also find the service user; "ensure": create them when the service knows no such player. */
  user?: "none" | "lookup" | "ensure";
}

/** Resolves `<player>`; a PlayerError says why not. */
export async function resolvePlayer(input: string, o: ResolveOptions): Promise<ResolvedPlayer> {
  if (!input.trim()) throw new PlayerError("unknown", `no player given: use ${idForms(o.userType)}, or a nick`);
  const arg = parsePlayerArg(input, o.userType);
  let found: ResolvedPlayer;
  if (arg.kind === "id") found = await byId(arg.id, o);
  else if (arg.kind === "nick") found = await byNick(arg.nick, o);
  else found = await byUuid(arg.uuid, o);
  const mode = o.user ?? "none";
  if (mode === "none" || found.userId || !found.id) return found;
  const user = await lookupUser(found.id, found.name, { ...o, create: mode === "ensure" });
  return { ...found, userId: user.id, name: found.name ?? user.username ?? null };
}

/** The online list, if it is of this game's ids (a list written under another user type is no list). */
async function onlineList(o: ResolveOptions) {
  const cached = await o.online();
  return cached?.data.user_type === o.userType ? cached : undefined;
}

/** A platform id needs no lookup; the online list (of any age: ids do not change) may add the nick and user. */
async function byId(id: string, o: ResolveOptions): Promise<ResolvedPlayer> {
  const p = (await onlineList(o))?.data.players.find((p) => p.id === id);
  return { id, userId: p?.user_id ?? null, name: p?.name ?? null };
}

async function byNick(nick: string, o: ResolveOptions): Promise<ResolvedPlayer> {
  const cached = await onlineList(o);
  const forms = `use ${idForms(o.userType)}, or a service user id`;
  if (!cached)
    throw new PlayerError("stale", `"${nick}" is not a player id and no list of online players exists yet: ${forms}`);
  const age = Math.round((o.now - cached.savedAt) / 1000);
  if (o.now - cached.savedAt > o.maxAgeMs)
    throw new PlayerError(
      "stale",
      `"${nick}" is not a player id and the list of online players is ${age} s old (is \`hub-agent run\` running?): ${forms}`,
    );
  const hits = matchNick(nick, cached.data.players);
  if (hits.length === 1) {
    const [p] = hits as [OnlinePlayer];
    return { id: p.id, userId: p.user_id, name: p.name };
  }
  if (!hits.length) throw new PlayerError("unknown", `no online player is named "${nick}": ${forms}`);
  const list = hits.map((p) => `${p.name} (${p.id})`).join(", ");
  throw new PlayerError("ambiguous", `"${nick}" matches ${hits.length} online players: ${list}; give the id instead`);
}

/** An exact name (ignoring case) wins; otherwise every player whose name contains the text. */
export function matchNick(nick: string, players: readonly OnlinePlayer[]): OnlinePlayer[] {
  const want = nick.toLowerCase();
  const exact = players.filter((p) => p.name.toLowerCase() === want);
  return exact.length ? exact : players.filter((p) => p.name.toLowerCase().includes(want));
}

async function byUuid(uuid: string, o: ResolveOptions): Promise<ResolvedPlayer> {
  if (!o.api) throw new PlayerError("unreachable", `cannot look up the service user ${uuid} without the service`);
  // On Minecraft a dashed UUID is first of all a player's UUID.
  if (o.userType === "MINECRAFT") {
    const res = await o.api.getUser(uuid, o.userType);
    if (res.ok) return fromUser(res.value, o.userType);
    if (res.error.kind !== "NotFound") throw apiFailure(res.error, uuid);
  }
  const res = await o.api.getUser(uuid, undefined);
  if (res.ok && res.value.id === uuid) return fromUser(res.value, o.userType);
  if (res.ok || res.error.kind === "NotFound") {
    if (o.userType === "MINECRAFT") return { id: uuid, userId: null, name: null }; // a player new to the service
    throw new PlayerError("unknown", `the service knows no user with the id ${uuid}`);
  }
  throw apiFailure(res.error, uuid);
}

function fromUser(user: User, userType: string): ResolvedPlayer {
  const own = user.type === userType ? user : user.linked_users?.find((u) => u.type === userType);
  return { id: own?.identifier ?? null, userId: user.id, name: user.username ?? null };
}

async function lookupUser(id: string, name: string | null, o: ResolveOptions & { create: boolean }): Promise<User> {
  const api = o.api;
  if (!api) throw new PlayerError("unreachable", `cannot look up the player ${id} without the service`);
  const type = o.userType as UserType;
  let res = await api.getUser(id, type);
  if (!res.ok && res.error.kind === "NotFound") {
    if (!o.create) throw new PlayerError("unknown", `the service knows no ${o.userType} player ${id}`);
    res = await api.createUser({ identifier: id, type, ...(name ? { username: name } : {}) });
  }
  if (!res.ok) throw apiFailure(res.error, id);
  return res.value;
}

function apiFailure(e: ApiError, who: string): PlayerError {
  return isRejected(e)
    ? new PlayerError("refused", `the service refused the lookup of ${who}: ${describeError(e)}`)
    : new PlayerError("unreachable", `the service is unreachable (${describeError(e)}); ${who} could not be looked up`);
}
