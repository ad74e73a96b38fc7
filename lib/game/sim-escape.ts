/**
 * The sim console's escaping and quoting. Apart from sim.ts because it is the console's syntax, not the game's
 * state: the sim's escape and script runner use it, and tests parse with it (test/support/sim-console.ts).
 */
import { consoleQuoting, type Quoting } from "./presets/quoting.ts";

/**
 * The sim console's quoting: `"` with JSON's backslash escapes; inside a template's quotes, a value is simEscape's
 * string without its quotes (its `"` and `\` escaped).
 */
export const simQuoting: Quoting = consoleQuoting({
  quotes: '"',
  backslash: (_next, quoted) => (quoted ? "escape" : "plain"),
  inQuotes: (value) => simEscape(value).slice(1, -1),
});

/** The sim console's escaping: JSON string syntax, plus DEL, C1 controls and U+2028/2029 as \u escapes. */
export function simEscape(value: string): string {
  return JSON.stringify(value).replace(
    /[\u007f-\u009f\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
