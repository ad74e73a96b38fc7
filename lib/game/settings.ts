/**
 * What the game reads of the configuration: its `[game]` table, the console words hub-agent answers itself and the
 * player-list poll. Declared here so that lib/game/ never imports lib/config/ (nor the other way round: lib/app/config.ts
 * hands the configuration the game's vocabulary); the compiler checks the configuration's type against it wherever a
 * bridge is built from one.
 */
import type { GamePlayer } from "./bridge.ts";
import type { PresetOverrides } from "./presets/index.ts";

export interface GameSettings {
  game: {
    /** `sim`, or a kind of ./kinds/; each kind reads its own `[game.<section>]` table (BridgeKind.section). */
    bridge: string;
    preset?: string | undefined;
    map?: string | undefined;
    log_file?: string | undefined;
    sim: {
      players: readonly GamePlayer[];
      actions_log?: string | undefined;
      online: number;
      churn: number;
      distinct: number;
    };
    overrides: PresetOverrides;
  };
  commands: { ban: string; unban: string; warn: string; warns: string };
  intervals: { player_poll: number };
}
