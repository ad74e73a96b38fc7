/**
 * The plugin protocol's messages (docs/plugin-protocol.md): one JSON object per line, UTF-8, `t` saying what it is.
 * This module only reads and writes them; plugin-link.ts runs the connection.
 */
import type { PlayerRef, StructuredEvent } from "../structured.ts";
import { isRecord } from "../../is-record.ts";

/** 2: the token never crosses the wire (a challenge and HMACs, §4.1); 1 sent it in the hello. */
export const PROTOCOL_VERSION = 2;
/** A nonce, and an HMAC-SHA256, as lower-case hex: 32 bytes. */
export const HEX32 = /^[0-9a-f]{64}$/;

/** The operations hub-agent asks of a plugin; each `req` gets exactly one `res`. */
export const OPS = ["players", "kick", "message", "group", "exec"] as const;
export type Op = (typeof OPS)[number];

export type PluginMessage =
  /** `nonce` and `mac` are checked only when `v` is this version's: another version is refused whatever it sent. */
  | { t: "hello"; v: number; nonce: string; mac: string; game?: string; software?: string }
  | { t: "event"; event: StructuredEvent }
  | { t: "res"; id: number; ok: true; r: unknown }
  | { t: "res"; id: number; ok: false; err: string }
  | { t: "ping" }
  | { t: "pong" }
  /** A `t` or an event this version doesn't know: ignored, so newer plugins keep working. */
  | { t: "unknown"; what: string };

/** A line that isn't a message of this protocol; `message` says what is wrong, for the log and the plugin. */
export class BadLine extends Error {
  override name = "BadLine";
}

const EVENTS: Record<string, StructuredEvent["type"]> = {
  player_connect: "connect",
  player_disconnect: "disconnect",
  player_spawn: "spawn",
  player_death: "death",
  chat: "chat",
  group_change: "group",
};

/** Reads one line from a plugin. Throws BadLine for anything but a valid message. */
export function parseLine(line: string): PluginMessage {
  let m: unknown;
  try {
    m = JSON.parse(line);
  } catch {
    throw new BadLine("not JSON");
  }
  if (!isRecord(m)) throw new BadLine("not a JSON object");
  switch (m.t) {
    case "hello":
      if (typeof m.v !== "number") throw new BadLine(`hello needs "v", the protocol version (${PROTOCOL_VERSION})`);
      if (m.v === PROTOCOL_VERSION && !(hex32(m.nonce) && hex32(m.mac)))
        throw new BadLine('hello needs "nonce" and "mac", each 64 lower-case hex digits');
      return {
        t: "hello",
        v: m.v,
        nonce: hex32(m.nonce) ? m.nonce : "",
        mac: hex32(m.mac) ? m.mac : "",
        ...(typeof m.game === "string" ? { game: m.game.slice(0, 64) } : {}),
        ...(typeof m.software === "string" ? { software: m.software.slice(0, 128) } : {}),
      };
    case "event": {
      const type = typeof m.e === "string" ? EVENTS[m.e] : undefined;
      if (!type) return { t: "unknown", what: `event ${JSON.stringify(m.e)}` };
      return { t: "event", event: parseEvent(type, m) };
    }
    case "res": {
      if (!Number.isSafeInteger(m.id)) throw new BadLine('res needs "id", the request\'s id');
      if (m.ok === true) return { t: "res", id: m.id as number, ok: true, r: m.r ?? null };
      if (m.ok === false) return { t: "res", id: m.id as number, ok: false, err: str(m.err) ?? "failed" };
      throw new BadLine('res needs "ok": true or false');
    }
    case "ping":
    case "pong":
      return { t: m.t };
    default:
      if (typeof m.t !== "string") throw new BadLine('no "t" saying what the message is');
      return { t: "unknown", what: `t ${JSON.stringify(m.t)}` };
  }
}

function parseEvent(type: StructuredEvent["type"], m: Record<string, unknown>): StructuredEvent {
  const player = playerRef(m.p, "p");
  switch (type) {
    case "connect": {
      const ip = str(m.ip);
      return { type, player, ...(ip ? { ip } : {}) };
    }
    case "disconnect": {
      const reason = str(m.reason);
      return { type, player, ...(reason !== undefined ? { reason } : {}) };
    }
    case "spawn":
      return { type, player };
    case "death":
      return { type, player, ...(m.killer != null ? { killer: playerRef(m.killer, "killer") } : {}) };
    case "chat": {
      const text = str(m.text);
      if (text === undefined) throw new BadLine('chat needs "text", a string');
      return { type, player, text };
    }
    case "group": {
      const group = str(m.group);
      if (!group) throw new BadLine('group_change needs "group", the group\'s name');
      if (m.op !== "add" && m.op !== "remove") throw new BadLine('group_change needs "op": "add" or "remove"');
      const seconds = typeof m.seconds === "number" && m.seconds > 0 ? m.seconds : undefined;
      return { type, player, group, op: m.op, ...(seconds ? { seconds } : {}) };
    }
  }
}

/** `{"id": …, "name": …, "slot"?: …}`; numbers are taken as strings (some games count slots). */
function playerRef(p: unknown, field: string): PlayerRef {
  if (!isRecord(p)) throw new BadLine(`"${field}" must be a player: {"id": "…", "name": "…"}`);
  const id = idString(p.id);
  const name = str(p.name);
  if (!id) throw new BadLine(`"${field}.id" must be the player's id, a non-empty string`);
  if (name === undefined) throw new BadLine(`"${field}.name" must be the player's name, a string`);
  const slot = idString(p.slot);
  return { id, name, ...(slot ? { slot } : {}) };
}

/** The reply to `players`: `{"players": [player…], "max"?: n, "map"?: "…"}`. */
export function parsePlayers(r: unknown): { players: PlayerRef[]; max?: number; map?: string } {
  if (!isRecord(r) || !Array.isArray(r.players)) throw new BadLine('the players reply needs "players", an array');
  const players = r.players.map((p, i) => playerRef(p, `players[${i}]`));
  const max = typeof r.max === "number" && r.max >= 0 ? Math.floor(r.max) : undefined;
  const map = str(r.map);
  return { players, ...(max !== undefined ? { max } : {}), ...(map ? { map } : {}) };
}

/** The reply to `exec`: `{"output": "…"}` (or a bare string). */
export function parseOutput(r: unknown): string {
  if (typeof r === "string") return r;
  if (isRecord(r) && typeof r.output === "string") return r.output;
  if (r === null || (isRecord(r) && r.output === undefined)) return "";
  throw new BadLine('the exec reply needs "output", a string');
}

/** One line to the plugin, ending in "\n". JSON escapes every line break inside strings. */
export function encode(message: Record<string, unknown>): string {
  return `${JSON.stringify(message)}\n`;
}

function hex32(x: unknown): x is string {
  return typeof x === "string" && HEX32.test(x);
}

function str(x: unknown): string | undefined {
  return typeof x === "string" ? x : undefined;
}

function idString(x: unknown): string | undefined {
  if (typeof x === "string" && x.trim()) return x.trim();
  if (typeof x === "number" && Number.isSafeInteger(x)) return String(x);
  return undefined;
}
