/**
 * What a feature (lib/features/*) is given, and so all it may use: the agent's dependencies, the serverbundle, the
 * online players and their users, the events, periodic jobs, game events, commands and the kick at connect. It sits
 * below both the agent (which implements it) and the features, so neither imports the other.
 */
import type { Api } from "./api/client.ts";
import type { Clock } from "./clock.ts";
import type { Config } from "./config/index.ts";
import type { EventBus } from "./events.ts";
import type { Users } from "./users.ts";
import type { Pace, PaceOptions } from "./pace.ts";
import type { BridgeEventOf, BridgeEventType, GameBridge, GamePlayer } from "./game/bridge.ts";
import type { Logger } from "./log.ts";
import type { Messages } from "./messages.ts";
import type { JobObserver, JobOptions, Scheduler } from "./scheduler.ts";
import type { Store } from "./store/index.ts";

export interface AgentDeps {
  config: Config;
  api: Api;
  store: Store;
  bridge: GameBridge;
  clock: Clock;
  logger: Logger;
  messages: Messages;
  /** The feature modules to install at hub_ready (default: all of lib/features). */
  features?: readonly Feature[];
  /** Fraction of each interval added at random (default 0.02; tests use 0). */
  jitter?: number;
  /** Watches the periodic jobs (`run`'s metrics registry). */
  jobs?: JobObserver;
  /** `run --once`: no timers and no waiting for the service; runOnce() does one round of every job. */
  once?: boolean;
  /** The pace of per-player requests (default PER_PLAYER_RATE a second; the benches scale it with the intervals). */
  pace?: PaceOptions;
  /**
   * True while the service refuses the API key and is not to be asked yet (lib/api/credentials.ts): the jobs that
   * need it skip their turns instead of each failing and logging it; those marked `offline` go on.
   */
  servicePaused?: () => boolean;
}

/** Who typed a command: a player in chat, or the operator at the server console (null). */
export interface CommandCall {
  invoker: GamePlayer | null;
  args: string[];
  /** Answers the invoker: a private message in game, a log line for the console. */
  reply(text: string): Promise<void>;
}
export type CommandHandler = (call: CommandCall) => Promise<void>;

export interface FeatureContext {
  readonly deps: AgentDeps;
  /** This server's serverbundle (from the server record; "" before hub_ready, when no feature runs yet). */
  readonly bundleId: string;
  readonly events: EventBus;
  readonly scheduler: Scheduler;
  /** Rule 6's map of player id → service user, with the lookup that fills it. */
  readonly users: Users;
  /** Requests made once per player take a turn here, so a round over many players stays under the rate limit. */
  readonly pace: Pace;
  /** Online players by normalised id. */
  readonly players: ReadonlyMap<string, GamePlayer>;
  /** Who was online when the previous run last wrote its player list (see hub_ply_initialized `resumed`). */
  readonly previousOnline: ReadonlySet<string>;
  /** Online players found by the initial status rather than seen connecting (hub_ply_initialized `resumed`). */
  readonly resumed: ReadonlySet<string>;
  /** Registers a periodic job at `seconds`; `immediate` also runs it at hub_ready. */
  /** `offline`: the job needs no service and goes on while it refuses the key (see AgentDeps.servicePaused). */
  job(
    name: string,
    seconds: number,
    run: () => Promise<void>,
    immediate?: boolean,
    opts?: JobOptions & { offline?: boolean },
  ): void;
  /** Subscribes to one kind of game event (after the agent's own bookkeeping of a connect, before a disconnect's). */
  onGame<T extends BridgeEventType>(type: T, fn: (e: BridgeEventOf<T>) => Promise<void> | void): void;
  /** Registers a command typed in chat (with the bridge's prefix) or intercepted at the server console. */
  command(names: string | readonly string[], handler: CommandHandler): void;
  /** Kicks a player and marks them refused, so the agent does not go on to initialize them. */
  refuse(player: GamePlayer, reason: string): Promise<void>;
  /** Subscribes to players let in: after every hub_ply_connected handler finished without refusing them. */
  onAdmitted(fn: (player: GamePlayer) => Promise<void>): void;
  /** Subscribes to players refused (kicked), whether at their connect or by a ban refresh before it. */
  onRefused(fn: (player: GamePlayer) => void): void;
}

/** One concern of the client interface: installs its jobs, listeners and commands at hub_ready. */
export type Feature = (ctx: FeatureContext) => void;
