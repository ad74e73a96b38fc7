/**
 * Counter-Strike 2 (srcds, vanilla). Events need `log on` (+ `sv_logecho 1` for the wrapper) or a log file;
 * log lines carry `[U:1:N]` ids. `status` prints no SteamIDs, so polling only notices players leaving that a log
 * line introduced; `status_json` (unverified) is parsed too when an operator sets it as the list command.
 * Sees: connect, disconnect, entered the game, chat, kills. Cannot see: players already online when hub-agent
 * starts (until they reconnect), groups and private messages (vanilla has neither: set templates for your
 * admin plugin, e.g. CounterStrikeSharp's, in [game.overrides.commands]).
 */
import { quoteForSourceConsole, sourceQuoting } from "./escape.ts";
import { hlLogLines, SRCDS_CONSOLE_CHAT } from "./hl-log.ts";
import { anySteamTo64, steamValues } from "./ids.ts";
import type { ListedPlayer, PlayerList, Preset } from "./types.ts";

/**
 * CS2 `status`, line by line: rows `    2    00:12   24    0     active 786432 127.0.0.1:27005 'Alice'` (bots: `BOT`
 * time, no address; the address can't start with a quote, so it can't be taken for the name), `players  : 1 humans,
 * 0 bots (16/0 max) …` and the map's `[1: de_dust2 | main lump …]`. Each pattern is linear in its line.
 */
export const CS2_STATUS = {
  row: /^\s*(\d+)\s+(?:[\d:]+|BOT)\s+\d+\s+\d+\s+\w+\s+\d+(?:\s+[^\s']\S*)?\s+'(.*)'\s*$/,
  max: /^players\s*:[^(]*\((\d+)(?:\/\d+)? max\)/,
  map: /\[\d+: (\S+) \| main lump/,
};

export function parseCs2Status(reply: string): PlayerList {
  const text = reply.trim();
  if (text.startsWith("{")) return parseStatusJson(text);
  const players: ListedPlayer[] = [];
  let map: string | undefined;
  let max: string | undefined;
  for (const line of text.split(/\r?\n/)) {
    const [, slot = "", name = ""] = CS2_STATUS.row.exec(line) ?? [];
    if (slot && slot !== "65535") players.push({ name, slot });
    max ??= CS2_STATUS.max.exec(line)?.[1];
    map ??= CS2_STATUS.map.exec(line)?.[1];
  }
  return { players, ...(map ? { map } : {}), ...(max ? { maxPlayers: Number(max) } : {}) };
}

/** `status_json` (unverified): `{"server": {"max_players": …, "clients": [{"steamid64", "name", "userid"}]}}`. */
function parseStatusJson(text: string): PlayerList {
  let doc: { server?: { clients?: unknown[]; max_players?: unknown; map?: unknown } };
  try {
    doc = JSON.parse(text);
  } catch {
    return { players: [] };
  }
  const players: ListedPlayer[] = [];
  for (const c of doc.server?.clients ?? []) {
    if (!c || typeof c !== "object") continue;
    const { steamid64, name, userid } = c as Record<string, unknown>;
    const id = anySteamTo64(String(steamid64 ?? ""));
    const row: ListedPlayer = { name: String(name ?? "") };
    if (id) row.id = id;
    if (userid !== undefined) row.slot = String(userid);
    players.push(row);
  }
  const max = Number(doc.server?.max_players);
  const map = doc.server?.map;
  return {
    players,
    ...(Number.isFinite(max) && max > 0 ? { maxPlayers: max } : {}),
    ...(typeof map === "string" && map ? { map } : {}),
  };
}

export const cs2: Preset = {
  name: "cs2",
  title: "Counter-Strike 2",
  userType: "STEAM",
  serverType: "SOURCE",
  identity: "platform",
  normaliseId: anySteamTo64,
  cleanName: (raw) => raw.trim(),
  idValues: steamValues,
  multiGroup: false,
  colours: "strip",
  commandPrefix: "!",
  consoles: {
    rcon: {
      dialect: "source",
      port: 27015,
      enable:
        'start the server with +rcon_password "<the password>" (RCON is TCP on the game port, 27015 by default; on Linux CS:GO needed -usercon)',
    },
  },
  lines: hlLogLines(),
  consoleChat: SRCDS_CONSOLE_CHAT,
  list: { command: "status", parse: parseCs2Status },
  commands: {
    kick: "kickid {userid} {reason}",
    broadcast: "say {text}",
    stop: "quit",
  },
  echo: (marker) => `echo ${marker}`,
  escape: quoteForSourceConsole,
  quoting: sourceQuoting,
};
