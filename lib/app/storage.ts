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

/** What an operation needs to open the store: the configuration and the command's logger. */
export interface StoreDeps {
  config: Config;
  logger: Logger;
}

export async function openConfiguredStore({ config, logger }: StoreDeps): Promise<Store> {
  const { openStore } = await import("../store/index.ts");
  return openStore({ dir: config.storage.dir, logger, sweep: false });
}
