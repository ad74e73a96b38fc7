/**
 * Command templates: `kick {uuid} {reason}`. Two kinds of placeholder:
 * - ids and numbers (`{steam64}`, `{slot}`, `{seconds}`, …) are inserted as they are, and must be plain tokens;
 * - text (`{name}`, `{reason}`, `{text}`, `{group}`) goes through the preset's console escaping, or with
 *   `:json` (`{text:json}`) becomes a JSON string literal.
 * Braces that don't enclose a known placeholder name stay literal, so `tellraw @a {"text":{text:json}}` works.
 * A text placeholder inside the template's quotes (`say "[{name}] {text}"`) takes the console's in-quote form
 * (lib/game/presets/quoting.ts); a `:json` one brings its own quotes, so it can't sit inside quotes.
 */
import { jsonString } from "./escape.ts";
import { type Escaping, fillPlaced, TemplateError, writeAt } from "./quoting.ts";

export { TemplateError };

export const ID_PLACEHOLDERS = [
  "id",
  "steam64",
  "steam2",
  "steam3",
  "uuid",
  "slot",
  "userid",
  "seconds",
  "minutes",
] as const;
export const TEXT_PLACEHOLDERS = ["name", "reason", "text", "group"] as const;
export type Placeholder = (typeof ID_PLACEHOLDERS)[number] | (typeof TEXT_PLACEHOLDERS)[number];

const PLACEHOLDER = /\{([a-z0-9_]+)(?::([a-z]+))?\}/g;
const KNOWN = new Set<string>([...ID_PLACEHOLDERS, ...TEXT_PLACEHOLDERS]);
const TEXT = new Set<string>(TEXT_PLACEHOLDERS);
/** What an id placeholder may hold: SteamIDs in all three forms, UUIDs, numbers. */
const PLAIN_TOKEN = /^[A-Za-z0-9_:.[\]-]{1,64}$/;

/** The placeholders a template uses; throws on unknown ones or filters, naming them and the known ones. */
export function placeholdersOf(template: string): Placeholder[] {
  const found: Placeholder[] = [];
  for (const m of template.matchAll(PLACEHOLDER)) {
    const [whole, key = "", filter] = m;
    if (!KNOWN.has(key)) {
      // `{"text":…}` never matches; a word in braces that is not ours is almost certainly a typo.
      throw new TemplateError(`unknown placeholder ${whole}: use ${[...KNOWN].map((k) => `{${k}}`).join(", ")}`);
    }
    if (filter !== undefined && (filter !== "json" || !TEXT.has(key))) {
      throw new TemplateError(`${whole}: only text placeholders take a filter, and the only filter is :json`);
    }
    found.push(key as Placeholder);
  }
  return found;
}

export type TemplateValues = Partial<Record<Placeholder, string | number | undefined>>;

/**
 * Renders a template; throws a TemplateError when a value it needs is missing, an id is not a plain token, or a
 * value sits where the console's quoting lets none go.
 */
export function render(template: string, values: TemplateValues, escaping: Escaping): string {
  placeholdersOf(template);
  return fillPlaced(template, PLACEHOLDER, escaping.quoting, (m, place) => {
    const [whole, key = "", filter] = m;
    const value = values[key as Placeholder];
    if (value === undefined) throw new TemplateError(`{${key}} is not known for this player`);
    const text = String(value);
    if (TEXT.has(key)) {
      if (filter !== "json") return writeAt(escaping, place, text, whole);
      if (!("quote" in place) || place.quote !== null)
        throw new TemplateError(
          `${whole} sits inside quotes, but a JSON string brings its own: remove the quotes around it`,
        );
      return jsonString(text);
    }
    if (!PLAIN_TOKEN.test(text)) throw new TemplateError(`{${key}} = ${JSON.stringify(text)} is not a plain id`);
    return text;
  });
}

/** A value for every placeholder, as they could be: what a template is rendered with at load, to check it. */
export const SAMPLE_VALUES: Record<Placeholder, string> = Object.fromEntries(
  [...ID_PLACEHOLDERS, ...TEXT_PLACEHOLDERS].map((k) => [k, "0"]),
) as Record<Placeholder, string>;
