import type { Config } from "../config/index.ts";
import type { Clock } from "../clock.ts";
import type { Logger } from "../log.ts";
import type { GameBridge } from "./bridge.ts";
import { PresetBridge, type PresetBridgeOptions } from "./preset-bridge.ts";
import { resolvePreset } from "./presets/index.ts";
import type { Preset } from "./presets/types.ts";
import type { LineSource } from "./sources/lines.ts";
import { LogTail } from "./sources/log-tail.ts";
import { interceptWords, Wrapper } from "./sources/wrapper.ts";
import { SimGame } from "./sim.ts";
import { Q3Rcon } from "./transports/q3-rcon.ts";
import { SourceRcon } from "./transports/source-rcon.ts";

export interface BridgeDeps {
  clock: Clock;
  logger: Logger;
  /** The operator's console for the wrapper (default: hub-agent's stdin). */
  input?: NodeJS.ReadableStream;
  /**
   * Where the wrapper copies the server's console for the operator (default: hub-agent's stdout, while its log
   * goes to stderr); null: nowhere (`run --json` keeps stdout for machine output).
   */
  output?: NodeJS.WritableStream | null;
  /** Applied to the copied console (the configured secrets). */
  redact?: (text: string) => string;
}

/** The bridge `game.bridge` names, composed from the preset `game.preset` (validated by loadConfig). */
export function createBridge(config: Config, deps: BridgeDeps): GameBridge {
  if (config.game.bridge === "sim") {
    return new SimGame({
      clock: deps.clock,
      logger: deps.logger.withTag("game"),
      map: config.game.map ?? "sim_island",
      players: config.game.sim.players,
      ...(config.game.sim.actions_log ? { actionsLog: config.game.sim.actions_log } : {}),
    });
  }
  return new PresetBridge(presetBridgeOptions(config, deps));
}

/** The transport, sources and preset of a real bridge; also used by `hub-agent doctor`. */
export function presetBridgeOptions(config: Config, deps: BridgeDeps): PresetBridgeOptions {
  const { game } = config;
  const { clock, logger } = deps;
  const preset = resolvePreset(game.preset ?? "", game.overrides);
  const sources: LineSource[] = game.log_file ? [new LogTail({ path: game.log_file, clock, logger })] : [];
  const common = { preset, sources, clock, logger, pollIntervalMs: config.intervals.player_poll * 1000 };
  switch (game.bridge) {
    case "rcon":
      return { ...common, transport: sourceRcon(config, preset, deps) };
    case "q3rcon":
      return { ...common, transport: q3Rcon(config, preset, deps), parseReplies: true };
    case "wrapper": {
      const wrapper = wrap(config, preset, deps);
      return { ...common, transport: wrapper, process: wrapper, sources: [wrapper, ...sources] };
    }
    default:
      throw new Error(`game.bridge = "${game.bridge}" has no preset bridge`);
  }
}

function sourceRcon(config: Config, preset: Preset, { clock, logger }: BridgeDeps): SourceRcon {
  const { rcon } = config.game;
  if (!preset.rcon) throw new Error(`the ${preset.name} preset doesn't speak Source RCON`);
  return new SourceRcon({
    host: rcon.host,
    port: rcon.port ?? preset.rcon.port,
    password: required(rcon.password, "game.rcon.password"),
    dialect: preset.rcon.dialect,
    clock,
    logger,
  });
}

function q3Rcon(config: Config, preset: Preset, { clock, logger }: BridgeDeps): Q3Rcon {
  const { rcon } = config.game;
  if (!preset.q3rcon) throw new Error(`the ${preset.name} preset doesn't speak Quake 3 rcon`);
  return new Q3Rcon({
    host: rcon.host,
    port: rcon.port ?? preset.q3rcon.port,
    password: required(rcon.password, "game.rcon.password"),
    clock,
    logger,
  });
}

function wrap(config: Config, preset: Preset, deps: BridgeDeps): Wrapper {
  const { wrapper } = config.game;
  const { ban, unban, warn, warns } = config.commands;
  const ready = preset.lines.ready?.[0];
  const output = deps.output === undefined ? process.stdout : deps.output;
  return new Wrapper({
    command: required(wrapper.command, "game.wrapper.command"),
    ...(wrapper.cwd ? { cwd: wrapper.cwd } : {}),
    env: wrapper.env,
    ...(preset.commands.stop ? { stopCommand: preset.commands.stop } : {}),
    ...(ready ? { ready } : {}),
    ...(preset.echo ? { echo: preset.echo } : {}),
    ...(wrapper.restart ? { restart: {} } : {}),
    input: deps.input ?? process.stdin,
    ...(output ? { output: surviveErrors(output, deps.logger) } : {}),
    ...(deps.redact ? { redact: deps.redact } : {}),
    // The operator's ban/unban/warn/warns typed at the console go to the service, not the game.
    intercept: interceptWords([ban, unban, warn, warns]),
    clock: deps.clock,
    logger: deps.logger,
  });
}

const guarded = new WeakSet<NodeJS.WritableStream>();

/** A closed stdout (`hub-agent run | head`, a gone terminal) must not end the agent: the copy stops, one warning. */
function surviveErrors(stream: NodeJS.WritableStream, logger: Logger): NodeJS.WritableStream {
  if (guarded.has(stream)) return stream;
  guarded.add(stream);
  let warned = false;
  stream.on("error", (e: Error) => {
    if (warned) return;
    warned = true;
    logger.withTag("wrapper").warn(`the server's console is no longer copied to the output: ${e.message}`);
  });
  return stream;
}

function required<T>(value: T | undefined, key: string): T {
  if (value === undefined) throw new Error(`${key} is missing`);
  return value;
}
