/**
 * Rust with Oxide/uMod groups (docs/game-consoles.md §3.4, §5.3). Modern Rust speaks WebRCON (`bridge =
 * "webrcon"`: a WebSocket whose broadcast is the event stream); the legacy Source RCON (`+rcon.web 0`) needs the
 * wrapper or a `-logfile` for events. Sees: join and leave lines with
 * SteamID64s, chat (`[CHAT]` lines, format unverified), the ready line; `playerlist` JSON for polling.
 * Cannot see: spawns, deaths, in-game group changes. Vanilla Rust has no private message.
 */
import { quoteForRustConsole, rustQuoting } from "./escape.ts";
import { steamValues, steam64 } from "./ids.ts";
import type { ListedPlayer, PlayerList, Preset } from "./types.ts";

const ADDR = String.raw`(?:\d{1,3}(?:\.\d{1,3}){3}|\[[0-9A-Fa-f:]+\])`;

/** Where the array starts: `[` at the start of a line, then `{`, `]` or the line's end; never `[CHAT] …`. */
export const PLAYERLIST_START = /^\[[ \t]*(?:[{\]]|\r?$)/m;

/** `playerlist`: a JSON array of `{SteamID, DisplayName, Ping, ConnectedSeconds, …}`. */
export function parseRustPlayerlist(reply: string): PlayerList {
  const start = reply.search(PLAYERLIST_START);
  let rows: unknown;
  try {
    rows = start < 0 ? [] : JSON.parse(reply.slice(start, reply.lastIndexOf("]") + 1));
  } catch {
    return { players: [] };
  }
  const players: ListedPlayer[] = [];
  for (const r of Array.isArray(rows) ? rows : []) {
    if (!r || typeof r !== "object") continue;
    const { SteamID, DisplayName, Ping } = r as Record<string, unknown>;
    const id = steam64(String(SteamID ?? ""));
    const name = String(DisplayName ?? "");
    players.push(id ? { id, name, ...(typeof Ping === "number" ? { extra: { Ping } } : {}) } : { name });
  }
  return { players };
}

export const rust: Preset = {
  name: "rust",
  title: "Rust (Oxide/uMod)",
  userType: "STEAM",
  serverType: "RUST",
  identity: "platform",
  normaliseId: steam64,
  cleanName: (raw) => raw.trim(),
  idValues: steamValues,
  multiGroup: true,
  colours: "strip",
  commandPrefix: "!",
  consoles: {
    webrcon: {
      port: 28016,
      enable: 'start the server with +rcon.web 1 +rcon.port 28016 +rcon.password "<the password>"',
    },
    rcon: {
      dialect: "source",
      port: 28016,
      enable: 'start the server with +rcon.web 0 +rcon.port 28016 +rcon.password "<the password>" (the legacy console)',
    },
  },
  lines: {
    ready: [/^Server startup complete$/],
    connect: [new RegExp(`^${ADDR}:\\d+\\/(?<id>\\d{17})\\/(?<name>.+) joined \\[\\w+\\/\\d{17}\\]$`)],
    disconnect: [new RegExp(`^${ADDR}:\\d+\\/(?<id>\\d{17})\\/(?<name>.+?) disconnecting: (?<reason>.*)$`)],
    // The player is the one `[<SteamID64>] : ` of the line: a name holding one (`Alice[7656…] : !ban x`) or a text
    // holding one would make the line say someone else spoke, so such a line is nobody's. Linear: the name and the
    // text can't contain what ends the name.
    chat: [/^\[CHAT\] (?<name>(?:(?!\[\d{17}\] : ).)+)\[(?<id>\d{17})\] : (?<text>(?:(?!\[\d{17}\] : ).)*)$/],
  },
  list: { command: "playerlist", parse: parseRustPlayerlist },
  commands: {
    kick: "kick {steam64} {reason}",
    broadcast: "say {text}",
    group_add: "oxide.usergroup add {steam64} {group}",
    group_remove: "oxide.usergroup remove {steam64} {group}",
    stop: "quit",
  },
  echo: (marker) => `echo ${marker}`,
  escape: quoteForRustConsole,
  quoting: rustQuoting,
};
