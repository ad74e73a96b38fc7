/** Which configuration file is read: the loader's rule, shared with the configuration cache (lib/app/). */
import { dirname, resolve } from "node:path";

export const DEFAULT_CONFIG_FILE = "hub-agent.toml";

/** --config; otherwise HUB_CONFIG; otherwise ./hub-agent.toml when it exists (`stat` resolves); else none. */
export async function configFilePath(
  opts: { file?: string; env: Record<string, string | undefined>; cwd: string },
  stat: (path: string) => Promise<unknown>,
): Promise<string | undefined> {
  const explicit = opts.file ?? opts.env.HUB_CONFIG;
  const candidate = resolve(opts.cwd, explicit ?? DEFAULT_CONFIG_FILE);
  if (explicit) return candidate;
  return stat(candidate).then(
    () => candidate,
    () => undefined,
  );
}

/** storage.dir's default (the schema's too), relative to the configuration file's directory. */
export const DEFAULT_STORAGE_DIR = "./data";

/**
 * The storage directory as the loader resolves it: HUB_STORAGE_DIR, else the file's storage.dir (`dir`, as read),
 * else the default; relative to the file's directory, or the working directory without a file. Undefined when the
 * value is not a path.
 */
export function storageDirOf(
  opts: { env: Record<string, string | undefined>; cwd: string },
  file: string | undefined,
  dir: unknown,
): string | undefined {
  const value = opts.env.HUB_STORAGE_DIR || dir || DEFAULT_STORAGE_DIR;
  return typeof value === "string" && value.trim() ? resolve(file ? dirname(file) : opts.cwd, value.trim()) : undefined;
}

/**
 * storage.dir as written in a file that does not parse as TOML (a typo elsewhere): its `dir = "…"` line under
 * `[storage]`, or a `storage.dir = "…"` line before any table; undefined when it has none.
 */
export function storageDirInText(text: string): string | undefined {
  let table = "";
  for (const line of text.split(/\r?\n/)) {
    const header = /^\s*\[\s*([^\]]*?)\s*\]\s*(#.*)?$/.exec(line);
    if (header) {
      table = header[1] ?? "";
      continue;
    }
    const key = table === "storage" ? "dir" : table === "" ? "storage\\.dir" : undefined;
    const value = key && new RegExp(`^\\s*${key}\\s*=\\s*(?:"([^"]*)"|'([^']*)')\\s*(#.*)?$`).exec(line);
    if (value) return value[1] ?? value[2];
  }
  return undefined;
}
