/**
 * Several game servers on one host (docs/configuration.md, "Several servers"): beside the shared configuration file
 * (hub-agent.toml, or --config / HUB_CONFIG), a directory `servers.d/` holds one file per server, `<name>.toml`. A
 * server's configuration is the shared file, then the HUB_* variables, then its own file over both, table by table:
 * the shared file and the environment hold what every server shares (the service's address, intervals, messages), a
 * server's file what is its own (its key, server id, game bridge). Without servers.d, or with no server in it, the
 * shared file alone is the one server's configuration, as always.
 *
 * Each server has its own store: `<storage.dir>/servers/<name>` of the shared settings, unless its file sets
 * storage.dir. A relative path in a server's file is relative to servers.d, as a path in the shared file is to its
 * own directory.
 */
import { dirname, join, resolve } from "node:path";
import { DEFAULT_CONFIG_FILE, storageDirOf } from "./file.ts";

export const SERVERS_DIR = "servers.d";
/** A server's name: its file's name without `.toml`, used in logs, metrics, paths and `--server`. */
export const SERVER_NAME = /^[a-z0-9][a-z0-9_-]{0,39}$/;
export const SERVER_NAME_RULE = "lower-case letters, digits, - and _, at most 40, starting with a letter or digit";

interface Where {
  file?: string;
  env: Record<string, string | undefined>;
  cwd: string;
}

/** servers.d beside the shared configuration file (where it is, or would be). */
export function serversDirOf(opts: Where): string {
  const explicit = opts.file ?? opts.env.HUB_CONFIG;
  return join(dirname(resolve(opts.cwd, explicit ?? DEFAULT_CONFIG_FILE)), SERVERS_DIR);
}

/** A server's file. */
export const serverFileOf = (opts: Where, name: string): string => join(serversDirOf(opts), `${name}.toml`);

export interface ServerList {
  dir: string;
  /** The servers, sorted by name. */
  names: string[];
  /** Files in servers.d that are not a server: one line each (a name outside the rule, another extension). */
  ignored: string[];
}

/** The servers configured: every `<name>.toml` in servers.d (none when it does not exist). */
export async function listServers(opts: Where, readdir: (dir: string) => Promise<string[]>): Promise<ServerList> {
  const dir = serversDirOf(opts);
  const entries = await readdir(dir).catch((e: NodeJS.ErrnoException) => {
    if (e.code === "ENOENT" || e.code === "ENOTDIR") return [];
    throw e;
  });
  const names: string[] = [];
  const ignored: string[] = [];
  for (const entry of entries.sort()) {
    if (entry.startsWith(".")) continue; // an editor's swap file, a dotfile
    const name = entry.endsWith(".toml") ? entry.slice(0, -".toml".length) : undefined;
    if (name !== undefined && SERVER_NAME.test(name)) names.push(name);
    else if (name !== undefined)
      ignored.push(`${join(dir, entry)} is not read: a server's name is ${SERVER_NAME_RULE}; rename it`);
    else if (!entry.endsWith("~")) ignored.push(`${join(dir, entry)} is not read: only <name>.toml files are servers`);
  }
  return { dir, names, ignored };
}

/** `over` laid over `base`: tables merged key by key, any other value replaced. Neither is changed. */
export function overlay(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const under = out[key];
    out[key] = isTable(value) && isTable(under) ? overlay(under, value) : value;
  }
  return out;
}

const isTable = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);

/** Every key path a table sets (leaves, and arrays as leaves). */
export function leafPaths(table: Record<string, unknown>, prefix = ""): string[] {
  return Object.entries(table).flatMap(([key, value]) =>
    isTable(value) ? leafPaths(value, `${prefix}${key}.`) : [`${prefix}${key}`],
  );
}

/**
 * A server's storage directory: its file's storage.dir (relative to servers.d), else `servers/<name>` under the
 * shared one (the environment's, the shared file's, or the default). Undefined when a value is not a path.
 */
export function serverStorageDir(
  opts: Where,
  shared: { file?: string; dir: unknown },
  server: { name: string; file: string; dir: unknown },
): string | undefined {
  if (server.dir !== undefined)
    return typeof server.dir === "string" && server.dir.trim()
      ? resolve(dirname(server.file), server.dir.trim())
      : undefined;
  const base = storageDirOf(opts, shared.file, shared.dir);
  return base && join(base, "servers", server.name);
}
