/**
 * The HL log standard that srcds prints with `log on` (to the console with `sv_logecho 1`, and to logs/*.log):
 * `L 11/21/2026 - 10:00:00: "Alice<2><STEAM_0:1:123><Team>" connected, address "1.2.3.4:27005"`.
 * Shared by the gmod and cs2 presets; the id column is STEAM_X:Y:Z in GMod and [U:1:N] in CS2.
 */

/**
 * The date prefix; `L ` is missing in some console echoes. Not an anchor a player can't reach: srcds prints chat on
 * the console as `<name>: <text>`, and a player may be named `11/21/2026 - 10:00:00` (SRCDS_CONSOLE_CHAT).
 */
const P = String.raw`^(?:L )?\d\d/\d\d/\d{4} - \d\d:\d\d:\d\d: `;

/**
 * What srcds prints before the name of a player's chat on its console (Host_Say: `<prefix> <name>: <text>`, the
 * prefix from the game's rules): nothing, `(TEAM)`, `*DEAD*`, `*SPEC*`, CS's `(Counter-Terrorist)` and the like.
 */
export const SRCDS_CONSOLE_CHAT = /^(?:(?:\*DEAD\*|\*SPEC\*|\([^()]*\)) ?)*/;

/**
 * A player as `"Name<userid><id><team>"`. The name may not hold `"`: a chat line's text may, and the
 * closing quote is what keeps `"Alice<2>…" say "x<3><…><>" connected, address ""` from forging a connect.
 */
const player = (prefix = "") =>
  String.raw`"(?<${prefix}name>[^"]*)<(?<${prefix}slot>\d+)><(?<${prefix}id>[^>]*)><[^>]*>"`;

/** Positions CS2 adds after each player in kill lines. */
const POS = String.raw`(?: \[-?\d+ -?\d+ -?\d+\])?`;

export const hlLogLines = () => ({
  identity: [
    new RegExp(`${P}${player()} STEAM USERID validated$`),
    // A rename: the new name is the player's from here on (and their console chat lines' too).
    new RegExp(`${P}"[^"]*<(?<slot>\\d+)><(?<id>[^>]*)><[^>]*>" changed name to "(?<name>[^"]*)"$`),
  ],
  connect: [new RegExp(`${P}${player()} connected, address "[^"]*"$`)],
  disconnect: [new RegExp(`${P}${player()} disconnected(?: \\(reason "(?<reason>.*)"\\))?$`)],
  spawn: [new RegExp(`${P}${player()} entered the game$`)],
  death: [
    new RegExp(`${P}${player("killer_")}${POS} killed ${player()}${POS} with "[^"]*"(?: \\(.*\\))?$`),
    new RegExp(`${P}${player()} committed suicide with "[^"]*"$`),
  ],
  chat: [new RegExp(`${P}${player()} say(?:_team)? "(?<text>.*)"$`)],
});
