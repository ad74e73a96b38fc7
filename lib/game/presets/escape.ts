/**
 * Escaping a value (a nick, a reason, a message) so it stays one argument of one command on a game console
 * (docs/game-consoles.md §4). Every console here ends a command at a line break, so line breaks and other control
 * characters never pass; the rest depends on how the console splits commands and arguments.
 */
import { CONTROL } from "../../log.ts";
import { type Backslash, consoleQuoting, type Escaping, NO_QUOTES, type Quoting } from "./quoting.ts";

/**
 * Longest value, in UTF-8 bytes, that a template receives: consoles and their packets are short (a Quake 3 rcon
 * request is at most 1023 bytes, a Minecraft RCON command 1446), and no chat line is longer anyway.
 */
export const MAX_VALUE_BYTES = 400;

const encoder = new TextEncoder();

/**
 * Control characters (C0, DEL, C1), line and paragraph separators become spaces; lone surrogates become U+FFFD;
 * the result is cut to `maxBytes` of UTF-8 at a character boundary. What is left is printable text on one line.
 */
export function sanitize(value: string, maxBytes = MAX_VALUE_BYTES): string {
  const clean = value.toWellFormed().replace(CONTROL, " ");
  if (encoder.encode(clean).length <= maxBytes) return clean;
  let out = "";
  let bytes = 0;
  for (const ch of clean) {
    bytes += encoder.encode(ch).length;
    if (bytes > maxBytes) break;
    out += ch;
  }
  return out;
}

/**
 * Source engine (srcds: GMod, CS2) and Quake 3 (ioq3): a command ends at a line break, or at `;` outside double
 * quotes; a double-quoted argument has no escapes and ends at the next `"`, so inside it `;`, `//` and spaces
 * are plain text. The value is quoted and its own `"` become `'`.
 */
export function quoteForSourceConsole(value: string): string {
  return `"${sanitize(value).replace(/"/g, "'")}"`;
}

/** Longest value for a Quake 3 console: no chat line holds more (150 bytes), and see quoteForQuakeConsole. */
export const QUAKE_VALUE_BYTES = 150;

/**
 * Quake 3 (ioq3): quoted like Source, and cut to QUAKE_VALUE_BYTES, so that a command with its values stays within
 * the 256 bytes a wrapped ioq3 reads from its stdin at a time (docs/game-consoles.md §2.3); a longer line is refused.
 */
export function quoteForQuakeConsole(value: string): string {
  return `"${sanitize(value, QUAKE_VALUE_BYTES).replace(/"/g, "'")}"`;
}

/**
 * Rust's console (Facepunch ConsoleSystem): quoted like Source, but whether `;` inside quotes and backslashes
 * are safe there is unverified, so `;` becomes `,` and `\` becomes `/` as well.
 */
export function quoteForRustConsole(value: string): string {
  return `"${sanitize(value).replace(/"/g, "'").replace(/;/g, ",").replace(/\\/g, "/")}"`;
}

/**
 * Teeworlds / DDNet: a command ends at `;` outside double quotes, and inside quotes a backslash escapes the next
 * character (so a value ending in `\` would swallow the closing quote): quoted, with `"` as `'` and `\` as `/`.
 */
export function quoteForTeeworldsConsole(value: string): string {
  return `"${sanitize(value).replace(/"/g, "'").replace(/\\/g, "/")}"`;
}

/**
 * DarkPlaces (Xonotic, Nexuiz): the console splits commands like Source's, but inside quotes `\"` and `\\` are
 * escapes, and before running a line it expands `$name` and `${…}` to cvar values (`$$` is one `$`). `say`, `tell`
 * and `kick` print their arguments as typed, so an escaped quote would show its backslash: quoted, `"` as `'`, `\`
 * as `/`, `$` as `$$`. Colour codes (`^1`) stay: they colour the text and can't break the command.
 */
export function quoteForDarkplacesConsole(value: string): string {
  return `"${sanitize(value)
    .replace(/"/g, "'")
    .replace(/\\/g, "/")
    .replace(/\$/g, () => "$$")}"`;
}

/**
 * Longest Minecraft value, in characters as Java counts them (UTF-16 units): vanilla refuses a message argument
 * (`kick`'s reason, `say`) of more than 256 ("Chat message was too long"), and with it the whole command, so a
 * banned player would not be kicked.
 */
export const MINECRAFT_VALUE_CHARS = 256;

/**
 * Minecraft (Brigadier): one line is one command, with no separator, so a value is safe once it holds no line
 * break. Values go where the command takes the rest of the line (`kick <target> <reason>`), where `@a`, `@e`, …
 * would be expanded to entity names: a zero-width space after `@` keeps them literal. Cut to MINECRAFT_VALUE_CHARS.
 */
export function escapeForMinecraftConsole(value: string): string {
  const escaped = sanitize(value).replace(/@(?=[aeprsn])/g, "@\u200b");
  if (escaped.length <= MINECRAFT_VALUE_CHARS) return escaped;
  // Not inside a surrogate pair, nor between an `@` and its zero-width space (the template's next letter could
  // make the `@` a selector).
  return escaped
    .slice(0, MINECRAFT_VALUE_CHARS)
    .replace(/[\ud800-\udbff]$/, "")
    .replace(/@$/, "");
}

/** A JSON string literal of the sanitised value (Minecraft `tellraw` text components). */
export function jsonString(value: string): string {
  return JSON.stringify(sanitize(value));
}

/** `strip`: the characters no console we know gives a meaning (see ESCAPE_MODES). */
export function stripForAnyConsole(value: string): string {
  return sanitize(value).replace(/[^\p{L}\p{M}\p{N} .,!?+=_-]/gu, "");
}

// ── Inside the template's quotes (lib/game/presets/quoting.ts) ─────────────────────────────────────────────────

/** What a quoting escaper puts between its quotes: the value's form inside a region the template opened. */
const between = (quoted: (value: string) => string) => (value: string) => quoted(value).slice(1, -1);

/** Source, Quake 3: a backslash is a character like any other. */
const noEscapes: Backslash = () => "plain";
/** Brigadier, JSON, Lua, and Rust at its worst: inside quotes a backslash takes the next character along. */
const escapesInQuotes: Backslash = (_next, quoted) => (quoted ? "escape" : "plain");

/** Source engine (gmod, cs2): `"` opens and closes, with no escapes. */
export const sourceQuoting: Quoting = consoleQuoting({
  quotes: '"',
  backslash: noEscapes,
  inQuotes: between(quoteForSourceConsole),
});

/**
 * Quake 3 (openarena): as Source, cut to QUAKE_VALUE_BYTES; no value after a `/*` comment (ioquake3 ends the command
 * at its `*\/`).
 */
export const quakeQuoting: Quoting = consoleQuoting({
  quotes: '"',
  backslash: noEscapes,
  inQuotes: between(quoteForQuakeConsole),
  starComments: true,
});

/** Rust: the value holds no `"`, `;` or `\` whatever Rust does with them, so either reading of a backslash is safe. */
export const rustQuoting: Quoting = consoleQuoting({
  quotes: '"',
  backslash: escapesInQuotes,
  inQuotes: between(quoteForRustConsole),
});

/**
 * Teeworlds / DDNet: the command splitter skips a `\"` inside quotes or not (CConsole::ExecuteLineStroked), so a
 * backslash before a quote hides it from the quote count.
 */
export const teeworldsQuoting: Quoting = consoleQuoting({
  quotes: '"',
  backslash: (next) => (next === '"' ? "escape" : "plain"),
  inQuotes: between(quoteForTeeworldsConsole),
});

/**
 * DarkPlaces: inside quotes `\"` and `\\` are escapes. Another backslash inside quotes is read differently by the
 * engines of Nexuiz (a character) and current Xonotic (an escape still open at the next `"`): refused.
 */
export const darkplacesQuoting: Quoting = consoleQuoting({
  quotes: '"',
  backslash: (next, quoted) => (!quoted ? "plain" : next === '"' || next === "\\" ? "escape" : "unclear"),
  inQuotes: between(quoteForDarkplacesConsole),
});

/**
 * Inside quotes of a console with two quote characters and backslash escapes (Brigadier's strings, JSON, SNBT,
 * Lua), where a value may sit inside several levels of quoting at once (JSON inside an SNBT string, a console
 * command inside a Lua string): no quote of either kind and no backslash, so it can close no level. `"` becomes
 * `”`, `'` becomes `’`, `\` becomes `/`.
 */
export function withoutQuotes(text: string): string {
  return text.replace(/"/g, "\u201d").replace(/'/g, "\u2019").replace(/\\/g, "/");
}

/** Minecraft (Brigadier): `"` and `'` quote, with backslash escapes; inside, the value as withoutQuotes makes it. */
export const minecraftQuoting: Quoting = consoleQuoting({
  quotes: `"'`,
  backslash: escapesInQuotes,
  inQuotes: (value) => withoutQuotes(escapeForMinecraftConsole(value)),
});

/**
 * `quote` serves consoles that disagree on `\"` (Source and Quake 3 read a backslash and a quote, Teeworlds and
 * OpenTTD an escaped quote): a template with a backslash before a quote is refused, and, for Quake 3, a value after
 * a `/*` comment.
 */
const quoteModeQuoting: Quoting = consoleQuoting({
  quotes: '"',
  backslash: (next) => (next === '"' ? "unclear" : "plain"),
  inQuotes: between(quoteForTeeworldsConsole),
  starComments: true,
});

/** `line`: one line is one command, so no reading of the quotes can start another; inside, as withoutQuotes makes it. */
const lineModeQuoting: Quoting = consoleQuoting({
  quotes: `"'`,
  backslash: escapesInQuotes,
  inQuotes: (value) => withoutQuotes(sanitize(value)),
});

/**
 * `game.overrides.escape`: the escapings an operator picks for a console hub-agent has no preset for
 * (docs/game-consoles.md §4).
 * - `quote`: `"…"`, with `"` as `'` and `\` as `/`: one argument on every console that groups double-quoted text
 *   and ends a command at `;` only outside quotes (Source, Quake 3, Teeworlds, OpenTTD), whether or not a backslash
 *   escapes there.
 * - `line`: the value as it is, control characters removed: for consoles where one line is one command and has no
 *   separator (Minecraft-like), with the value last in the template.
 * - `strip`: unquoted, with only letters, marks, digits, spaces and `. , ! ? + = _ -` kept: nothing any console we
 *   know treats specially survives (the generic preset's default). Spaces still split arguments where the console
 *   does, so the value belongs last in the template.
 */
export const ESCAPE_MODES = {
  quote: { escape: quoteForTeeworldsConsole, quoting: quoteModeQuoting },
  line: { escape: (value: string) => sanitize(value), quoting: lineModeQuoting },
  // Nothing it keeps is special to any console: the same inside quotes as outside.
  strip: { escape: stripForAnyConsole, quoting: NO_QUOTES },
} as const satisfies Record<string, Escaping>;
export type EscapeMode = keyof typeof ESCAPE_MODES;
export const ESCAPE_MODE_NAMES = Object.keys(ESCAPE_MODES) as EscapeMode[];
