/**
 * Where a placeholder sits in a template, read the way the target console reads it, and the form its value takes
 * there (docs/game-consoles.md §4). Reward commands written for VyHub's official addons quote their placeholders
 * (`ulx psay "%nick%" thanks`), and a value escaped with its own quotes would close that region instead: `;` in the
 * nick would then end the command. So a value inside quotes goes in without quotes of its own, in a form that can
 * neither close the region, nor escape its closing quote, nor end the command; outside quotes it is escaped as a
 * standalone argument. One scan serves the preset templates (`{name}`) and the reward tokens (`%nick%`).
 */

export class TemplateError extends Error {
  override name = "TemplateError";
}

/** Outside any quotes (`quote` null), inside a region that `quote` opened, or where no value may go (why, and the fix). */
export type Place = { quote: string | null } | { refused: string };

export interface Quoting {
  /** Where each of `offsets` (ascending) sits in `template`. */
  places(template: string, offsets: readonly number[]): Place[];
  /** The value inside a region that `quote` opened. */
  inQuotes(value: string, quote: string): string;
}

/** A console's escaping: a value standing alone (`escape`) and inside the template's quotes (`quoting`). */
export interface Escaping {
  escape(value: string): string;
  quoting: Quoting;
}

/**
 * What a backslash does to the character after it, inside quotes or not: takes it along so it quotes nothing
 * (`escape`), nothing (`plain`), or something the engines this quoting serves disagree on (`unclear`).
 */
export type Backslash = (next: string, quoted: boolean) => "escape" | "plain" | "unclear";

/**
 * A command console: each character of `quotes` opens a region that the same character closes, a line break ends
 * the command and any region, and `backslash` says what `\` does. A region still open at the end runs to the end of
 * the line, which is how every console here reads an unclosed quote, so a value there goes in its in-quote form.
 * `starComments`: `/*` outside quotes opens a comment that ioquake3 ends together with the command at its `*\/`.
 */
export function consoleQuoting(o: {
  quotes: string;
  backslash: Backslash;
  inQuotes: (value: string, quote: string) => string;
  starComments?: boolean;
}): Quoting {
  return {
    inQuotes: o.inQuotes,
    places(template, offsets) {
      const out: Place[] = [];
      let quote: string | null = null;
      /** Why every placeholder from here on is refused. */
      let refuse: string | undefined;
      for (let i = 0; out.length < offsets.length; i++) {
        // `<=`: an escape may have stepped over an offset; past the end, an unclosed region runs to the end.
        while (out.length < offsets.length && (offsets[out.length]! <= i || i >= template.length))
          out.push(refuse ? { refused: refuse } : { quote });
        const c = template[i];
        if (c === "\\" && i + 1 < template.length) {
          const quoted = quote !== null;
          if (offsets[out.length] === i + 1 && o.backslash('"', quoted) !== "plain")
            out.push({ refused: AFTER_BACKSLASH });
          const does = o.backslash(template[i + 1]!, quoted);
          if (does === "escape") i++;
          else if (does === "unclear") refuse ??= unclearBackslash(i);
        } else if (o.starComments && quote === null && c === "/" && template[i + 1] === "*") {
          refuse ??= afterStarComment(i);
        } else if (c === "\n" || c === "\r") quote = null;
        else if (quote === null && c !== undefined && o.quotes.includes(c)) quote = c;
        else if (c === quote) quote = null;
      }
      return out;
    },
  };
}

/** Why a placeholder right after a backslash is refused where a backslash escapes. */
export const AFTER_BACKSLASH =
  "comes right after a backslash, which would take the value's first character along (its opening quote, say): remove the backslash or put a space after it";

/**
 * ioquake3's command buffer ends a command at the `*\/` closing a comment (so what follows is a command of its own),
 * and its tokenizer skips to the next `*\/` even inside a value's quotes.
 */
const afterStarComment = (i: number) =>
  `comes after the /* at column ${i + 1}: the console ends the command where that comment closes, so the value could be a command of its own or end the comment early: remove the comment`;

const unclearBackslash = (i: number) =>
  `comes after the backslash at column ${i + 1}, which this console's engines read differently (an escape or a character), so whether the value sits inside quotes is unclear: remove the backslash`;

/** A console that groups no quoted text, or an escaping whose output is the same inside quotes: always standalone. */
export const NO_QUOTES: Quoting = {
  places: (_template, offsets) => offsets.map(() => ({ quote: null })),
  inQuotes: () => {
    throw new Error("NO_QUOTES has no quoted places");
  },
};

/**
 * Replaces every match of the global `pattern` in one pass: `fill` gets the match and where it sits. What `fill`
 * returns is never scanned again, so a value holding a placeholder stays text.
 */
export function fillPlaced(
  template: string,
  pattern: RegExp,
  quoting: Quoting,
  fill: (m: RegExpExecArray, place: Place) => string,
): string {
  const matches = [...template.matchAll(pattern)];
  const places = quoting.places(
    template,
    matches.map((m) => m.index),
  );
  let out = "";
  let last = 0;
  matches.forEach((m, i) => {
    out += template.slice(last, m.index) + fill(m, places[i]!);
    last = m.index + m[0].length;
  });
  return out + template.slice(last);
}

/** `value` as it is written where `place` says; a TemplateError naming `token` where no value may go. */
export function writeAt(escaping: Escaping, place: Place, value: string, token: string): string {
  if ("refused" in place) throw new TemplateError(`${token} ${place.refused}`);
  return place.quote === null ? escaping.escape(value) : escaping.quoting.inQuotes(value, place.quote);
}
