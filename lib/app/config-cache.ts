/**
 * The configuration checked once and reused while nothing it was made from changed: a one-shot command would
 * otherwise load valibot, the schema and the game's vocabulary and validate every key at each start
 * (docs/performance.md, "Start-up"). A hit loads none of them.
 *
 * An entry is keyed by everything the result was made from, so a stale one cannot be found:
 * - the build: the compiled binary's file identity (device, inode, size, modification and change times), never
 *   trusted across builds; run from source (bun, deno) there is no cache, since the sources can change under it;
 * - every HUB_* variable, the working directory, --config, the server (servers.d) and the options that change the
 *   checks;
 * - every file the loader looked at, as it saw it: each text it read (the configuration file, the key and password
 *   files), the mode of each file it stat'ed (whether the default file exists, the files holding a secret that others
 *   may read), all compared again at each hit.
 * Inputs are compared whole, not by a hash: no collision to argue, and no digest to start (WebCrypto's first digest
 * costs a millisecond or more, node:crypto's import several).
 * Only a valid configuration is kept, with its warnings, which the commands say as they would have.
 *
 * Where: `config.cache` in the storage directory (its path worked out from the environment and the file, as the
 * loader does; a path worked out wrong only misses), used only when it is this user's and closed to others (0700,
 * as lib/store/secure.ts keeps it), the file 0600: it holds the API key, like the configuration file that user
 * reads anyway. Its first line is a checksum of the rest: a garbled or torn entry (it is not fsynced: a cache lost
 * to a power cut costs one check) is a miss, never an error. Patterns timed (`run`, `doctor`) are never cached.
 */
import { join } from "node:path";
import type { ConfigIo, LoadOptions, LoadResult } from "../config/index.ts";
import { configFilePath, storageDirOf } from "../config/file.ts";
import { parseToml } from "../config/toml.ts";
import * as fsio from "../fsio.ts";
import { isCompiled } from "./runtime.ts";

/** The entry's format: a change makes every older entry a miss. */
const FORMAT = 3;
export const CACHE_FILE = "config.cache";

/** One look the loader took at a file, and what it saw: its text, its mode (`null`: it failed). */
type Seen = { path: string; read: string | null } | { path: string; mode: number | null };

interface Entry {
  v: typeof FORMAT;
  key: string;
  seen: Seen[];
  result: Extract<LoadResult, { ok: true }>;
}

export interface CachedLoadOptions extends LoadOptions {
  /** The build's identity; by default the compiled binary's (none when run from source: no cache). */
  build?: string;
}

/**
 * A checksum of `text` (Bun.hash, wyhash: native, where the JavaScript loop it replaced took 0.1 ms of each start):
 * finds a torn or garbled entry; nothing relies on it against an attacker. Only a compiled Bun program has a cache.
 */
const checksum = (text: string): string => Bun.hash(text).toString(16);

/** loadConfig (lib/app/config.ts), through the cache when there is a build to key it by. */
export async function loadCachedConfig(opts: CachedLoadOptions): Promise<LoadResult> {
  const build = opts.timePatterns ? undefined : (opts.build ?? (await compiledBuild()));
  const key = build === undefined ? undefined : cacheKey(opts, build);
  if (key !== undefined) {
    const hit = await lookup(opts, key).catch(() => undefined);
    if (hit) return hit;
  }
  const { loadConfig } = await import("./config.ts");
  const seen: Seen[] = [];
  const result = await loadConfig({ ...opts, io: recording(opts.io ?? fileIo, seen) });
  if (key !== undefined && result.ok) await keep(result, key, seen).catch(() => {});
  return result;
}

/** The identity of the running binary when compiled. */
async function compiledBuild(): Promise<string | undefined> {
  if (!isCompiled()) return undefined;
  const s = await fsio.stat(process.execPath);
  return `${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`;
}

/** What the result was made from besides the files, as one string compared whole. */
function cacheKey(opts: LoadOptions, build: string): string {
  const env = Object.entries(opts.env)
    .filter(([name]) => name.startsWith("HUB_"))
    .sort(([a], [b]) => (a < b ? -1 : 1));
  const file = opts.file ?? null;
  return JSON.stringify([FORMAT, build, file, opts.cwd, !!opts.timePatterns, env, opts.server ?? null]);
}

const fileIo: ConfigIo = { readFile: (path) => fsio.readFile(path, "utf8"), stat: (path) => fsio.stat(path) };

/** `io`, writing down what each call saw. */
function recording(io: ConfigIo, seen: Seen[]): ConfigIo {
  return {
    async readFile(path) {
      const text = await io.readFile(path).catch((e: unknown) => {
        seen.push({ path, read: null });
        throw e;
      });
      seen.push({ path, read: text });
      return text;
    },
    async stat(path) {
      const info = await io.stat(path).catch((e: unknown) => {
        seen.push({ path, mode: null });
        throw e;
      });
      seen.push({ path, mode: info.mode & 0o777 });
      return info;
    },
  };
}

/** Whether each file looks as the loader saw it. */
async function unchanged(seen: Seen[], io: ConfigIo): Promise<boolean> {
  for (const s of seen) {
    const now =
      "read" in s
        ? await io.readFile(s.path).catch(() => null)
        : await io.stat(s.path).then(
            (info) => info.mode & 0o777,
            () => null,
          );
    if (now !== ("read" in s ? s.read : s.mode)) return false;
  }
  return true;
}

/** The directory the configuration stores in, as the loader resolves storage.dir; undefined when unsure. */
async function storageDir(opts: LoadOptions, io: ConfigIo): Promise<string | undefined> {
  const file = await configFilePath(opts, (path) => io.stat(path));
  const dirIn = async (path: string | undefined) =>
    ((path ? parseToml(await io.readFile(path)) : {}).storage as Record<string, unknown> | undefined)?.dir;
  if (!opts.server) return storageDirOf(opts, file, await dirIn(file));
  // One server of several: its own file's storage.dir, or servers/<name> under the shared one.
  const { serverFileOf, serverStorageDir } = await import("../config/servers.ts");
  const server = serverFileOf(opts, opts.server);
  const shared = { ...(file ? { file } : {}), dir: await dirIn(file) };
  return serverStorageDir(opts, shared, { name: opts.server, file: server, dir: await dirIn(server) });
}

/** The directory is this user's and closed to others: what is in it was written by us. */
async function ours(dir: string): Promise<boolean> {
  const uid = process.getuid?.();
  const info = await fsio.stat(dir).catch(() => undefined);
  return uid !== undefined && info?.uid === uid && info.isDirectory() && (info.mode & 0o077) === 0;
}

async function lookup(opts: LoadOptions, key: string): Promise<LoadResult | undefined> {
  // The configuration file is read once for both: where the cache is, and whether it changed.
  const texts = new Map<string, Promise<string>>();
  const io: ConfigIo = {
    readFile: (path) => texts.get(path) ?? texts.set(path, fileIo.readFile(path)).get(path)!,
    stat: fileIo.stat,
  };
  const dir = await storageDir(opts, io);
  if (!dir || !(await ours(dir))) return undefined;
  const stored = await fsio.readFile(join(dir, CACHE_FILE), "utf8");
  const cut = stored.indexOf("\n");
  const body = stored.slice(cut + 1);
  if (cut < 0 || stored.slice(0, cut) !== checksum(body)) return undefined;
  const entry = JSON.parse(body) as Entry;
  if (entry.v !== FORMAT || entry.key !== key || !(await unchanged(entry.seen, io))) return undefined;
  return entry.result;
}

/** Writes the entry beside the store it configures, when that directory is ours. */
async function keep(result: Extract<LoadResult, { ok: true }>, key: string, seen: Seen[]): Promise<void> {
  const dir = result.config.storage.dir;
  if (!(await ours(dir))) return;
  const body = JSON.stringify({ v: FORMAT, key, seen, result } satisfies Entry);
  const { atomicWrite } = await import("../store/driver.ts");
  await atomicWrite(join(dir, CACHE_FILE), `${checksum(body)}\n${body}`, false);
}
