import type { GameSettings } from "./settings.ts";

/** The simulated game's players have Steam ids. */
export const SIM_USER_TYPE = "STEAM";

/**
 * The service's user type of the configured game's ids (STEAM, MINECRAFT, …), read from the preset and its
 * overrides without building a bridge: one-shot commands need only this of the game (and the simulated game not
 * even the presets).
 */
export async function userTypeOf(config: Pick<GameSettings, "game">): Promise<string> {
  const { game } = config;
  if (game.bridge === "sim") return SIM_USER_TYPE;
  const { resolvePreset } = await import("./presets/index.ts");
  return resolvePreset(game.preset ?? "", game.overrides).userType;
}
