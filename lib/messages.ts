/**
 * Player- and operator-facing sentences (docs/client-interface.md rule 16 and §10.4). They come from a JSON
 * language file: a built-in locale of lang/ or the operator's own file. English is the fallback for every key a
 * translation lacks, as in the reference integrations.
 *
 * File format: `{ "section": { "key": "text with {placeholder}" } }` (one level of nesting) or flat
 * `{ "section.key": "…" }`. Texts may hold `<red>…</red>` colour tags; the game bridge renders them.
 */
import { readFile as fsReadFile } from "./fsio.ts";
import { isAbsolute, resolve } from "node:path";
// Embedded so the compiled binary needs no files at run time.
import de from "../lang/de.json" with { type: "json" };
import en from "../lang/en.json" with { type: "json" };
import type { Logger } from "./log.ts";
import { isRecord } from "./is-record.ts";

type English = typeof en;
/** Every key of the English file, as `section.key`. */
export type MessageKey = {
  [S in keyof English]: `${S & string}.${keyof English[S] & string}`;
}[keyof English];

export type MessageVars = Record<string, string | number>;

export interface Messages {
  /** The locale, or the path of the operator's file. */
  readonly lang: string;
  /** The sentence with `{name}` placeholders filled in; an unknown placeholder stays visible. */
  t(key: MessageKey, vars?: MessageVars): string;
}

export interface LoadMessagesOptions {
  logger: Logger;
  /** For tests; defaults to reading the file as UTF-8. */
  readFile?: (path: string) => Promise<string> | string;
  /** Where a relative path is resolved from (the config file's directory); defaults to the working directory. */
  baseDir?: string;
}

/** A language file that cannot be used; the message names the file and the fix. */
export class MessagesError extends Error {
  override name = "MessagesError";
}

const BUILT_IN: Record<string, unknown> = { en, de };
export const BUILT_IN_LANGS = Object.keys(BUILT_IN);

const ENGLISH = flatten(en, "lang/en.json");

/** `lang` is a built-in locale (en, de; `de-AT` or `de_AT` fall back to de) or a path to a JSON file. */
export async function loadMessages(lang: string, opts: LoadMessagesOptions): Promise<Messages> {
  const log = opts.logger;
  let table: Map<string, string>;
  let name: string;
  if (looksLikePath(lang)) {
    name = isAbsolute(lang) ? lang : resolve(opts.baseDir ?? ".", lang);
    table = flatten(await readJson(name, opts.readFile ?? ((p) => fsReadFile(p, "utf8"))), name);
    for (const key of table.keys()) {
      if (!ENGLISH.has(key)) log.warn(`language file ${name}: unknown key "${key}" is ignored (a typo?)`, { key });
    }
  } else {
    name = builtInLocale(lang);
    table = name === "en" ? ENGLISH : flatten(BUILT_IN[name], `lang/${name}.json`);
  }

  const reported = new Set<string>();
  const once = (key: string, msg: string) => {
    if (reported.has(key)) return;
    reported.add(key);
    log.warn(msg, { key, lang: name });
  };

  return {
    lang: name,
    t(key, vars) {
      let text = table.get(key);
      if (text === undefined) {
        text = ENGLISH.get(key);
        if (text === undefined) {
          once(key, `no message "${key}" in any language file`);
          return key;
        }
        once(key, `language ${name} has no message "${key}"; using the English text`);
      }
      return fill(text, vars);
    },
  };
}

/**
 * Fill `{name}` placeholders in one pass: values go in literally (a callback, so `$&` in a nick is not a
 * replacement pattern) and are never scanned again; an unknown placeholder is left as `{name}`.
 */
export function fill(text: string, vars: MessageVars = {}): string {
  return text.replace(/\{([A-Za-z0-9_]+)\}/g, (match, name: string) =>
    Object.hasOwn(vars, name) ? String(vars[name]) : match,
  );
}

// String calls, not patterns: every command that says something loads its messages, and a pattern's first run costs.
function looksLikePath(lang: string): boolean {
  return lang.includes("/") || lang.includes("\\") || lang.toLowerCase().endsWith(".json");
}

function builtInLocale(lang: string): string {
  const tag = lang.trim().toLowerCase().split("_").join("-");
  for (const candidate of [tag, tag.split("-")[0] ?? ""]) if (Object.hasOwn(BUILT_IN, candidate)) return candidate;
  throw new MessagesError(
    `unknown language "${lang}": the built-in ones are ${BUILT_IN_LANGS.join(", ")}; ` +
      `for another, copy lang/en.json, translate it, and set lang to its path (e.g. ./lang/fr.json)`,
  );
}

async function readJson(path: string, read: (path: string) => Promise<string> | string): Promise<unknown> {
  let text: string;
  try {
    text = await read(path);
  } catch (e) {
    const why = (e as { code?: string }).code === "ENOENT" ? "no such file" : String((e as Error).message ?? e);
    throw new MessagesError(
      `cannot read language file ${path}: ${why}; fix the lang setting (a path, or one of ${BUILT_IN_LANGS.join(", ")})`,
    );
  }
  try {
    // Editors on Windows like to start UTF-8 files with a byte-order mark.
    return JSON.parse(text.replace(/^\uFEFF/, ""));
  } catch (e) {
    throw new MessagesError(
      `language file ${path} is not valid JSON (${(e as Error).message}); fix the syntax, e.g. by comparing with lang/en.json`,
    );
  }
}

/** `{section: {key: text}}` or `{"section.key": text}` → `section.key` → text. */
function flatten(json: unknown, path: string): Map<string, string> {
  const bad = (what: string) =>
    new MessagesError(`language file ${path}: ${what}; use the layout of lang/en.json ({"section": {"key": "text"}})`);
  if (!isRecord(json)) throw bad("the top level must be an object");
  const out = new Map<string, string>();
  for (const [section, value] of Object.entries(json)) {
    if (typeof value === "string") {
      out.set(section, value);
      continue;
    }
    if (!isRecord(value)) throw bad(`"${section}" must be a text or an object of texts`);
    for (const [key, text] of Object.entries(value)) {
      if (typeof text !== "string") throw bad(`"${section}.${key}" must be a text`);
      out.set(`${section}.${key}`, text);
    }
  }
  return out;
}
