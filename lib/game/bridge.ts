/**
 * What features see of the game (design principle 5): events in, actions out. A concrete bridge composes a
 * transport (RCON, console stdin, …), event sources (process output, log tail, player-list polling) and a
 * preset (regexes, command templates, escaping). Features never see which.
 */
import type { Quoting } from "./presets/quoting.ts";

/**
 * What a failed action (exec, kick, message, setGroup) tells a feature, whatever the console: whether the command may
 * still have run in the game (it was written and its reply lost), or never reached the game (the console could not be
 * reached), which is not the game's answer.
 */
export { mayHaveRun, unreachable } from "./transports/transport.ts";

/** A player as the game knows them. `id` is normalised for the service (SteamID64, Minecraft UUID with dashes, …). */
export interface GamePlayer {
  id: string;
  name: string;
  /** Free per-game data reported with the status (score, deaths, ping, …). */
  extra?: Record<string, unknown>;
  /** The game's own handle when it differs from `id` (srcds userid, Quake client slot). */
  slot?: string;
}

export type BridgeEvent =
  | { type: "ready" }
  | { type: "down"; reason: string }
  | { type: "player_connect"; player: GamePlayer }
  | { type: "player_disconnect"; player: GamePlayer; reason?: string }
  | { type: "player_spawn"; player: GamePlayer }
  | { type: "player_death"; player: GamePlayer; killer?: GamePlayer }
  /** A chat line starting with the command prefix, split into the command and its arguments. */
  | { type: "chat_command"; player: GamePlayer; command: string; args: string[] }
  /** A group change made in the game (not by the agent), e.g. an admin's `ulx adduserid`. */
  | { type: "group_change"; player: GamePlayer; group: string; op: "add" | "remove"; seconds?: number; by?: GamePlayer }
  /** A line an operator typed into the wrapped server console. */
  | { type: "operator_input"; line: string };

/** How `<red>…</red>` colour tags become text in this game's chat: removed, Minecraft `§` codes, Quake 3 `^` codes. */
export type ColourMode = "strip" | "minecraft" | "quake";

export type BridgeEventType = BridgeEvent["type"];
export type BridgeEventOf<T extends BridgeEventType> = Extract<BridgeEvent, { type: T }>;

export interface GameStatus {
  players: GamePlayer[];
  maxPlayers: number;
  /** Undefined when the game cannot tell; the agent then reports `game.map` from the config. */
  map?: string;
}

/** Runs SCRIPT rewards' code, where the game has a script console (Garry's Mod: Lua through `lua_run`). */
export interface ScriptRunner {
  /** A value as a complete string literal of the script language. */
  escape(value: string): string;
  /** How the script language reads quotes: a value inside a string literal of the code (lib/game/presets/quoting.ts). */
  readonly quoting: Quoting;
  /** Runs the code (its values already escaped), for the reward's player where the game can say who that is. */
  run(code: string, player: GamePlayer | null): Promise<void>;
}

export interface GameBridge {
  /** The service's user type for this game's ids (STEAM, MINECRAFT, …). */
  readonly userType: string;
  /**
   * Where the game knows its players by name (OpenArena, Xonotic, Teeworlds: user type CENTRAL), the game's id of a
   * name, so a command can name a player who is not online (lib/players/resolve.ts).
   */
  readonly nameId?: (name: string) => string | undefined;
  /** Present when the game can run SCRIPT rewards. */
  readonly script?: ScriptRunner;
  readonly caps: {
    /** Which events this bridge can report. */
    events: ReadonlySet<BridgeEventType>;
    /** Whether a player can hold several groups at once (else the highest permission level wins). */
    multiGroup: boolean;
    privateMessage: boolean;
    /** Colour tags in messages (default "strip"). */
    colours?: ColourMode;
    /**
     * "name": players are known by the name they chose (a game without accounts, e.g. OpenArena), so anyone can
     * take another's name; "platform" (default): by an id the platform authenticated.
     */
    identity?: "platform" | "name";
  };
  /**
   * The bridge runs the game server itself (the wrapper): its stop() lasts as long as the server takes to exit after
   * the stop command (SIGTERM after 30 s), which `run`'s shutdown waits for rather than cutting a world save short.
   */
  readonly wrapsProcess?: boolean;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Subscribes to events; returns the unsubscribe function. */
  on(fn: (e: BridgeEvent) => void): () => void;
  status(): Promise<GameStatus>;
  kick(player: GamePlayer, reason: string): Promise<void>;
  /** A message to one player, or to everyone with null. Text may hold line breaks. */
  message(player: GamePlayer | null, text: string): Promise<void>;
  /** Adds or removes an in-game group; `seconds` for a temporary one where the game supports it. */
  setGroup(player: GamePlayer, group: string, op: "add" | "remove", seconds?: number): Promise<void>;
  /** The in-game groups a player holds, when the game can tell; otherwise the agent remembers what it applied. */
  playerGroups?(player: GamePlayer): Promise<string[]>;
  /** Runs one raw console command (reward commands); values inside must already be escaped. */
  exec(command: string): Promise<string>;
  /** Escapes a value (a nick, a reason) so that it stays one argument of one command on this console. */
  escape(value: string): string;
  /** How this console reads quotes: a value inside a template's quotes (lib/game/presets/quoting.ts). */
  readonly quoting: Quoting;
  /**
   * A game server hub-agent runs (the wrapper) is gone for good: it exited and no restart follows. `requested`:
   * hub-agent stopped it (stop(), or the operator typed the stop command). Bridges without a process never call it.
   */
  onEnd?(fn: (end: GameEnd) => void): () => void;
  /** Whether the game answers now, for `hub-agent status` and the metrics. */
  health?(): BridgeHealth;
}

/** "unknown" until the game's first answer or failure; `reason`: why it is down. */
export interface BridgeHealth {
  state: "unknown" | "up" | "down";
  reason?: string;
}

export interface GameEnd {
  /** "the server exited with code 3", "stopped by hub-agent (exited with code 0)", … */
  reason: string;
  requested: boolean;
}
