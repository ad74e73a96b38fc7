/**
 * What the configuration must know of the game (lib/config/vocabulary.ts's GameVocabulary, by shape): the names the
 * registries define, and the game section's checks. lib/app/config.ts hands it to the configuration; the two never
 * import each other. The checks load the presets' resolution and pattern timing only for a real bridge.
 */
import { BRIDGE_KINDS, BRIDGE_NAMES } from "./kinds/index.ts";
import { ESCAPE_MODE_NAMES } from "./presets/escape.ts";
import { PRESET_NAMES } from "./presets/index.ts";
import { COMMAND_KINDS, LINE_KINDS } from "./presets/types.ts";
import type { SectionView } from "./config-check.ts";

export const GAME_VOCABULARY = {
  bridges: BRIDGE_NAMES,
  bridgeHelp: BRIDGE_KINDS.map((k) => k.help).join(", "),
  presets: PRESET_NAMES,
  escapeModes: ESCAPE_MODE_NAMES,
  lineKinds: LINE_KINDS,
  commandKinds: COMMAND_KINDS,
  check: async (section: SectionView, timed: boolean) =>
    (await import("./config-check.ts")).checkGameSection(section, timed),
};
