/**
 * What the presets of games without accounts share (OpenArena, Xonotic, Teeworlds, the generic console): the
 * player's cleaned name is the identity, VyHub knows them as CENTRAL users, and there are no platform id values
 * and one group per player (docs/game-consoles.md §5).
 */
import type { Preset } from "./types.ts";

export function knownByName(clean: (raw: string) => string) {
  return {
    userType: "CENTRAL",
    identity: "name",
    normaliseId: (raw: string) => clean(raw) || undefined,
    cleanName: clean,
    idValues: () => ({}),
    multiGroup: false,
  } as const satisfies Partial<Preset>;
}

/** Names as printed, surrounding spaces dropped (consoles without colour codes in names). */
export const trimmed = (raw: string) => raw.trim();
