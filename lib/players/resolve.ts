/**
 * `<player>` as an operator types it: a platform id in any of its usual spellings (normalised to the form the
 * service keys users by), a service user id (`user:<uuid>`, or a bare dashed UUID where no game id has that form),
 * or the nick of an online player (from the "online" cache that `run` keeps, see ./online.ts) or of one seen
 * recently (the "recent" cache, ./recent.ts).
 */
import type { Api, ApiError, User, UserType } from "../api/client.ts";
import { describeError, isRejected } from "../api/errors.ts";
import type { Online, OnlinePlayer } from "./online.ts";
import type { Recent } from "./recent.ts";
import { anySteamTo64, minecraftUuid } from "../game/presets/ids.ts";
import type { PlayerRef } from "../sanctions/schemas.ts";
import { cacheAge } from "../store/cache.ts";
import { registerUser } from "../users.ts";

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Names a service user id explicitly; needed on Minecraft, where a bare dashed UUID is a player's UUID. */
const USER_PREFIX = "user:";
/** What names a player of a CENTRAL game (no platform ids) that an operator can type. */
const CENTRAL_FORM = `a service user id (${USER_PREFIX}<the VyHub user's UUID>)`;

export type PlayerArg =
  /** A platform id of the bridge's user type, normalised. */
  | { kind: "id"; id: string }
  /** A service user id: `user:<uuid>`, or a bare dashed UUID where it cannot be a game id (everywhere but Minecraft). */
  | { kind: "user"; userId: string }
  /** `user:` followed by something that is not a UUID. */
  | { kind: "invalid"; text: string }
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
  if (text.toLowerCase().startsWith(USER_PREFIX)) {
    const userId = text.slice(USER_PREFIX.length).trim();
    return UUID_RE.test(userId) ? { kind: "user", userId: userId.toLowerCase() } : { kind: "invalid", text };
  }
  const id = platformId(text, userType);
  if (id) return { kind: "id", id };
  if (UUID_RE.test(text)) return { kind: "user", userId: text.toLowerCase() };
  return { kind: "nick", nick: text };
}

function platformId(text: string, userType: string): string | undefined {
  switch (userType) {
    case "STEAM":
      return anySteamTo64(text);
    case "MINECRAFT":
      // Dashed or not, a UUID here is a player's: so a ban of an offline player queues without the service.
      return /^[0-9a-f]{32}$/i.test(text) || UUID_RE.test(text) ? minecraftUuid(text) : undefined;
    case "FIVEM":
      return /^(license:)?[0-9a-f]{40}$/i.test(text) ? text.replace(/^license:/i, "").toLowerCase() : undefined;
    case "ASA":
      return /^[0-9a-f]{32}$/i.test(text) ? text.toLowerCase() : undefined;
    default:
      return undefined;
  }
}

export type PlayerErrorKind = "invalid" | "unknown" | "ambiguous" | "stale" | "unreachable" | "refused";

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
  /**
   * The platform id; null for a service user id the service could not be asked about (unreachable): it is taken as
   * given, and the sanction queues resolve it at delivery (where a 404 drops the entry).
   */
  id: string | null;
  /** The service user id, when known (or looked up: see `user`). */
  userId: string | null;
  name: string | null;
}

export interface ResolveOptions {
  userType: string;
  /** The online cache (for nicks) and the oldest it may be, in ms. */
  online: () => Promise<{ savedAt: number; data: Online } | undefined>;
  /** Players seen recently who are no longer online (./recent.ts): nicks match them too, by the same rules. */
  recent?: () => Promise<{ savedAt: number; data: Recent } | undefined>;
  maxAgeMs: number;
  now: number;
  /** Needed to look up service user ids and for `user` lookups; without it a service user id is taken as given. */
  api?: Api;
  /** "lookup": also find the service user; "ensure": create them when the service knows no such player. */
  user?: "none" | "lookup" | "ensure";
  /**
   * Where players are known by name (OpenArena, Xonotic, Teeworlds: the name is the game's id), the id of a name,
   * as the preset cleans it: a name no list knows is that player, online or not, seen or not.
   */
  nameId?: (name: string) => string | undefined;
  /** Only a whole nick (any case) names a player, never part of one: whose rights `--as` borrows is not guessed. */
  exactNick?: boolean;
}

/** Resolves `<player>`; a PlayerError says why not. */
export async function resolvePlayer(input: string, o: ResolveOptions): Promise<ResolvedPlayer> {
  if (!input.trim()) {
    const ids = o.userType === "CENTRAL" ? CENTRAL_FORM : idForms(o.userType);
    throw new PlayerError("invalid", `the player is empty: use ${ids}, or a nick`);
  }
  const arg = parsePlayerArg(input, o.userType);
  let found: ResolvedPlayer;
  if (arg.kind === "invalid")
    throw new PlayerError(
      "invalid",
      `"${arg.text}" is not a service user id: write ${USER_PREFIX}<the user's UUID>, e.g. ${USER_PREFIX}6d608cd3-155d-4344-b9e8-7c0280165d73`,
    );
  if (arg.kind === "id") found = await byId(arg.id, o);
  else if (arg.kind === "nick") found = await byNick(arg.nick, o);
  else found = await byUser(arg.userId, o);
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

/** What an operator can type instead of a nick, for the error lines. */
function forms(userType: string): string {
  // A CENTRAL id is VyHub's own: the service user id, written as the operator types it, is the one to name.
  return userType === "CENTRAL" ? `use ${CENTRAL_FORM}` : `use ${idForms(userType)}, or a service user id`;
}

/** A name as the game's id, where the game keys its players by name; undefined elsewhere (or a name that cleans to nothing). */
function asName(nick: string, o: ResolveOptions): ResolvedPlayer | undefined {
  const id = o.nameId?.(nick);
  return id ? { id, userId: null, name: id } : undefined;
}

async function byNick(nick: string, o: ResolveOptions): Promise<ResolvedPlayer> {
  const cached = await onlineList(o);
  const named = asName(nick, o);
  const use = forms(o.userType);
  if (!cached) {
    if (named) return named;
    throw new PlayerError("stale", `"${nick}" is not a player id and no list of online players exists yet: ${use}`);
  }
  const age = cacheAge(cached.savedAt, o.now);
  if (named && age > o.maxAgeMs) return named;
  if (age > o.maxAgeMs)
    throw new PlayerError(
      "stale",
      `"${nick}" is not a player id and the list of online players is ${Number.isFinite(age) ? `${Math.round(age / 1000)} s old` : "dated in the future"} (is \`hub-agent run\` running?): ${use}`,
    );
  // Who left lately counts as well, in one list with who is online: an exact nick anywhere wins over a partial one,
  // and a nick that fits an online player and one who left is ambiguous, never guessed.
  const here = new Set(cached.data.players.map((p) => p.id));
  const recent = o.recent ? await recentList(o) : undefined;
  const gone = new Map((recent?.data.players ?? []).filter((p) => !here.has(p.id)).map((p) => [p.id, p]));
  const matched = matchNick(nick, [...cached.data.players, ...gone.values()]);
  const hits = o.exactNick ? matched.filter((p) => nickKey(p.name) === nickKey(nick)) : matched;
  if (hits.length === 1) {
    const [p] = hits as [OnlinePlayer];
    return { id: p.id, userId: p.user_id, name: p.name };
  }
  if (!hits.length && named) return named;
  const who = o.recent ? "online or recently seen" : "online";
  if (!hits.length) throw new PlayerError("unknown", `no ${who} player is named "${nick}": ${use}`);
  const label = (p: OnlinePlayer) => {
    const left = gone.get(p.id);
    return left ? `${p.name} (${p.id}, seen ${ago(o.now - left.last_seen)} ago)` : `${p.name} (${p.id})`;
  };
  const list = hits.map(label).join(", ");
  throw new PlayerError("ambiguous", `"${nick}" matches ${hits.length} ${who} players: ${list}; give the id instead`);
}

/** The recent list, if it is of this game's ids. */
async function recentList(o: ResolveOptions) {
  const cached = await o.recent?.();
  return cached?.data.user_type === o.userType ? cached : undefined;
}

const ago = (ms: number) => {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 120
    ? `${s} s`
    : s < 7200
      ? `${Math.round(s / 60)} min`
      : s < 172800
        ? `${Math.round(s / 3600)} h`
        : `${Math.round(s / 86400)} d`;
};

/**
 * A nick as it looks: compatibility forms folded (fullwidth letters, odd spaces), invisible characters (zero-width,
 * soft hyphen, joiners) and control characters removed, spaces collapsed, any case. Names that look the same are the
 * same name here, so a player can't hide behind "Bob\u200b" while `ban Bob` hits the real Bob.
 */
export function nickKey(name: string): string {
  return name
    .normalize("NFKC")
    .replace(/[\p{Default_Ignorable_Code_Point}\p{Cc}]/gu, "")
    .replace(/\s+/g, " ")
    .trim()
    .toLowerCase();
}

/** An exact name (as it looks, any case) wins; otherwise every player whose name contains the text. */
export function matchNick(nick: string, players: readonly OnlinePlayer[]): OnlinePlayer[] {
  const want = nickKey(nick);
  if (!want) return [];
  const exact = players.filter((p) => nickKey(p.name) === want);
  return exact.length ? exact : players.filter((p) => nickKey(p.name).includes(want));
}

/**
 * A service user id: the online list knows the player (no request), else the service is asked for the user's
 * account of this game. When it cannot be asked (unreachable, or no client), the id is taken as given.
 */
async function byUser(userId: string, o: ResolveOptions): Promise<ResolvedPlayer> {
  const listed = (await onlineList(o))?.data.players.find((p) => p.user_id === userId);
  if (listed) return { id: listed.id, userId, name: listed.name };
  if (!o.api) return { id: null, userId, name: null };
  const res = await o.api.getUser(userId, undefined);
  if (res.ok && res.value.id === userId) return fromUser(res.value, o.userType);
  // Only the service's own 404 (its error code) says so; routing's is a wrong path in api.url.
  if (res.ok || (res.error.kind === "NotFound" && res.error.code))
    throw new PlayerError("unknown", `the service knows no user with the id ${userId}`);
  if (isRejected(res.error)) throw apiFailure(res.error, userId);
  return { id: null, userId, name: null };
}

function fromUser(user: User, userType: string): ResolvedPlayer {
  const own = user.type === userType ? user : user.linked_users?.find((u) => u.type === userType);
  if (!own) throw new PlayerError("unknown", `the service user ${user.id} has no ${userType} account to act on`);
  return { id: own.identifier, userId: user.id, name: user.username ?? null };
}

async function lookupUser(id: string, name: string | null, o: ResolveOptions & { create: boolean }): Promise<User> {
  const api = o.api;
  if (!api) throw new PlayerError("unreachable", `cannot look up the player ${id} without the service`);
  const type = o.userType as UserType;
  let res = await api.getUser(id, type);
  if (!res.ok && res.error.kind === "NotFound") {
    if (!o.create) throw new PlayerError("unknown", `the service knows no ${o.userType} player ${id}`);
    res = await registerUser(api, { identifier: id, type, ...(name ? { username: name } : {}) });
  }
  if (!res.ok) throw apiFailure(res.error, id);
  return res.value;
}

function apiFailure(e: ApiError, who: string): PlayerError {
  return isRejected(e)
    ? new PlayerError("refused", `the service refused the lookup of ${who}: ${describeError(e)}`)
    : new PlayerError("unreachable", `the service is unreachable (${describeError(e)}); ${who} could not be looked up`);
}

/**
 * `<player>` as a sanction's target or issuer, for `run`'s commands and the CLI alike: a player of the online list
 * named by their exact id (whatever form the game prints), else resolvePlayer. A service user id the service could
 * not be asked about comes back as given (identifier null): the queues resolve it at delivery.
 */
export async function resolveTarget(input: string, o: ResolveOptions): Promise<PlayerRef> {
  const text = input.trim().toLowerCase();
  // The online list is read once: resolvePlayer reads it again otherwise (a store file, for the CLI).
  const list = await o.online();
  const once = { ...o, online: () => Promise.resolve(list) };
  const here = (await onlineList(once))?.data.players.find((p) => p.id.toLowerCase() === text);
  const found = here ? { id: here.id, userId: here.user_id, name: here.name } : await resolvePlayer(input, once);
  return { identifier: found.id, type: o.userType, user_id: found.userId, name: found.name ?? "" };
}
