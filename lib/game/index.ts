import type { Config } from "../config/index.ts";
import type { Clock } from "../clock.ts";
import type { Logger } from "../log.ts";
import type { GameBridge } from "./bridge.ts";
import { SimGame } from "./sim.ts";

/** The bridge `game.bridge` names. Only the simulated game exists until the real bridges land. */
export function createBridge(config: Config, deps: { clock: Clock; logger: Logger }): GameBridge {
  switch (config.game.bridge) {
    case "sim":
      return new SimGame({
        clock: deps.clock,
        logger: deps.logger.withTag("game"),
        map: config.game.map ?? "sim_island",
        players: config.game.sim.players,
        ...(config.game.sim.actions_log ? { actionsLog: config.game.sim.actions_log } : {}),
      });
  }
}
