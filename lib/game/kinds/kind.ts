/**
 * A bridge kind: one way hub-agent reaches a game's console (`game.bridge`). Each kind is one module in this folder
 * and one line in ./index.ts; config validation, the bridge factory (../index.ts) and `doctor` loop over them.
 * A kind module is a light descriptor: its transport is imported only when `create` or `check` runs, so every
 * command that reads the configuration does not load every protocol.
 */
import type { Check } from "../../check.ts";
import type { Clock } from "../../clock.ts";
import type { Logger } from "../../log.ts";
import type { Preset } from "../presets/types.ts";
import type { LineSource } from "../sources/lines.ts";
import type { Transport } from "../transports/transport.ts";

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

/** A remote console's keys, `[game.rcon]`: every network console kind reads this one table. */
export interface RemoteConsoleSection {
  host: string;
  port?: number;
  password?: string;
}

/** What a kind is given: its `[game.<section>]` table (validated), the preset, and the agent's dependencies. */
export interface KindInput<S> {
  section: S;
  preset: Preset;
  deps: BridgeDeps;
  /** The console words hub-agent answers itself (ban, unban, warn, warns): a wrapped console intercepts them. */
  consoleCommands: readonly string[];
}

/** A kind's part of the bridge: how commands reach the game, and what it hears besides the log file. */
export interface BridgeParts {
  transport: Transport;
  /** Line sources of the kind itself (a wrapped server's console). */
  sources?: LineSource[];
  /** The game server as a child process, when hub-agent runs it. */
  process?: import("../preset-bridge.ts").PresetBridgeOptions["process"];
  /** A console that reports players itself (the plugin protocol): the bridge uses it for events, the list and actions. */
  structured?: import("../structured.ts").StructuredConsole;
  /** Command replies carry game events too (Quake 3: a kick's disconnect appears only in the reply). */
  parseReplies?: boolean;
}

/** The raw configuration as written, for a kind's cross-key checks. */
export interface RawConfig {
  /** The value at a dotted key as written (file or environment), or undefined. */
  get(key: string): unknown;
  /** Where a key was set, for messages: `from HUB_…` or `in hub-agent.toml`. */
  where(key: string): string;
  /** The one-line message for a missing key, naming where to set it. */
  missing(key: string): string;
}

export interface BridgeKind<S = unknown> {
  /** The `game.bridge` value. */
  readonly name: string;
  /** How logs and `doctor` name this console: "Source RCON", "Quake 3 rcon". */
  readonly title: string;
  /** One line for `game.bridge`'s description. */
  readonly help: string;
  /** The `[game.<section>]` table it reads (`rcon` for every network console). */
  readonly section: string;
  /** Needs `preset.consoles[name]` (its default port and how to turn it on); the wrapper needs none. */
  readonly console: boolean;
  /** Learns the players itself (the plugin says who is online), not from the preset's list command. */
  readonly listsPlayers?: boolean;
  /** Cross-key checks of the written configuration (what `section` alone can't say): one line per problem. */
  validate?(raw: RawConfig): string[];
  create(input: KindInput<S>): Promise<BridgeParts>;
  /** `doctor`: can hub-agent reach this console, is the password right, does the player list answer. */
  check(input: KindInput<S>, opts: { timeoutMs: number }): Promise<Check>;
}
