/** Which configuration file is read: the loader's rule, shared with the configuration cache (lib/app/). */
import { resolve } from "node:path";

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
