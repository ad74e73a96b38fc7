import { loadConfig } from "../../lib/app/config.ts";
import { silentLogger } from "../../lib/log.ts";

/**
 * What lib/app's store operations (`queue status`, `queue drop`) take, for a store at `dir`: the checked
 * configuration of a service nobody answers at (these operations never ask it) and a silent logger.
 */
export async function storeDeps(dir: string) {
  const env = {
    HUB_API_URL: "http://127.0.0.1:9/v1",
    HUB_API_KEY: "key",
    HUB_API_SERVER_ID: "541d1c41-1b58-40fc-8780-70c400ea5686",
    HUB_STORAGE_DIR: dir,
    HUB_GAME_BRIDGE: "sim",
  };
  const loaded = await loadConfig({ env, cwd: dir });
  if (!loaded.ok) throw new Error(loaded.problems.join("; "));
  return { config: loaded.config, logger: silentLogger };
}
