/**
 * Adverts, the pure part (docs/client-interface.md rule 15, docs/client-interface.md §10.3): which adverts to show, in
 * what order, and how one advert becomes chat lines for a game.
 */
import type { Advert } from "../api/client.ts";
import type { ColourMode } from "../game/bridge.ts";

export type { ColourMode };

/** The colour tags VyHub documents for adverts (docs/client-interface.md §10.3). Anything else stays literal text. */
export const COLOUR_TAGS = ["red", "green", "blue", "yellow", "pink"] as const;
export type ColourTag = (typeof COLOUR_TAGS)[number];

const CODES: Record<Exclude<ColourMode, "strip">, Record<ColourTag | "reset", string>> = {
  minecraft: { red: "§c", green: "§a", blue: "§9", yellow: "§e", pink: "§d", reset: "§r" },
  quake: { red: "^1", green: "^2", blue: "^4", yellow: "^3", pink: "^6", reset: "^7" },
};

const sortKey = (a: Advert) => a.sort_id ?? Number.POSITIVE_INFINITY;

/**
 * The adverts to show: enabled ones only (checked here too, in case the API's filter is ignored), by
 * sort_id ascending; adverts without one go last; ties keep the API's order.
 */
export function enabledAdverts(list: readonly Advert[]): Advert[] {
  return list.filter((a) => a.enabled).sort((a, b) => sortKey(a) - sortKey(b));
}

/**
 * Cycles through the adverts. Wraps straight to the first advert, with no silent tick at the end of a
 * cycle (gmod's and fivem's quirk). When a refresh replaces the list, it continues after the advert
 * shown last: at its new place if it is still there, otherwise at the first one that sorts after it.
 */
export class AdvertRotation {
  #list: Advert[] = [];
  #cursor = 0;
  #last: Advert | undefined;

  constructor(list: readonly Advert[] = []) {
    this.update(list);
  }

  /** Replace the list (raw API answer; filtered and sorted here). */
  update(list: readonly Advert[]): void {
    this.#list = enabledAdverts(list);
    const last = this.#last;
    if (!last) return void (this.#cursor = 0);
    const same = this.#list.findIndex((a) => a.id === last.id);
    const after = this.#list.findIndex((a) => sortKey(a) > sortKey(last));
    this.#cursor = same >= 0 ? same + 1 : Math.max(after, 0);
  }

  /** The advert to show now, or undefined when there is none. */
  next(): Advert | undefined {
    if (this.#list.length === 0) return undefined;
    if (this.#cursor >= this.#list.length) this.#cursor = 0;
    const advert = this.#list[this.#cursor++];
    this.#last = advert;
    return advert;
  }

  get size(): number {
    return this.#list.length;
  }
}

/** Printable ASCII only: what every console shows as it is. */
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * The prefix this console can show. Quake-engine consoles (colour mode `quake`) show bytes, not UTF-8 characters:
 * ioq3 prints each byte above 127 as `.` (OpenArena's client showed `[★] ` as `[...] `) and DarkPlaces as Nexuiz
 * ships it draws a glyph of its own font for each byte. There a prefix that is not plain ASCII gives way to
 * `ascii` (the language file's `advert.prefix_ascii`, `[*] ` in English); every other console gets `prefix`.
 */
export function advertPrefix(prefix: string, ascii: string, colours: ColourMode): string {
  return colours === "quake" && !PRINTABLE_ASCII.test(prefix) ? ascii : prefix;
}

/**
 * Chat lines for one advert: content split on `\n` (never the OS separator; a trailing `\r` from
 * Windows-authored text is dropped), blank lines skipped, every line prefixed. A colour still open at
 * the end of a line carries over to the next, since each line is sent as its own message.
 */
export function formatAdvert(content: string, opts: { prefix: string; colours: ColourMode }): string[] {
  const prefix = renderColourTags(opts.prefix, opts.colours);
  const stack: ColourTag[] = [];
  const lines: string[] = [];
  for (const raw of content.split("\n")) {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    const carried = stack.at(-1);
    const body = renderColourTags(line, opts.colours, stack);
    if (stripTags(line).trim() === "") continue;
    lines.push(prefix + (carried ? code(opts.colours, carried) : "") + body);
  }
  return lines;
}

/**
 * Replace `<red>…</red>`-style tags (case-insensitive) in one line. A closing tag returns to the
 * enclosing colour, or resets. `stack` carries open colours across calls; unknown tags stay as text.
 */
export function renderColourTags(text: string, colours: ColourMode, stack: ColourTag[] = []): string {
  return text.replace(TAG, (_match, slash: string, name: string) => {
    const tag = name.toLowerCase() as ColourTag;
    if (!slash) {
      stack.push(tag);
      return code(colours, tag);
    }
    stack.pop();
    return code(colours, stack.at(-1) ?? "reset");
  });
}

const TAG = new RegExp(`<(/?)(${COLOUR_TAGS.join("|")})>`, "gi");

function stripTags(text: string): string {
  return text.replace(TAG, "");
}

function code(colours: ColourMode, tag: ColourTag | "reset"): string {
  return colours === "strip" ? "" : CODES[colours][tag];
}
