/**
 * Garry's Mod SCRIPT rewards: Lua code run on the server through its console (`lua_run`), with a `PLAYER` local
 * as the official addon gives it. The console splits commands at `;` and ends a quoted argument at the next `"`,
 * and the engine caps a command at 512 bytes, so code never travels as written: it is sent base64-encoded, in
 * chunks appended to one global, and only the last line decodes and runs it. A line that fails before the last
 * leaves nothing run.
 */
import { Buffer } from "node:buffer";
import { sanitize, withoutQuotes } from "./escape.ts";
import { AFTER_BACKSLASH, type Place, type Quoting } from "./quoting.ts";

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

/** `[[`, `[==[`, …: the level (number of `=`) of the long bracket opening at `i`, or -1. */
function longBracket(code: string, i: number): number {
  if (code[i] !== "[") return -1;
  let j = i + 1;
  while (code[j] === "=") j++;
  return code[j] === "[" ? j - i - 1 : -1;
}

const LONG_STRING =
  "sits inside a Lua long string ([[…]]), which has no escapes, so no value can be kept from ending it: close the long string before the placeholder and concatenate (`]] .. %nick% .. [[`), or use a quoted string";
const BLOCK_COMMENT = "sits inside a block comment (--[[…]] or /* … */): take it out of the comment";

/**
 * Where placeholders sit in Lua code as Garry's Mod reads it (Lua 5.1 plus `//` and `/* … *\/` comments): in code
 * or a line comment a value is a complete string literal (luaString); inside a quoted string it goes in as
 * withoutQuotes makes it, so it can end neither that string nor a console command the string may carry
 * (`game.ConsoleCommand("ulx psay \"%nick%\" hi\n")`); inside a long string or a block comment it is refused.
 */
export const luaQuoting: Quoting = {
  inQuotes: (value) => withoutQuotes(sanitize(value)),
  places(code, offsets) {
    const out: Place[] = [];
    /** What the scan is in: code, a quoted string (its quote), a line comment, or a long bracket (its closing text). */
    let state: { in: "code" | "line" } | { in: "quote"; quote: string } | { in: "long"; close: string; why: string } = {
      in: "code",
    };
    const place = (): Place =>
      state.in === "quote" ? { quote: state.quote } : state.in === "long" ? { refused: state.why } : { quote: null };
    for (let i = 0; out.length < offsets.length; i++) {
      while (out.length < offsets.length && (offsets[out.length]! <= i || i >= code.length)) out.push(place());
      const c = code[i];
      if (state.in === "quote") {
        if (c === "\\" && offsets[out.length] === i + 1) out.push({ refused: AFTER_BACKSLASH });
        // Only its quote ends a string: Lua carries it over an escaped line break (`\z`, a backslash before CR LF),
        // and one not escaped is a syntax error that runs nothing.
        if (c === "\\") i++;
        else if (c === state.quote) state = { in: "code" };
      } else if (state.in === "line") {
        // Lua ends a line at LF or CR alike.
        if (c === "\n" || c === "\r") state = { in: "code" };
      } else if (state.in === "long") {
        if (code.startsWith(state.close, i)) {
          i += state.close.length - 1;
          state = { in: "code" };
        }
      } else if (c === '"' || c === "'") state = { in: "quote", quote: c };
      else if (c === "-" && code[i + 1] === "-") {
        const level = longBracket(code, i + 2);
        state = level < 0 ? { in: "line" } : { in: "long", close: `]${"=".repeat(level)}]`, why: BLOCK_COMMENT };
        i += level < 0 ? 1 : level + 3;
      } else if (c === "/" && code[i + 1] === "/") {
        state = { in: "line" };
        i++;
      } else if (c === "/" && code[i + 1] === "*") {
        state = { in: "long", close: "*/", why: BLOCK_COMMENT };
        i++;
      } else if (longBracket(code, i) >= 0) {
        const level = longBracket(code, i);
        state = { in: "long", close: `]${"=".repeat(level)}]`, why: LONG_STRING };
        i += level + 1;
      }
    }
    return out;
  },
};

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
