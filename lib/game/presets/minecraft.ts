/**
 * Minecraft Java, vanilla or Paper/Spigot, with LuckPerms for groups (docs/game-consoles.md §3.3, §5.2).
 * Sees: join, leave, chat, deaths (best effort: vanilla prints dozens of free-form sentences), the ready line,
 * and UUIDs through `list uuids` (join lines carry only the name). Cannot see: spawns (no line in vanilla),
 * in-game group changes. RCON dialect `minecraft`; keep `broadcast-rcon-to-ops=false`.
 */
import { escapeForMinecraftConsole, minecraftQuoting } from "./escape.ts";
import { minecraftUuid, stripMinecraftColours } from "./ids.ts";
import type { ListedPlayer, Preset } from "./types.ts";

/**
 * The log prefix: `[12:00:00] [Server thread/INFO]: ` (vanilla, latest.log), `[12:00:00 INFO]: ` (Paper's
 * console), `[…] [Server thread/INFO] [minecraft/MinecraftServer]: ` (Forge), after an optional `> ` prompt.
 * Anchoring at it keeps chat text (`<Bob> Alice left the game`) from forging events: what a player causes the
 * server to print starts with their name (restricted to NAME below) or `<name>`, `* name`, `[name]` after it.
 */
const PREFIX = String.raw`(?:> ?)?\[[^\]]*\](?: \[[^\]]*\]){0,2}: `;
const P = `^${PREFIX}`;
/** Java names, plus Bedrock players' prefixed names (Floodgate's `.` or `*`). */
const NAME = String.raw`[A-Za-z0-9_.*]{1,20}`;
const DEATH = [
  `was .+? by (?<killer_name>${NAME})(?: using .+)?`,
  "was .+",
  "drowned",
  "died",
  "blew up",
  "burned to death",
  "starved to death",
  "suffocated in a wall",
  "froze to death",
  "fell .+",
  "hit the ground too hard",
  "tried to swim in lava",
  "went up in flames",
  "walked into .+",
  "experienced kinetic energy",
  "withered away",
  "discovered the floor was lava",
  "left the confines of this world",
].join("|");

/**
 * The answer to `list uuids`, bare (RCON) or after the log prefix (the wrapped console), at the start of its line:
 * a chat line saying "There are 1 of a max of 20 players online: Mallory (…)" has `<Mallory> ` before it.
 */
export const LIST_HEAD = new RegExp(
  `^(?:${PREFIX})?There are (\\d+)(?: of a max(?: of)? |\\/)(\\d+) players online:(.*)$`,
);
/** One player of the answer; the answer is cut at ", " first, so the time is linear in its length. */
const ENTRY = new RegExp(`^(${NAME}) \\(([0-9a-fA-F-]{32,36})\\)$`);

/**
 * `list uuids`: `There are 2 of a max of 20 players online: Alice (069a79f4-…), Bob (853c80ef-…)`, one line
 * however many players (~55 characters each).
 */
export function parseMinecraftList(reply: string): { players: ListedPlayer[]; maxPlayers?: number } {
  for (const line of stripMinecraftColours(reply).split(/\r?\n/)) {
    const m = LIST_HEAD.exec(line);
    if (!m) continue;
    const players: ListedPlayer[] = [];
    for (const entry of (m[3] ?? "").trim().split(", ")) {
      const [, name = "", raw = ""] = ENTRY.exec(entry) ?? [];
      if (!name) continue;
      const id = minecraftUuid(raw);
      players.push(id ? { id, name } : { name });
    }
    return { players, maxPlayers: Number(m[2]) };
  }
  return { players: [] };
}

export const minecraft: Preset = {
  name: "minecraft",
  title: "Minecraft (vanilla/Paper + LuckPerms)",
  userType: "MINECRAFT",
  serverType: "MINECRAFT",
  identity: "platform",
  normaliseId: minecraftUuid,
  cleanName: (raw) => stripMinecraftColours(raw).trim(),
  idValues: (id) => ({ uuid: id }),
  multiGroup: true,
  colours: "minecraft",
  commandPrefix: "!",
  consoles: {
    rcon: {
      dialect: "minecraft",
      port: 25575,
      enable:
        "in server.properties set enable-rcon=true, rcon.port=25575, rcon.password=<the password> and broadcast-rcon-to-ops=false, then restart the server",
    },
  },
  lines: {
    ready: [new RegExp(`${P}Done \\([\\d.,]+s\\)! For help, type`)],
    identity: [new RegExp(`${P}UUID of player (?<name>${NAME}) is (?<id>[0-9a-fA-F-]{32,36})$`)],
    connect: [new RegExp(`${P}(?<name>${NAME}) joined the game$`)],
    disconnect: [new RegExp(`${P}(?<name>${NAME}) left the game$`)],
    death: [new RegExp(`${P}(?<name>${NAME}) (?:${DEATH})$`)],
    chat: [new RegExp(`${P}(?:\\[Not Secure\\] )?<(?<name>${NAME})> (?<text>.*)$`)],
  },
  // No `echo` on Minecraft's console: a wrapped list reply ends with its one line, the server's own (the prefix).
  list: { command: "list uuids", parse: parseMinecraftList, until: new RegExp(`${P}There are \\d+(?: of a max|\\/)`) },
  commands: {
    kick: "kick {uuid} {reason}",
    message: 'tellraw {uuid} {"text":{text:json}}',
    broadcast: 'tellraw @a {"text":{text:json}}',
    group_add: "lp user {uuid} parent add {group}",
    group_remove: "lp user {uuid} parent remove {group}",
    group_add_temp: "lp user {uuid} parent addtemp {group} {seconds}s",
    stop: "stop",
  },
  escape: escapeForMinecraftConsole,
  quoting: minecraftQuoting,
};
