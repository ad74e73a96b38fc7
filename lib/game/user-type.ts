import type { Config } from "../config/index.ts";
import { resolvePreset } from "./presets/index.ts";

/** The simulated game's players have Steam ids. */
export const SIM_USER_TYPE = "STEAM";

/**
 * The service's user type of the configured game's ids (STEAM, MINECRAFT, …), read from the preset and its
 * overrides without building a bridge: one-shot commands need only this of the game.
 */
export function userTypeOf(config: Config): string {
  const { game } = config;
  return game.bridge === "sim" ? SIM_USER_TYPE : resolvePreset(game.preset ?? "", game.overrides).userType;
}
