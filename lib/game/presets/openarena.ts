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
 * `status`, old and new ioq3 columns: `num score ping name [lastmsg] address [qport] rate`. The name is padded
 * and may hold spaces; the address is `bot`, `loopback` or ip:port. Matched after colour codes are removed.
 */
// The name starts and ends with a non-space: else each space of a run could start or end it, and the time would
// grow with the run's length squared (or cubed).
export const ROW =
  /^\s*(\d+)\s+(-?\d+)\s+(\d+|CNCT|ZMBI)\s+(\S(?:.*?\S)?)\s+(?:\d+\s+)?(bot|loopback|localhost|[\d.]+:\d+|\[[0-9A-Fa-f:]+\]:\d+|unknown)\s+(?:\d+\s+)?\d+\s*$/;

export function quakeName(raw: string): string {
  return stripQuakeColours(raw).trim();
}

export function parseQuakeStatus(reply: string): PlayerList {
  const players: ListedPlayer[] = [];
  for (const line of reply.split(/\r?\n/)) {
    // ioq3 prints `^7` after the padded name to reset its colours, right before the address.
    const m = ROW.exec(stripQuakeColours(line));
    if (!m) continue;
    const [, slot = "", score, ping, raw = ""] = m;
    const name = raw.trim();
    if (name) players.push({ id: name, name, slot, extra: { Score: Number(score), Ping: ping } });
  }
  const map = /^map:\s*(\S+)/m.exec(reply)?.[1];
  return { players, ...(map ? { map } : {}) };
}

export const openarena: Preset = {
  name: "openarena",
  title: "OpenArena (ioquake3)",
  ...knownByName(quakeName),
  colours: "quake",
  commandPrefix: "!",
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
