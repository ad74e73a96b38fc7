/**
 * OpenArena (ioquake3; docs/game-consoles.md §3.5, §7), hub-agent's real test server. Events come from the console
 * (ioq3 prints it on stderr: the wrapper reads both streams) or `games.log` (`g_log`), and from rcon replies:
 * output printed while an rcon command runs goes into the reply only, so the bridge parses replies too.
 *
 * Identity: bots have no platform id and a human's `cl_guid` is client-chosen, so players are identified by
 * their name (colour codes removed). That is spoofable: anyone may take a name. The user type is CENTRAL, the
 * only one of the service's types that claims no game platform; none of them means "a name on a Quake
 * server", so this preset is for tests and LAN games, not for a public server's bans.
 *
 * Sees: connect, disconnect, ClientBegin (spawn), kills, chat, the ready line (`AAS initialized.`).
 * Cannot see: groups (none in the game). Kicks can't carry a reason (`clientkick <slot>`).
 */
import { knownByName } from "./by-name.ts";
import { quoteForQuakeConsole, quakeQuoting } from "./escape.ts";
import { stripQuakeColours } from "./ids.ts";
import type { ListedPlayer, PlayerList, Preset } from "./types.ts";

/** games.log lines start with the match time (`  0:12 `); console lines don't. */
const T = String.raw`^\s*(?:\d+:\d\d )?`;

/**
 * `status` (docs/game-consoles.md §3.5), as ioq3 prints it: `map: <map>`, a header, a line of dashes, one row a
 * client, an empty line. Only rows inside that table are read, so no other line of a wrapped console's reply (a
 * player's chat printed before or after it) can pass for one. Two layouts, told apart by the header:
 *
 * - ioq3 1.36 (Debian's openarena-server): `cl score ping name address rate`; `^7` right before the address, which
 *   is `bot`, `loopback` or a human's IP without its port (`^7127.0.0.1`, `^7::1`);
 * - ioq3 1.35 and older builds: `num score ping name lastmsg address qport rate`; `^7` right after the
 *   name, an `ip:port` address, `qport` 5 characters wide (a long address touches it).
 *
 * The ping column reads `CON`/`CNCT` for a player still connecting (listed: a banned one is kicked before he is in)
 * and `ZMB`/`ZMBI` for one who just left (not listed). Names may hold spaces and colour codes, so a row is read from
 * both ends: the numbers from the left, the address and the rest from the last `^7`, which the name can't follow.
 * No regular expression here scans an unbounded run twice: a 64 KiB line takes linear time.
 */
const HEADER = /^(?:num|cl) score ping name +(lastmsg +)?address +(?:qport +)?rate *$/;
/** A row's start, which every row goes through: slot, score, and the ping or CON/CNCT/ZMB/ZMBI. */
export const ROW = /^ *(\d+) +(-?\d+) +(\d+|CON|CNCT|ZMB|ZMBI) /;
const DIGITS = /^\d+$/;

/**
 * node:net, loaded at the first row read rather than with the presets: every one-shot command's configuration check
 * loads the presets, and node:net costs it ~4 ms at start (docs/performance.md).
 */
const net = (): typeof import("node:net") => process.getBuiltinModule("node:net");

/** An address as ioq3's NET_AdrToString prints it: bot, loopback, or an IP address with or without a port. */
function isAddress(text: string): boolean {
  const { isIP, isIPv4, isIPv6 } = net();
  if (text === "bot" || text === "loopback" || text === "localhost" || text === "unknown") return true;
  const bracketed = /^\[([^\]]*)\]:\d+$/.exec(text);
  if (bracketed) return isIPv6(bracketed[1] ?? "");
  return isIP(text) !== 0 || (/^[\d.]+:\d+$/.test(text) && isIPv4(text.slice(0, text.lastIndexOf(":"))));
}

/** `text` split at its last space: what comes before (trailing spaces removed) and the last word. */
function lastWord(text: string): [string, string] {
  const at = text.lastIndexOf(" ");
  return [text.slice(0, Math.max(at, 0)).trimEnd(), text.slice(at + 1)];
}

/** `<lastmsg> <address><padding><qport>` (ioq3 1.35): the qport fills the last 5 characters, touching a long address. */
function oldAddress(columns: string): string | undefined {
  const [lastmsg, address] = lastWord(columns.slice(0, -5).trim());
  return DIGITS.test(lastmsg) && DIGITS.test(columns.slice(-5).trimStart()) ? address : undefined;
}

/** One row of the table, or undefined for a zombie, a blank name or a line that isn't a row. */
function parseRow(line: string, old: boolean): ListedPlayer | undefined {
  const head = ROW.exec(line);
  if (!head || head[3]?.startsWith("Z")) return undefined;
  const [, slot = "", score, ping = ""] = head;
  const rest = line.slice(head[0].length).trimEnd();
  const mark = rest.lastIndexOf("^7");
  if (mark < 0) return undefined;
  const [columns, rate] = lastWord(rest.slice(mark + 2));
  const address = old ? oldAddress(columns) : columns;
  if (!DIGITS.test(rate) || address === undefined || !isAddress(address)) return undefined;
  const name = quakeName(rest.slice(0, mark));
  return name ? { id: name, name, slot, extra: { Score: Number(score), Ping: ping } } : undefined;
}

export function quakeName(raw: string): string {
  return stripQuakeColours(raw).trim();
}

export function parseQuakeStatus(reply: string): PlayerList {
  const lines = reply.split("\n").map((l) => l.replace(/\r$/, ""));
  const top = lines.findIndex((l) => HEADER.test(l));
  if (top < 0 || !lines[top + 1]?.startsWith("--")) return { players: [] };
  const old = HEADER.exec(lines[top]!)?.[1] !== undefined;
  const players: ListedPlayer[] = [];
  for (const line of lines.slice(top + 2)) {
    if (line.trim() === "") break; // the table's end
    const player = parseRow(line, old);
    if (player) players.push(player);
  }
  const map = /^map: (\S+)$/.exec(lines[top - 1] ?? "")?.[1];
  return { players, ...(map ? { map } : {}) };
}

export const openarena: Preset = {
  name: "openarena",
  title: "OpenArena (ioquake3)",
  ...knownByName(quakeName),
  colours: "quake",
  // OpenArena 0.8.8's own admin system (g_admin) answers chat starting with `!` (`!ban`: "permission denied"), so a
  // `!ban` would get two answers; a `.` line is plain chat to it, typed the same in the chat box and the console.
  commandPrefix: ".",
  consoles: {
    q3rcon: {
      port: 27960,
      enable:
        "set rconpassword <the password> (+set rconpassword … on the command line or in server.cfg); rcon uses the game's UDP port, 27960 by default",
    },
  },
  lines: {
    ready: [/^AAS initialized\.$/],
    identity: [new RegExp(`${T}ClientUserinfoChanged: (?<slot>\\d+) n\\\\(?<name>[^\\\\]*)\\\\`)],
    connect: [new RegExp(`${T}ClientConnect: (?<slot>\\d+)$`)],
    disconnect: [new RegExp(`${T}ClientDisconnect: (?<slot>\\d+)$`)],
    spawn: [new RegExp(`${T}ClientBegin: (?<slot>\\d+)$`)],
    // Only the slots are read: one `.*` before ` by <MOD>`, as two (` killed `) take time squared on a long line.
    death: [new RegExp(`${T}Kill: (?<killer_slot>\\d+) (?<slot>\\d+) \\d+: .* by \\w+$`)],
    // Greedy name: a player can't make their text end the name early and speak as someone else.
    chat: [new RegExp(`${T}say: (?<name>.+): (?<text>.*)$`)],
  },
  list: { command: "status", parse: parseQuakeStatus },
  commands: {
    kick: "clientkick {slot}",
    message: "tell {slot} {text}",
    broadcast: "say {text}",
    stop: "quit",
  },
  echo: (marker) => `echo ${marker}`,
  // ioq3 reads its console from stdin 256 bytes at a time and runs each piece (docs/game-consoles.md §2.3).
  stdinReadBytes: 256,
  escape: quoteForQuakeConsole,
  quoting: quakeQuoting,
};
