/**
 * The store as the read and maintenance operations open it (queue, status, dashboard): the configured directory,
 * never swept (that is `run`'s), and the one line a failing disk becomes. The store itself loads on first use, so
 * the error line costs the runner no more than lib/store/errors.ts.
 */
import type { Logger } from "../log.ts";
import type { Store } from "../store/index.ts";
import type { Config } from "./config.ts";

export { describeFsError as describeStorageError } from "../store/errors.ts";
export type { Store } from "../store/index.ts";

/** What an operation needs to open the store: the configuration (its storage.dir) and the command's logger. */
export interface StoreDeps {
  config: Pick<Config, "storage">;
  logger: Logger;
}

/**
 * The one line a read-only command (`status`, `queue status`) says about a configuration that is not valid before it
 * shows the store anyway: its first error (a key missing is the least of them: the command needs none of those),
 * how many more (a TOML error's excerpt lines are not problems), and the store it reads.
 */
export function configProblemLine(where: string, problems: string[], dir: string): string {
  const missing = problems.map((p) => /^(\S+) is missing: /.exec(p)?.[1]).filter((k) => k !== undefined);
  const errors = problems.filter((p) => !p.startsWith("| ") && !/^\S+ is missing: /.test(p));
  const store = `; reading the store at ${dir} anyway`;
  if (!errors.length)
    return `the configuration is incomplete${where}: ${missing.join(", ")} ${missing.length === 1 ? "is" : "are"} missing (\`hub-agent doctor\` says how to set them)${store}`;
  const count = errors.length + missing.length;
  const more = count > 1 ? ` (and ${count - 1} more: \`hub-agent doctor\` lists them)` : "";
  return `the configuration is not valid${where}: ${errors[0]}${more}${store}`;
}

export async function openConfiguredStore({ config, logger }: StoreDeps): Promise<Store> {
  const { openStore } = await import("../store/index.ts");
  return openStore({ dir: config.storage.dir, logger, sweep: false });
}
