/**
 * Xonotic and Nexuiz, DarkPlaces games (docs/game-consoles.md §2.8, §3.7). Seen on a real Nexuiz 2.5.2 server here
 * (Debian's nexuiz-server, engine of 2018); Xonotic's engine and game code print the same lines.
 *
 * Lines arrive in two forms: the console as a terminal shows it (colour codes turned into ANSI, which every source
 * removes) and the raw form of rcon replies and the engine's `log_file` (`^7` starts each line, chat adds `^3`).
 * The patterns take both. Joins come from the game's event log (`sv_eventlog 1`): `:join:<n>:<slot>:<address or
 * bot>:<name>`; leaves from the engine's `Client "<name>" dropped`; chat is `<name>^7: <text>`.
 *
 * Identity: the player's name, colour codes removed. Nexuiz has no player ids (bots none at all) and Xonotic's
 * crypto ids are not printed on the console, so as on OpenArena anyone may take a name: the user type is CENTRAL.
 * A chat line is matched with the longest name it can start with, so text can't make a player speak as another; a
 * join or leave line holding ": " could be chat, so such a player is left to the list.
 *
 * Cannot see: spawns and deaths (the event log names players by a per-connection number, not their slot), team chat
 * (the game prints it with a carriage return inside), groups (none).
 */
import { knownByName } from "./by-name.ts";
import { quoteForDarkplacesConsole, darkplacesQuoting } from "./escape.ts";
import { stripDarkplacesColours } from "./ids.ts";
import type { ListedPlayer, PlayerList, Preset } from "./types.ts";

/** The start of a line: `^7` in the raw form. */
const L = String.raw`^(?:\^7)?`;
const HEX = "[0-9A-Fa-f]{1,4}";
/**
 * A player's address in the event log: `bot`, `local`, an IP address without its port (measured on Nexuiz 2.5.2:
 * `127.0.0.1`, and for IPv6 all eight groups, `0:0:0:0:0:0:0:1`), or Xonotic's IPv6 with `_` for `:`
 * (`sv_eventlog_ipv6_delimiter`). Each form has a fixed shape, so the name after it can't be taken for part of it.
 */
const ADDRESS = `(?:bot|local(?::\\d+)?|${Array(8).fill(HEX).join(":")}|\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}|${Array(8).fill(HEX).join("_")})`;

/**
 * `status 1`: a few `key: value` lines (`map:`, `players:`), a header, then one row a client:
 * `<address> <loss> <ping> <h:mm:ss> <frags> #<slot> <name>`, the address padded to 47 characters and `botclient`
 * for bots, the whole name at the end (the plain `status` cuts names to 16 characters). Only rows right after the
 * header count, and only the `map:` and `players:` lines of the block the header ends, so a chat line printed
 * before the table (on the wrapped console) can't pass for a row. A client still connecting is listed as
 * `unconnected` until its name arrives: not a player yet (its `:join:` line comes with the name).
 */
const HEADER = /^(?:\^\d)?IP +%pl +ping +time +frags +no +name *$/;
export const ROW = /^(?:\^\d)?\S+\s+\d+\s+(\d+)\s+\d+:\d\d:\d\d\s+(-?\d+)\s+#(\d+)\s+(.*)$/;
const CONNECTING = "unconnected";

export function darkplacesName(raw: string): string {
  return stripDarkplacesColours(raw).trim();
}

export function parseDarkplacesStatus(reply: string): PlayerList {
  const lines = reply.split("\n").map((l) => l.replace(/\r$/, ""));
  const top = lines.findIndex((l) => HEADER.test(l));
  if (top < 0) return { players: [] };
  const players: ListedPlayer[] = [];
  for (const line of lines.slice(top + 1)) {
    const m = ROW.exec(line);
    if (!m) break; // the table's end
    const [, ping, frags, slot = "", raw = ""] = m;
    const name = darkplacesName(raw);
    if (name && name !== CONNECTING) {
      players.push({ id: name, name, slot, extra: { Frags: Number(frags), Ping: Number(ping) } });
    }
  }
  // The block's own lines: from its last `host:` line (or the reply's start) to the header.
  const start = lines.slice(0, top).findLastIndex((l) => l.startsWith("host: "));
  const block = lines.slice(Math.max(start, 0), top);
  const map = block.map((l) => /^map: +(\S+)$/.exec(l)?.[1]).find(Boolean);
  const max = block.map((l) => /^players: +\d+ active \((\d+) max\)$/.exec(l)?.[1]).find(Boolean);
  return { players, ...(map ? { map } : {}), ...(max ? { maxPlayers: Number(max) } : {}) };
}

export const xonotic: Preset = {
  name: "xonotic",
  title: "Xonotic / Nexuiz (DarkPlaces)",
  ...knownByName(darkplacesName),
  colours: "quake",
  commandPrefix: "!",
  consoles: {
    dprcon: {
      port: 26000,
      enable:
        "set rcon_password <the password, no spaces> in server.cfg, after any rcon_secure (setting rcon_secure clears it); rcon uses the game's UDP port, 26000 by default",
    },
  },
  // A chat line is `<name>: <text>`, and a name can be anything, even `:join:9:5:bot:Victim`: an event line holding
  // ": " (a join or leave of a name holding it) could be a player's chat, so it is left to the player list.
  lines: {
    // Printed when the server opens its ports for a map, so after every restart too.
    ready: [new RegExp(`${L}Server listening on address (?!.*: )`)],
    connect: [new RegExp(`${L}:join:\\d+:(?<slot>\\d+):${ADDRESS}:(?<name>(?!.*: )\\S.*)$`)],
    // DarkPlaces since 2024 adds ` (<reason>)`; one holding `"` is left to the list too: the reason then ends at
    // the next `" dropped`, which keeps the time linear.
    disconnect: [new RegExp(`${L}Client "(?<name>(?!.*: ).*)" dropped(?: \\([^:"]*\\))?\\s*$`)],
    chat: [new RegExp(`${L}\\x01?(?<name>.+): (?<text>.*)$`)],
  },
  list: { command: "status 1", parse: parseDarkplacesStatus },
  commands: {
    kick: "kick # {slot} {reason}",
    message: "tell #{slot} {text}",
    broadcast: "say {text}",
    stop: "quit",
  },
  echo: (marker) => `echo ${marker}`,
  escape: quoteForDarkplacesConsole,
  quoting: darkplacesQuoting,
};
