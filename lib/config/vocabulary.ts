/**
 * What the configuration must know of the game to check its section: the names the game's registries define, and
 * the checks only the game can make. lib/app/config.ts hands them in (lib/game/vocabulary.ts): the configuration and
 * the game never import each other.
 */
export interface GameVocabulary {
  /** Every `game.bridge` value: the simulated game and each console kind. */
  bridges: readonly string[];
  /** `game.bridge`'s help: what each console kind is (the simulated game is named by the configuration). */
  bridgeHelp: string;
  /** Every `game.preset` value. */
  presets: readonly string[];
  /** Every `game.overrides.escape` value. */
  escapeModes: readonly string[];
  /** The keys of `game.overrides.lines` and of `game.overrides.commands`. */
  lineKinds: readonly string[];
  commandKinds: readonly string[];
  /**
   * The game section's checks across keys (what a bridge needs, the preset's overrides), one line per problem;
   * `timed`: also the operator's patterns run on hostile lines (`run` and `doctor`).
   */
  check(section: SectionView, timed: boolean): Promise<string[]>;
}

/** The configuration as written, for such checks: a key by its dotted path, where it was set, the line if missing. */
export interface SectionView {
  get(path: string): unknown;
  where(path: string): string;
  missing(path: string): string;
}
