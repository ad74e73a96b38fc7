/**
 * Every `game.bridge` kind but the simulated game: adding a console is one module in this folder (a `BridgeKind`,
 * ./kind.ts) and one line here. Config validation, the bridge factory and `doctor` read this list.
 */
import { dpRcon } from "./dp-rcon.ts";
import { econ } from "./econ.ts";
import type { BridgeKind } from "./kind.ts";
import { plugin } from "./plugin.ts";
import { q3Rcon } from "./q3-rcon.ts";
import { sourceRcon } from "./source-rcon.ts";
import { webRcon } from "./web-rcon.ts";
import { wrapper } from "./wrapper.ts";

export type { BridgeDeps, BridgeKind, BridgeParts, KindInput, RawConfig, RemoteConsoleSection } from "./kind.ts";

/** Each kind reads its own section's type; the factory hands it `config.game[kind.section]`. */
export const BRIDGE_KINDS: readonly BridgeKind[] = [sourceRcon, wrapper, q3Rcon, webRcon, econ, dpRcon, plugin];

/** Every value `game.bridge` takes: the simulated game and the kinds. */
export const BRIDGE_NAMES: readonly string[] = ["sim", ...BRIDGE_KINDS.map((k) => k.name)];

export function bridgeKind(name: string): BridgeKind | undefined {
  return BRIDGE_KINDS.find((k) => k.name === name);
}
