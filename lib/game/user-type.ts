import type { Preset } from "./presets/types.ts";
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

/**
 * Where the configured game knows its players by name (OpenArena, Xonotic, Teeworlds: no accounts), the game's id
 * of a name (the preset's cleaning: colour codes off); undefined where players have platform ids.
 */
export async function nameIdOf(
  config: Pick<GameSettings, "game">,
): Promise<((name: string) => string | undefined) | undefined> {
  const { game } = config;
  if (game.bridge === "sim") return undefined;
  const { resolvePreset } = await import("./presets/index.ts");
  return presetNameId(resolvePreset(game.preset ?? "", game.overrides));
}

/** nameIdOf for a resolved preset (the bridge's own, for `run`'s chat and console commands). */
export function presetNameId(
  preset: Pick<Preset, "identity" | "userType" | "normaliseId">,
): ((name: string) => string | undefined) | undefined {
  // The generic preset keys players by name too, but with another user type (`STEAM`) its ids are that platform's.
  const byName = preset.identity === "name" && preset.userType === "CENTRAL";
  return byName ? (name) => preset.normaliseId(name) : undefined;
}
