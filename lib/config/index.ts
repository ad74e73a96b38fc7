import * as v from "valibot";
import { dirname, resolve } from "node:path";
import {
  type ConfigSchema,
  type ParsedConfig,
  SPEC_INTERVALS,
  buildConfigSchema,
  keyHelp,
  type Config,
} from "./schema.ts";
import type { GameVocabulary } from "./vocabulary.ts";
import { checkListen, checkUrl } from "./addresses.ts";
import { DEFAULT_CONFIG_FILE, storageDirOf } from "./file.ts";
import { serversDirOf } from "./servers.ts";
import {
  type ConfigIo,
  type LoadOptions,
  type LoadResult,
  type Source,
  SECRET_KEYS,
  envName,
  fileIo,
  getPath,
  readRaw,
} from "./read.ts";

export { type Config, SPEC_INTERVALS } from "./schema.ts";
export type { GameVocabulary, SectionView } from "./vocabulary.ts";

export { DEFAULT_CONFIG_FILE } from "./file.ts";
export { type ConfigIo, type GameFacts, type LoadOptions, type LoadResult, envName } from "./read.ts";

/** The schema, the key help and the game's checks, built once from the game's vocabulary (lib/app/config.ts). */
export interface ConfigRules {
  schema: ConfigSchema;
  help: Record<string, string>;
  game: GameVocabulary;
  /** Every leaf key path of the schema, e.g. "api.url", "intervals.status" (records like hooks excluded). */
  keys: readonly string[];
}

export function configRules(game: GameVocabulary): ConfigRules {
  const schema = buildConfigSchema(game);
  // Walked once per process, with plain loops: every command that reads the configuration pays for this walk.
  const keys: string[] = [];
  collectKeys(schema, "", keys);
  return { schema, help: keyHelp(game), game, keys };
}

/** Every leaf key path of the schema, e.g. "api.url", "intervals.status" (records like hooks excluded). */
export function configKeys(rules: ConfigRules): string[] {
  return [...rules.keys];
}

function collectKeys(schema: v.GenericSchema, prefix: string, out: string[]): void {
  const inner = unwrap(schema);
  if (!("entries" in inner)) {
    if (prefix) out.push(prefix);
    return;
  }
  const entries = inner.entries as Record<string, v.GenericSchema>;
  for (const key in entries) {
    const s = entries[key] as v.GenericSchema;
    if (unwrap(s).type !== "record") collectKeys(s, prefix ? `${prefix}.${key}` : key, out);
  }
}

function unwrap(s: v.GenericSchema): v.GenericSchema & { entries?: unknown } {
  return "wrapped" in s ? unwrap((s as unknown as { wrapped: v.GenericSchema }).wrapped) : s;
}

/** The keys `hub-agent init` fills with a placeholder (template.ts). */
const PLACEHOLDER_KEYS = ["api.url", "api.key", "api.server_id", "game.bridge"];

/** A value still as the template wrote it: `<…>` in place of the value, or in the URL's path (`/<instance>/`). */
const isPlaceholder = (value: unknown) => typeof value === "string" && /<[^<>]*>/.test(value);

export async function loadConfig(opts: LoadOptions, rules: ConfigRules): Promise<LoadResult> {
  const help = rules.help;
  const read = await readRaw(opts, rules.keys);
  if (!read.ok) return read.failure;
  const { raw, sources, file, secrets } = read;
  const problems: string[] = [];
  raw.api ??= {}; // so a missing [api] table is reported key by key, not as one vague line
  raw.game ??= {}; // likewise game.bridge
  // `hub-agent init`'s placeholders, left as written: one line each instead of a DNS failure in `doctor`.
  const placeholders = PLACEHOLDER_KEYS.filter((path) => isPlaceholder(getPath(raw, path)));
  for (const path of placeholders) {
    const shown = SECRET_KEYS.has(path) ? "" : ` = ${JSON.stringify(getPath(raw, path))}`;
    const where = describeSource(sources.get(path), path, file);
    problems.push(`${path}${shown} (${where}) is still the template's placeholder: replace it with ${help[path]}`);
  }
  // Report every problem at once: schema issues first, then the checks that look at several keys.
  const parsed = v.safeParse(rules.schema, raw);
  const issues = parsed.success ? [] : parsed.issues.filter((i) => !placeholders.includes(v.getDotPath(i) ?? ""));
  problems.push(...issues.map((issue) => describeIssue(issue, raw, sources, help, file)));
  const failed = new Set([...issues.map((issue) => v.getDotPath(issue)), ...placeholders]);
  const where = (path: string) => describeSource(sources.get(path), path, file);

  problems.push(
    ...(await crossChecks(raw, opts, rules, { failed, parsed: parsed.success, where, ...(file ? { file } : {}) })),
  );
  if (!parsed.success || problems.length) {
    const set = getPath(raw, "storage.dir");
    // A server's was made absolute as it was read (lib/config/servers.ts).
    const dir = failed.has("storage.dir") ? undefined : opts.server ? (set as string) : storageDirOf(opts, file, set);
    return { ok: false, problems, file, secrets, ...(dir ? { storage: { dir } } : {}) };
  }
  return resolveSettings(parsed.output, opts, { sources, ...(file ? { file } : {}), secrets, where });
}

/** The checks that look at several keys (after the schema, on the keys it accepted), the game's among them. */
async function crossChecks(
  raw: Record<string, unknown>,
  opts: LoadOptions,
  rules: ConfigRules,
  c: { failed: Set<string | null | undefined>; parsed: boolean; where: (path: string) => string; file?: string },
): Promise<string[]> {
  const { help } = rules;
  const { where, file } = c;
  const problems: string[] = [];
  const rawString = (path: string) => (c.failed.has(path) ? undefined : (getPath(raw, path) as string | undefined));
  const url = rawString("api.url");
  if (url) problems.push(...checkUrl(url, getPath(raw, "api.allow_insecure"), where("api.url"), "api.url", help));
  const webUrl = rawString("api.web_url");
  if (webUrl) problems.push(...checkUrl(webUrl, true, where("api.web_url"), "api.web_url", help));
  const serverId = rawString("api.server_id")?.trim();
  if (serverId && !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(serverId)) {
    problems.push(
      `api.server_id = "${serverId}" (${where("api.server_id")}) is not a server id: copy the UUID (like 541d1c41-1b58-40fc-8780-70c400ea5686) from the service's server settings`,
    );
  }
  const hasKey = getPath(raw, "api.key") !== undefined;
  const keyFileSetting = getPath(raw, "api.key_file");
  if (hasKey && keyFileSetting !== undefined) {
    problems.push(
      `api.key and api.key_file are both set (${where("api.key")}, ${where("api.key_file")}): keep only one`,
    );
  } else if (!hasKey && keyFileSetting === undefined) {
    problems.push(
      `${missing("api.key", help, file)}; or put it in a file and set api.key_file / ${envName("api.key_file")}`,
    );
  }
  const listen = rawString("http.listen");
  if (listen) problems.push(...checkListen(listen, getPath(raw, "http.allow_remote"), where("http.listen")));
  if (c.parsed) {
    // What a bridge needs and the preset's overrides: the game's own checks (lib/game/config-check.ts).
    const view = {
      get: (path: string) => getPath(raw, path),
      where,
      missing: (path: string) => missing(path, help, file),
    };
    problems.push(...(await rules.game.check(view, !!opts.timePatterns)));
  }
  return problems;
}

/**
 * A path made absolute: relative to the file that set it; from the environment or the default, to the shared file's
 * directory (the working directory without one).
 */
function pathsFrom(opts: LoadOptions, sources: Map<string, Source>, file: string | undefined) {
  const shared = opts.server ? dirname(serversDirOf(opts)) : file ? dirname(file) : opts.cwd;
  return (path: string, value: string) => {
    const source = sources.get(path);
    return resolve(source?.kind === "file" ? dirname(source.file) : shared, value);
  };
}

/** The values the schema accepted, with their files read (keys, passwords), paths made absolute, and warnings. */
async function resolveSettings(
  c: ParsedConfig,
  opts: LoadOptions,
  r: { sources: Map<string, Source>; file?: string; secrets: string[]; where: (path: string) => string },
): Promise<LoadResult> {
  const { sources, file, secrets, where } = r;
  const at = pathsFrom(opts, sources, file);
  const io = opts.io ?? fileIo;
  const warnings: string[] = [];
  const exposed = await exposedSecrets(c, sources, at, io);
  const { password_file: passwordFile, ...rcon } = c.game.rcon;
  if (passwordFile) {
    const path = at("game.rcon.password_file", passwordFile);
    const where_ = `game.rcon.password_file = "${path}" (${where("game.rcon.password_file")})`;
    try {
      rcon.password = (await io.readFile(path)).trim();
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      return {
        ok: false,
        problems: [`${where_} cannot be read (${code}): check the path and its permissions`],
        file,
        secrets,
      };
    }
    if (!rcon.password)
      return { ok: false, problems: [`${where_} is empty: put the RCON password in it`], file, secrets };
    secrets.push(rcon.password);
  }
  let key = c.api.key;
  if (!key && c.api.key_file) {
    const keyFile = at("api.key_file", c.api.key_file);
    try {
      key = (await io.readFile(keyFile)).trim();
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      const why = `api.key_file = "${keyFile}" (${where("api.key_file")}) cannot be read (${code})`;
      return { ok: false, problems: [`${why}: check the path and its permissions`], file, secrets };
    }
    if (!key) {
      const why = `api.key_file = "${keyFile}" (${where("api.key_file")}) is empty`;
      return { ok: false, problems: [`${why}: put the API key in it`], file, secrets };
    }
    secrets.push(key);
  }

  for (const [name, spec] of Object.entries(SPEC_INTERVALS)) {
    const value = c.intervals[name as keyof typeof SPEC_INTERVALS];
    if (value < spec && !(name === "adverts" && value === 0))
      warnings.push(
        `intervals.${name} = ${value} s is below the spec's ${spec} s: fine for tests and demos, but it adds load on the service`,
      );
  }
  const config: Config = {
    ...c,
    api: { ...c.api, key: key as string },
    storage: { dir: at("storage.dir", c.storage.dir) },
    game: {
      ...c.game,
      rcon,
      ...(c.game.log_file ? { log_file: at("game.log_file", c.game.log_file) } : {}),
      wrapper: {
        ...c.game.wrapper,
        ...(c.game.wrapper.cwd ? { cwd: at("game.wrapper.cwd", c.game.wrapper.cwd) } : {}),
        ...(c.game.wrapper.command_pipe
          ? { command_pipe: at("game.wrapper.command_pipe", c.game.wrapper.command_pipe) }
          : {}),
      },
    },
    // A path (not a built-in locale) is relative to this file, like every other path.
    lang: /[/\\]|\.json$/i.test(c.lang) ? at("lang", c.lang) : c.lang,
  };
  delete (config.api as { key_file?: string }).key_file;
  const own = opts.server && [...sources].flatMap(([path, s]) => (s.kind === "file" && s.file === file ? [path] : []));
  return { ok: true, config, file, warnings, exposed, secrets, ...(own ? { own } : {}) };
}

/**
 * Secrets in a file everyone can read: said by `run` and `doctor`, like ssh with a loose key (not refused, and a group
 * may read it: the service unit shares it with its own group, deploy/hub-agent.service).
 */
async function exposedSecrets(
  c: ParsedConfig,
  sources: Map<string, Source>,
  at: (path: string, value: string) => string,
  io: ConfigIo,
): Promise<{ message: string; fix: string }[]> {
  const secretFiles: [string, string][] = [];
  const held = [...SECRET_KEYS].map((path) => sources.get(path)).filter((s) => s?.kind === "file");
  for (const f of new Set(held.map((s) => (s as { file: string }).file)))
    secretFiles.push([f, "holds the API key or a console password"]);
  const passwordFile = c.game.rcon.password_file;
  if (passwordFile) secretFiles.push([at("game.rcon.password_file", passwordFile), "holds the console password"]);
  if (!c.api.key && c.api.key_file) secretFiles.push([at("api.key_file", c.api.key_file), "holds the API key"]);
  const exposed: { message: string; fix: string }[] = [];
  for (const [path, what] of secretFiles) {
    const loose = await othersMay(io, path);
    if (loose) exposed.push({ message: `${path} ${what} and ${loose}`, fix: `chmod o-rwx ${path}` });
  }
  return exposed;
}

/** "other users can read it (mode 0644)" when the world may read or change `path`; undefined otherwise or unknown. */
async function othersMay(io: ConfigIo, path: string): Promise<string | undefined> {
  if (process.getuid === undefined) return undefined; // no modes to speak of (Windows)
  const mode = ((await io.stat(path).catch(() => undefined))?.mode ?? 0) & 0o777;
  if (!(mode & 0o006)) return undefined;
  return `other users can ${mode & 0o002 ? "change" : "read"} it (mode 0${mode.toString(8)})`;
}

function describeIssue(
  issue: v.BaseIssue<unknown>,
  raw: Record<string, unknown>,
  sources: Map<string, Source>,
  help: Record<string, string>,
  file?: string,
): string {
  const path = v.getDotPath(issue) ?? "";
  if (issue.type === "strict_object" && issue.input !== undefined) {
    const key = issue.path?.at(-1)?.key;
    return `unknown key ${path || String(key)} in ${file ?? "the configuration"}: check its spelling (run \`hub-agent init\` to see every key)`;
  }
  const input = getPath(raw, path);
  if (input === undefined) return missing(path, help, file);
  const shown = SECRET_KEYS.has(path) ? "[redacted]" : JSON.stringify(input);
  const why = help[path] ? ` (${help[path]})` : "";
  return `${path} = ${shown} (${describeSource(sources.get(path), path, file)}) ${issue.message}${why}`;
}

function missing(path: string, help: Record<string, string>, file?: string): string {
  const dot = path.lastIndexOf(".");
  const [section, key] = dot >= 0 ? [path.slice(0, dot), path.slice(dot + 1)] : [undefined, path];
  const inFile = section ? `${key} under [${section}]` : key;
  return `${path} is missing: set ${inFile} in ${file ?? DEFAULT_CONFIG_FILE}, or export ${envName(path)}${help[path] ? ` (${help[path]})` : ""}`;
}

function describeSource(source: Source | undefined, path: string, file?: string): string {
  if (source?.kind === "env") return `from ${source.name}`;
  if (source?.kind === "file") return `in ${source.file}`;
  return file ? `default, not set in ${file}` : `default; set ${envName(path)} to change it`;
}
