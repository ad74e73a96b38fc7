import type { GameSettings } from "./settings.ts";
import type { GameBridge } from "./bridge.ts";
import { bridgeKind, type BridgeDeps, type BridgeKind, type KindInput } from "./kinds/index.ts";
import { PresetBridge, type PresetBridgeOptions } from "./preset-bridge.ts";
import { resolvePreset } from "./presets/index.ts";
import type { Preset } from "./presets/types.ts";
import { LogTail } from "./sources/log-tail.ts";
import { SimGame } from "./sim.ts";

export type { BridgeDeps } from "./kinds/index.ts";

/** The bridge `game.bridge` names, composed from the preset `game.preset` (validated by loadConfig). */
export async function createBridge(config: GameSettings, deps: BridgeDeps): Promise<GameBridge> {
  if (config.game.bridge === "sim") {
    return new SimGame({
      clock: deps.clock,
      logger: deps.logger.withTag("game"),
      map: config.game.map ?? "sim_island",
      players: config.game.sim.players,
      ...(config.game.sim.actions_log ? { actionsLog: config.game.sim.actions_log } : {}),
      churn: { online: config.game.sim.online, churn: config.game.sim.churn, distinct: config.game.sim.distinct },
      // The file above has every action; memory only the latest, so a long run stays flat.
      maxActions: 1000,
      maxPlayers: Math.max(24, config.game.sim.players.length + config.game.sim.online),
    });
  }
  return new PresetBridge(await presetBridgeOptions(config, deps));
}

/** The kind of `game.bridge` (lib/game/kinds/), with what it is given; `doctor` checks the console through it. */
export function configuredKind(
  config: GameSettings,
  deps: BridgeDeps,
): { kind: BridgeKind; input: KindInput<unknown>; preset: Preset } {
  const { game } = config;
  const kind = bridgeKind(game.bridge);
  if (!kind) throw new Error(`game.bridge = "${game.bridge}" has no preset bridge`);
  const preset = resolvePreset(game.preset ?? "", game.overrides);
  const { ban, unban, warn, warns } = config.commands;
  const section = (game as unknown as Record<string, unknown>)[kind.section];
  return { kind, preset, input: { section, preset, deps, consoleCommands: [ban, unban, warn, warns] } };
}

/** The transport, sources and preset of a real bridge. */
export async function presetBridgeOptions(config: GameSettings, deps: BridgeDeps): Promise<PresetBridgeOptions> {
  const { clock, logger } = deps;
  const { kind, input, preset } = configuredKind(config, deps);
  const parts = await kind.create(input);
  const logFile = config.game.log_file;
  return {
    preset,
    clock,
    logger,
    pollIntervalMs: config.intervals.player_poll * 1000,
    transport: parts.transport,
    sources: [...(parts.sources ?? []), ...(logFile ? [new LogTail({ path: logFile, clock, logger })] : [])],
    ...(parts.process ? { process: parts.process } : {}),
    ...(parts.parseReplies ? { parseReplies: true } : {}),
    ...(parts.structured ? { structured: parts.structured } : {}),
  };
}
