import type { Sandbox } from "../../lib/sandbox/index.ts";

/** The environment of an agent or a command against the in-memory service `sb`: the simulated game, the store in `dir`. */
export const sandboxEnv = (sb: Sandbox, dir: string) => ({
  HUB_API_URL: sb.url,
  HUB_API_KEY: sb.key,
  HUB_API_SERVER_ID: sb.serverId,
  HUB_GAME_BRIDGE: "sim",
  HUB_STORAGE_DIR: dir,
});
