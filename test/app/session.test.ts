import { expect, test } from "bun:test";
import { loadConfig } from "../../lib/app/config.ts";
import { openSession } from "../../lib/app/session.ts";
import { memoryLogger } from "../../lib/log.ts";

const env = {
  HUB_API_URL: "https://api.vyhub.app/demo/v1",
  HUB_API_KEY: "k",
  HUB_API_SERVER_ID: "541d1c41-1b58-40fc-8780-70c400ea5686",
  HUB_GAME_BRIDGE: "q3rcon",
  HUB_GAME_PRESET: "openarena",
  HUB_GAME_RCON_PASSWORD: "pw-oa-1",
};

test("a session takes the game's user type from the checked configuration; the preset only when it says nothing", async () => {
  const loaded = await loadConfig({ env, cwd: "/nonexistent" });
  if (!loaded.ok) throw new Error(loaded.problems.join("\n"));
  const session = (gameFacts?: () => { userType: string; byName: boolean } | undefined) =>
    openSession({ config: async () => loaded.config, logger: memoryLogger([]), watched: [], gameFacts });
  // What the cache kept wins (it was made from this very configuration), without the preset.
  const kept = session(() => ({ userType: "KEPT", byName: false }));
  expect(await kept.userType()).toBe("KEPT");
  expect(await kept.nameId()).toBeUndefined();
  // Nothing kept: the preset says (OpenArena knows its players by name).
  const asked = session(() => undefined);
  expect(await asked.userType()).toBe("CENTRAL");
  expect((await asked.nameId())?.("^1Sarge")).toBe("Sarge");
  expect(loaded.game).toEqual({ userType: "CENTRAL", byName: true });
});
