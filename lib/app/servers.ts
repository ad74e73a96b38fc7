/**
 * Several servers on one host: which configuration a command reads (lib/config/servers.ts has the layout). Light on
 * purpose: every command asks before its configuration, which the configuration cache may answer without loading
 * the loader.
 */
import { configFilePath, storageDirInText, storageDirOf } from "../config/file.ts";
import { SERVER_NAME, SERVER_NAME_RULE, type ServerList, listServers } from "../config/servers.ts";

export { SERVERS_DIR, SERVER_NAME, SERVER_NAME_RULE } from "../config/servers.ts";
import { readFile, readdir, stat } from "../fsio.ts";

/** `--server`'s value refused in one line when it is not a server's name; undefined when it is. */
export const serverNameProblem = (name: string): string | undefined =>
  SERVER_NAME.test(name) ? undefined : `--server ${JSON.stringify(name)} is not a server's name (${SERVER_NAME_RULE})`;

/** servers.d as it is now: every server's name, and the files that are not a server. */
export const hostServers = (o: {
  file?: string;
  env: Record<string, string | undefined>;
  cwd: string;
}): Promise<ServerList> => listServers(o, (dir) => readdir(dir));

/** Which configuration a command reads: the shared file alone, one server of several, or (`run`) every server. */
export type ServerChoice =
  | { kind: "single" }
  /** `implied`: not named, the only server in servers.d (`run` still hosts it as a server: SIGHUP may add more). */
  | { kind: "one"; name: string; implied?: true }
  | { kind: "all"; dir: string; names: string[]; ignored: string[] };

/**
 * `--server` (or HUB_SERVER) names one server of servers.d, which must hold its file; without it, the only server,
 * or every one when there are several (which only `run` and `status` take), or the shared file alone when servers.d
 * holds none. A problem is one line for the caller to refuse (a usage error).
 */
export async function serverChoice(o: {
  file?: string;
  env: Record<string, string | undefined>;
  cwd: string;
  server?: string;
}): Promise<ServerChoice | { kind: "problem"; line: string }> {
  const named = o.server ?? (o.env.HUB_SERVER || undefined);
  const bad = named === undefined ? undefined : serverNameProblem(named);
  if (bad) return { kind: "problem", line: bad };
  const list = await hostServers(o);
  const known = list.names.length ? `its servers: ${list.names.join(", ")}` : "it holds no server";
  if (named !== undefined)
    return list.names.includes(named)
      ? { kind: "one", name: named }
      : { kind: "problem", line: `no server is named ${named}: there is no ${list.dir}/${named}.toml (${known})` };
  if (list.names.length === 0) return { kind: "single" };
  if (list.names.length === 1) return { kind: "one", name: list.names[0] as string, implied: true };
  return { kind: "all", ...list };
}

/**
 * The store of the shared settings alone (the run of one server before servers.d): storage.dir of the shared file or
 * the environment, under which each server's own store is `servers/<name>`. Undefined when it cannot be told.
 */
export async function sharedStoreDir(o: {
  file?: string;
  env: Record<string, string | undefined>;
  cwd: string;
}): Promise<string | undefined> {
  const file = await configFilePath(o, (path) => stat(path));
  const text = file ? await readFile(file, "utf8").catch(() => "") : "";
  return storageDirOf(o, file, storageDirInText(text));
}
