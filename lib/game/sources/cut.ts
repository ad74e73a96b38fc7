/**
 * How much of a line is read (docs/game-consoles.md §8), apart from ./lines.ts so that what only cuts a line (the
 * presets' row parser at every configuration load) doesn't load the terminal-escape stripping with it.
 */

/**
 * The longest line a source delivers (1 MiB): what goes beyond is dropped up to the line's end, never delivered as
 * a line of its own (its start would be whatever text sat there: a player's). Minecraft's `list uuids` answer is
 * one line of ~55 characters a player, so this still holds ~19,000 players.
 */
export const MAX_LINE_CHARS = 1024 * 1024;

/**
 * The part of a line a pattern sees (64 KiB): far beyond any game's chat or list row, and short enough that a
 * linear pattern takes well under a millisecond on it. A list parser sees a whole reply.
 */
export const MATCH_CHARS = 64 * 1024;

/**
 * A line as a pattern sees it: its first MATCH_CHARS, with line ends left inside it (`\r`, `\n`, U+2028, U+2029:
 * JavaScript's `.` stops at each) as spaces, so `.` matches every character of a line and a pattern ending in
 * `(.*)$` can't fail on one (and backtrack over it again and again).
 */
export function cutLine(text: string): string {
  return (text.length > MATCH_CHARS ? text.slice(0, MATCH_CHARS) : text).replace(/[\n\r\u2028\u2029]/g, " ");
}
