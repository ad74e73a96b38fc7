/**
 * Garry's Mod SCRIPT rewards: Lua code run on the server through its console (`lua_run`), with a `PLAYER` local
 * as the official addon gives it. The console splits commands at `;` and ends a quoted argument at the next `"`,
 * and the engine caps a command at 512 bytes, so code never travels as written: it is sent base64-encoded, in
 * chunks appended to one global, and only the last line decodes and runs it. A line that fails before the last
 * leaves nothing run.
 */
import { Buffer } from "node:buffer";

/** A value as a complete Lua 5.1 string literal: quotes and backslashes escaped, control bytes as `\ddd`. */
export function luaString(value: string): string {
  let out = '"';
  for (const byte of Buffer.from(value, "utf8")) {
    if (byte === 0x22) out += '\\"';
    else if (byte === 0x5c) out += "\\\\";
    else if (byte < 0x20 || byte === 0x7f) out += `\\${String(byte).padStart(3, "0")}`;
    else out += String.fromCharCode(byte);
  }
  return Buffer.from(`${out}"`, "latin1").toString("utf8");
}

/** Base64 characters per console line: with the command around them, well under the engine's 512 bytes. */
const CHUNK = 400;

/** The console lines that run `code` with `PLAYER` set to the reward's player (nil for none). */
export function luaRunLines(code: string, player: { id: string } | null, tag: string): string[] {
  const who = player ? `player.GetBySteamID64(${luaString(player.id)})` : "nil";
  const encoded = Buffer.from(`local PLAYER = ${who}\n${code}`, "utf8").toString("base64");
  const name = `_G.hub_agent_${tag.replace(/[^A-Za-z0-9]/g, "")}`;
  const lines: string[] = [];
  for (let i = 0; i < encoded.length; i += CHUNK) {
    const chunk = encoded.slice(i, i + CHUNK);
    lines.push(i === 0 ? `lua_run ${name} = "${chunk}"` : `lua_run ${name} = ${name} .. "${chunk}"`);
  }
  lines.push(`lua_run local s = ${name} ${name} = nil RunString(util.Base64Decode(s), "hub-agent reward")`);
  return lines;
}
