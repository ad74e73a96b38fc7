/**
 * Garry's Mod (srcds) with ULX (docs/game-consoles.md §3.1, §3.2, §5.1). Events need `log on` plus `sv_logecho 1`
 * (wrapper) or a log file; `status` gives SteamIDs for polling. Sees: connect (id once validated), disconnect
 * with reason, entered the game (spawn), chat, kills where the gamemode logs them. Cannot see: in-game group
 * changes (ULX keeps them in Lua; a Lua addon is the only reliable way), respawns.
 */
import { quoteForSourceConsole, sourceQuoting } from "./escape.ts";
import { luaQuoting, luaRunLines, luaString } from "./lua.ts";
import { hlLogLines, SRCDS_CONSOLE_CHAT } from "./hl-log.ts";
import { anySteamTo64, steamValues } from "./ids.ts";
import type { ListedPlayer, PlayerList, Preset } from "./types.ts";

/**
 * srcds `status`, line by line: `#      2 "Alice"  STEAM_0:1:12345678  05:12  48  0 active 1.2.3.4:27005` (CS:GO has
 * a second userid column), `map     : gm_construct`, `players : 2 (16 max)` or `… 2 humans, 0 bots (16 max)`.
 * Each pattern is linear in its line: the max count's `[^(]*` can't give back what `\d+` took.
 */
export const SRCDS_STATUS = {
  row: /^#\s*(\d+)\s+(?:\d+\s+)?"(.*)"\s+(STEAM_[0-5]:[01]:\d+|\[U:1:\d+\]|BOT)\b/,
  map: /^map\s*:\s*(\S+)/,
  max: /^players\s*:[^(]*\((\d+) max\)/,
};

/** srcds `status`: map, max players and one row per player (bots have no id). */
export function parseSrcdsStatus(reply: string): PlayerList {
  const players: ListedPlayer[] = [];
  let map: string | undefined;
  let max: string | undefined;
  for (const line of reply.split(/\r?\n/)) {
    const row = SRCDS_STATUS.row.exec(line);
    if (row) {
      const [, slot = "", name = "", raw = ""] = row;
      const id = anySteamTo64(raw);
      players.push(id ? { id, name, slot } : { name, slot });
    }
    map ??= SRCDS_STATUS.map.exec(line)?.[1];
    max ??= SRCDS_STATUS.max.exec(line)?.[1];
  }
  return { players, ...(map ? { map } : {}), ...(max ? { maxPlayers: Number(max) } : {}) };
}

export const gmod: Preset = {
  name: "gmod",
  title: "Garry's Mod (ULX)",
  userType: "STEAM",
  serverType: "GMOD",
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
      enable: 'start srcds with +rcon_password "<the password>" (RCON is TCP on the game port, 27015 by default)',
    },
  },
  lines: {
    ready: [/^VAC secure mode is activated\.$/],
    ...hlLogLines(),
  },
  consoleChat: SRCDS_CONSOLE_CHAT,
  list: { command: "status", parse: parseSrcdsStatus },
  commands: {
    kick: "kickid {userid} {reason}",
    message: 'ulx psay "${steam2}" {text}',
    broadcast: "ulx tsay {text}",
    group_add: 'ulx adduserid "{steam2}" {group}',
    group_remove: 'ulx removeuserid "{steam2}"',
    stop: "quit",
  },
  echo: (marker) => `echo ${marker}`,
  escape: quoteForSourceConsole,
  quoting: sourceQuoting,
  // SCRIPT rewards are Lua with a PLAYER local, as the official addon runs them.
  script: { escape: luaString, quoting: luaQuoting, lines: luaRunLines },
};
