/**
 * Reading a configuration into its raw tables: the file as TOML, the HUB_* variables over it key by key, and for one of
 * several servers (servers.ts) its own file over both; where each key was set, for the messages that name it.
 */
import { dirname } from "node:path";
import * as fsio from "../fsio.ts";
import type { Config } from "./schema.ts";
import { TomlError, parseToml } from "./toml.ts";
import { configFilePath, storageDirInText, storageDirOf } from "./file.ts";
import { leafPaths, overlay, serverFileOf, serverStorageDir } from "./servers.ts";

export interface LoadOptions {
  /** --config; otherwise HUB_CONFIG; otherwise ./hub-agent.toml when it exists. */
  file?: string;
  env: Record<string, string | undefined>;
  cwd: string;
  /**
   * Also run each of `game.overrides`' patterns on hostile lines and refuse one slower than linear (a few
   * milliseconds a pattern): for `run` and `doctor`, the commands that run them. Their shape is always checked.
   */
  timePatterns?: boolean;
  /** The file calls it makes (default lib/fsio.ts): the configuration cache records what they saw (lib/app/). */
  io?: ConfigIo;
  /** One of several servers (lib/config/servers.ts): its file in servers.d over the shared settings. */
  server?: string;
}

/** Every look at a file the loader takes: its text, and its mode (a rejection when it cannot). */
export interface ConfigIo {
  readFile(path: string): Promise<string>;
  stat(path: string): Promise<{ mode: number }>;
}

export const fileIo: ConfigIo = { readFile: (path) => fsio.readFile(path, "utf8"), stat: (path) => fsio.stat(path) };

/** The service's user type of the game's ids, and whether the game knows its players by name (lib/game/user-type.ts). */
export interface GameFacts {
  userType: string;
  byName: boolean;
}

export type LoadResult =
  | {
      ok: true;
      config: Config;
      file?: string;
      warnings: string[];
      /** Files holding a secret that everyone may read (or change): what, and the fix. */
      exposed: { message: string; fix: string }[];
      secrets: string[];
      /** One of several servers: the keys its own file sets (the others are the host's). */
      own?: string[];
      /** What the game's preset says of its players' ids (lib/app/config.ts): kept with the checked configuration. */
      game?: GameFacts;
    }
  | {
      ok: false;
      problems: string[];
      file?: string;
      secrets: string[];
      /**
       * The storage directory, when it can still be told (the read-only commands show what it holds): from the
       * keys that were read, or the file's storage.dir line when the file does not parse.
       */
      storage?: { dir: string };
    };

export type Source = { kind: "file"; file: string } | { kind: "env"; name: string };

/** HUB_ + the key path in upper case joined by "_": api.server_id → HUB_API_SERVER_ID. */
export const envName = (path: string) => `HUB_${path.replace(/\./g, "_").toUpperCase()}`;

export const SECRET_KEYS = new Set(["api.key", "game.rcon.password"]);

/**
 * A configuration file (or servers.d) that every user may change, as one line: what it holds runs with this user's
 * rights (a wrapped server's command, hooks), so it is refused, as ssh refuses a key others may read. Undefined
 * when it is not, or its mode cannot be read (the read that follows says why).
 */
async function openToOthers(opts: LoadOptions, path: string): Promise<string | undefined> {
  if (process.getuid === undefined) return undefined; // no modes to speak of (Windows)
  const mode = await (opts.io ?? fileIo).stat(path).then(
    (s) => s.mode & 0o7777,
    () => undefined,
  );
  if (mode === undefined || !(mode & 0o002)) return undefined;
  return `${path} can be changed by every user on this machine (mode 0${(mode & 0o777).toString(8)}); what it holds runs with the rights of the user running hub-agent: \`chmod o-w ${path}\``;
}

/** The last part of each secret's key (`key`, `password`): a line that sets one is never printed whole. */
const SECRET_NAMES = new Set([...SECRET_KEYS].map((k) => k.slice(k.lastIndexOf(".") + 1)));

/**
 * A TOML error's line and reason as printed. On a line that sets a secret (an unquoted API key, a password missing
 * its closing quote), the value goes: the line stays up to its `=`, and Bun's reason, which quotes the value, has
 * its quoted parts hidden. An operator's typo must not put the key in the journal.
 */
function withoutSecret(e: TomlError): { source: string; reason: string } {
  const set = /^\s*(?:[\w-]+\s*\.\s*)*["']?([\w-]+)["']?\s*=\s*/.exec(e.source);
  if (!set || !SECRET_NAMES.has(set[1]!)) return { source: e.source, reason: e.reason };
  return { source: `${set[0]}[hidden: a secret]`, reason: e.reason.replace(/"[^"]*"?/g, '"[hidden]"') };
}

/** A TOML file's tables, or the failure that names it (a TOML error with its line and caret). */
async function readToml(
  file: string,
  opts: LoadOptions,
  storageDirOfText: (text: string) => string | undefined,
): Promise<{ ok: true; raw: Record<string, unknown> } | { ok: false; failure: LoadResult }> {
  let text: string | undefined;
  try {
    text = await (opts.io ?? fileIo).readFile(file);
    return { ok: true, raw: parseToml(text) };
  } catch (e) {
    if (e instanceof TomlError) {
      const caret = `${" ".repeat(e.column - 1)}^`;
      const { source, reason } = withoutSecret(e);
      const problems = [`${file}:${e.line}:${e.column}: not valid TOML: ${reason}`, `| ${source}`, `| ${caret}`];
      const dir = storageDirOfText(text ?? "");
      return { ok: false, failure: { ok: false, problems, file, secrets: [], ...(dir ? { storage: { dir } } : {}) } };
    }
    const err = e as NodeJS.ErrnoException;
    const why =
      err.code === "ENOENT"
        ? opts.server
          ? `not found: each server of this host is a file <name>.toml in ${dirname(file)}`
          : `not found: create it with \`hub-agent init --config ${opts.file ?? opts.env.HUB_CONFIG}\`, or set every required key as HUB_* environment variables`
        : err.code === "EACCES"
          ? "cannot be read: check its owner and mode (it should be readable by the user running hub-agent)"
          : err.code === "EISDIR"
            ? "is a directory: give the configuration file's path"
            : `is not valid TOML: ${err.message.split("\n")[0]}`;
    return { ok: false, failure: { ok: false, problems: [`config file ${file} ${why}`], file, secrets: [] } };
  }
}

/**
 * The file (if any) read as TOML, the environment over it key by key, and where each key was set; for a server
 * (lib/config/servers.ts), its own file over both, and its storage directory worked out.
 */
export async function readRaw(
  opts: LoadOptions,
  paths: readonly string[],
): Promise<
  | { ok: true; raw: Record<string, unknown>; sources: Map<string, Source>; file?: string; secrets: string[] }
  | { ok: false; failure: LoadResult }
> {
  const io = opts.io ?? fileIo;
  const file = await configFilePath(opts, io.stat);

  let raw: Record<string, unknown> = {};
  const sources = new Map<string, Source>();
  const secrets: string[] = [];
  if (file) {
    const open = await openToOthers(opts, file);
    if (open) return { ok: false, failure: { ok: false, problems: [open], file, secrets } };
    const read = await readToml(file, opts, (text) => storageDirOf(opts, file, storageDirInText(text)));
    if (!read.ok) return read;
    raw = read.raw;
    for (const path of paths) if (getPath(raw, path) !== undefined) sources.set(path, { kind: "file", file });
  }

  // Environment variables override the file, key by key.
  for (const path of paths) {
    const value = opts.env[envName(path)];
    if (value === undefined || value === "") continue;
    setPath(raw, path, value);
    sources.set(path, { kind: "env", name: envName(path) });
  }
  for (const [name, value] of Object.entries(opts.env)) {
    if (!name.startsWith("HUB_HOOKS_") || !value) continue;
    const hooks = (raw.hooks ??= {}) as Record<string, unknown>;
    hooks[name.slice("HUB_HOOKS_".length).toLowerCase()] = value;
  }
  let own = file;
  if (opts.server) {
    const server = await overlayServer(opts, opts.server, { raw, sources, file, paths });
    if (!server.ok) return server;
    raw = server.raw;
    own = server.file;
  }
  for (const path of SECRET_KEYS) {
    const value = getPath(raw, path);
    if (typeof value === "string" && value.trim()) secrets.push(value.trim());
  }

  return { ok: true, raw, sources, ...(own ? { file: own } : {}), secrets };
}

/** The server's own file over the shared settings (`raw`, the environment's included), its storage.dir absolute. */
async function overlayServer(
  opts: LoadOptions,
  name: string,
  shared: { raw: Record<string, unknown>; sources: Map<string, Source>; file?: string; paths: readonly string[] },
): Promise<{ ok: true; raw: Record<string, unknown>; file: string } | { ok: false; failure: LoadResult }> {
  const file = serverFileOf(opts, name);
  const sharedDir = { file: shared.file, dir: getPath(shared.raw, "storage.dir") };
  const dirOf = (dir: unknown) => serverStorageDir(opts, sharedDir, { name, file, dir });
  // A folder others may write to lets them add a server: its commands and hooks would run as this user.
  const open = (await openToOthers(opts, dirname(file))) ?? (await openToOthers(opts, file));
  if (open) return { ok: false, failure: { ok: false, problems: [open], file, secrets: [] } };
  const read = await readToml(file, opts, (text) => dirOf(storageDirInText(text)));
  if (!read.ok) return read;
  const raw = overlay(shared.raw, read.raw);
  // A secret and the file that holds it are one setting: the server's own form wins over the shared other one.
  for (const pair of SECRET_FORMS)
    for (const [own, other] of [pair, [pair[1], pair[0]]] as const)
      if (getPath(read.raw, own) !== undefined && getPath(read.raw, other) === undefined) {
        deletePath(raw, other);
        shared.sources.delete(other);
      }
  for (const path of leafPaths(read.raw))
    if (shared.paths.includes(path)) shared.sources.set(path, { kind: "file", file });
  const dir = dirOf(getPath(read.raw, "storage.dir"));
  if (dir) setPath(raw, "storage.dir", dir);
  return { ok: true, raw, file };
}

/** A secret's two forms: the value, or a file holding it. */
const SECRET_FORMS = [
  ["api.key", "api.key_file"],
  ["game.rcon.password", "game.rcon.password_file"],
] as const;

/** The key at `path` removed from its table (which `overlay` made a copy of), if it is there. */
function deletePath(obj: Record<string, unknown>, path: string): void {
  const keys = path.split(".");
  const table = getPath(obj, keys.slice(0, -1).join("."));
  if (table && typeof table === "object") delete (table as Record<string, unknown>)[keys.at(-1) as string];
}

export function getPath(obj: Record<string, unknown>, path: string): unknown {
  return path.split(".").reduce<unknown>((o, k) => (o && typeof o === "object" ? (o as never)[k] : undefined), obj);
}

export function setPath(obj: Record<string, unknown>, path: string, value: unknown) {
  const keys = path.split(".");
  let o = obj;
  for (const k of keys.slice(0, -1)) {
    if (!o[k] || typeof o[k] !== "object") o[k] = {};
    o = o[k] as Record<string, unknown>;
  }
  o[keys.at(-1) as string] = value;
}
