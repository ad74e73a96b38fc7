import { describeError, type Server } from "./api/client.ts";
import { CREDENTIAL_BACKOFF_MAX_MS, credentialProblem } from "./api/credentials.ts";
import { bundleOf, cachedServer, serverCache } from "./server-record.ts";
import { StoreWriteError, cacheWrite } from "./store/index.ts";
import { cacheAge } from "./store/cache.ts";
import type { BridgeEvent, BridgeEventOf, BridgeEventType, GamePlayer } from "./game/bridge.ts";
import type { Logger } from "./log.ts";
import { EventBus } from "./events.ts";
import { Scheduler, type JobOptions } from "./scheduler.ts";
import { Users } from "./users.ts";
import { CommandLimiter, limitKeys } from "./command-limit.ts";
import { RepeatedWarnings } from "./repeated-warnings.ts";
import { Pace } from "./pace.ts";
import { onlineCache } from "./players/online.ts";
import { FEATURES } from "./features/index.ts";
import type { AgentDeps, CommandHandler, FeatureContext } from "./feature.ts";

/** Rule 2: a cached server record is usable offline for one week. */
export const SERVER_CACHE_MAX_AGE_MS = 7 * 24 * 3600_000;

export type { AgentDeps, CommandCall, CommandHandler } from "./feature.ts";

interface Job {
  name: string;
  run: () => Promise<void>;
}

/**
 * The agent of `hub-agent run` (composed in lib/app/run-serve.ts): the startup order of rules 1–4, then every timer
 * and event listener.
 * Features are plain functions of a FeatureContext (lib/feature.ts), which this class implements; it only wires them.
 */
export class Agent implements FeatureContext {
  readonly events: EventBus;
  readonly scheduler: Scheduler;
  readonly users: Users;
  readonly pace: Pace;
  /** Online players by normalised id. */
  readonly players = new Map<string, GamePlayer>();
  /**
   * Who was online when the previous run last wrote its player list (the online feature's store cache), read
   * before anything overwrites it: with `resumed`, tells a feature that the previous run saw this player's connect.
   */
  readonly previousOnline = new Set<string>();
  /** Online players found by the initial status rather than seen connecting (hub_ply_initialized `resumed`). */
  readonly resumed = new Set<string>();
  /** The initial players' connect and user lookup; `run --once` waits for it before its round. */
  private initialPlayers: Promise<unknown> = Promise.resolve();
  server?: Server;
  private jobs: Job[] = [];
  private unsubscribe?: () => void;
  private log: Logger;
  private gameHandlers = new Map<BridgeEventType, ((e: BridgeEvent) => Promise<void> | void)[]>();
  private commands = new Map<string, CommandHandler>();
  /** Players' chat commands per player (lib/command-limit.ts), and the log lines of those refused. */
  private commandLimit: CommandLimiter;
  private tooFast: RepeatedWarnings;
  private admitted: ((player: GamePlayer) => Promise<void>)[] = [];

  constructor(readonly deps: AgentDeps) {
    this.log = deps.logger.withTag("agent");
    this.events = new EventBus(deps.logger.withTag("events"));
    this.scheduler = new Scheduler(deps.clock, deps.logger.withTag("scheduler"), deps.jitter, undefined, deps.jobs);
    this.pace = new Pace(deps.clock, deps.pace);
    this.users = new Users({
      api: deps.api,
      userType: deps.bridge.userType,
      logger: deps.logger.withTag("users"),
      clock: deps.clock,
      online: (id) => this.players.has(id),
      pace: this.pace,
      signal: this.scheduler.signal,
    });
    this.commandLimit = new CommandLimiter(() => deps.clock.monotonic());
    this.tooFast = new RepeatedWarnings(deps.logger.withTag("commands"), deps.clock, {
      what: "chat commands refused as too fast",
    });
  }

  get bundleId(): string {
    return (this.server && bundleOf(this.server)) ?? "";
  }

  /**
   * Resolves true once hub_ready has been emitted and every timer runs; waits (retrying) while the service is
   * down and no fresh cache exists. False when stopped first (or, with `once`, when there is nothing to use).
   */
  async start(): Promise<boolean> {
    // Listen from the start: a player connecting or a console command typed while the service is still being
    // asked is handled once the features are installed (docs/pitfalls.md, pitfall 6), never dropped.
    this.unsubscribe = this.deps.bridge.on((e) => this.receive(e));
    await this.readPreviousOnline();
    await this.events.emit("hub_loading_start", {});
    await this.events.emit("hub_loading_finish", {});
    const source = await this.loadServer();
    if (!source) return false;
    await this.events.emit("hub_ready", { server: this.server as Server, source });
    this.startFeatures();
    const early = this.early ?? [];
    this.early = undefined;
    for (const e of early) this.receive(e);
    return true;
  }

  private async readPreviousOnline() {
    const { store, bridge } = this.deps;
    try {
      const cached = await onlineCache(store).get();
      if (cached?.data.user_type === bridge.userType)
        for (const p of cached.data.players) this.previousOnline.add(p.id);
    } catch (e) {
      this.log.warn(`the previous run's player list is unreadable: ${(e as Error).message}`);
    }
  }

  /** Game events before hub_ready wait here; undefined once the features are installed. */
  private early: BridgeEvent[] | undefined = [];

  private receive(e: BridgeEvent) {
    if (this.early) this.early.push(e);
    else void this.scheduler.run(`game ${e.type}`, () => this.onBridgeEvent(e));
  }

  /** Rules 1–3: the live record, else a cache at most a week old, else keep trying every minute. */
  private async loadServer(): Promise<"api" | "cache" | undefined> {
    const { api, config, clock } = this.deps;
    const retryMs = config.intervals.user_retry * 1000;
    let refusals = 0;
    for (let attempt = 1; !this.scheduler.stopped; attempt++) {
      const res = await api.getServer(config.api.server_id);
      if (res.ok) {
        await this.useLiveRecord(res.value);
        return "api";
      }
      const reason = describeError(res.error);
      // A refused key or unknown server id was named by the API client's guard (lib/api/credentials.ts).
      const refused = credentialProblem(res.error);
      const cached = await cachedServer(this.deps.store, config.api.server_id);
      const usable = cached && cacheAge(cached.savedAt, clock.now()) <= SERVER_CACHE_MAX_AGE_MS;
      // Once per start, also when no cache helps: an operator's hub_api_failed hook is an alert.
      if (attempt === 1)
        await this.events.emit("hub_api_failed", { reason, ...(usable ? { cached_at: cached.savedAt } : {}) });
      if (usable) {
        this.server = cached.data;
        const hours = Math.round((clock.now() - cached.savedAt) / 3600_000);
        this.log.warn(
          refused
            ? `using the server record cached ${hours} h ago until the service accepts this agent`
            : `service unreachable (${reason}); using the server record cached ${hours} h ago`,
        );
        this.refetchInBackground();
        return "cache";
      }
      const why = !cached
        ? "there is no cached server record of this server yet"
        : cached.savedAt > clock.now()
          ? "the cached server record is dated in the future (was the clock set back?)"
          : "the cached server record is older than a week";
      const problem = refused ? "the service refuses this agent" : `service unreachable (${reason})`;
      if (this.deps.once) {
        this.log.error(`${problem} and ${why}`);
        return undefined;
      }
      // Asking again every minute cannot fix a refused key: wait longer each time (capped).
      const waitMs = refused ? Math.min(retryMs * 2 ** refusals++, CREDENTIAL_BACKOFF_MAX_MS) : retryMs;
      this.log.error(`${problem} and ${why}: asking again in ${Math.round(waitMs / 1000)} s`, { attempt });
      try {
        await clock.sleep(waitMs, this.scheduler.signal);
      } catch {
        return undefined;
      }
    }
    return undefined;
  }

  private async useLiveRecord(server: Server) {
    this.server = server;
    await cacheWrite(serverCache(this.deps.store).set(server));
    await this.events.emit("hub_api_ready", { server });
  }

  /** After falling back to the cache, keep trying the live record until it answers. */
  private refetchInBackground() {
    const { api, config } = this.deps;
    if (this.deps.once) return;
    this.scheduler.every("server-refetch", config.intervals.user_retry * 1000, async () => {
      const res = await api.getServer(config.api.server_id);
      if (!res.ok) return;
      this.log.info("service reachable again; server record refreshed");
      await this.useLiveRecord(res.value);
      return "done";
    });
  }

  /** Registers a periodic job at `seconds`; `immediate` also runs it at hub_ready. */
  job(
    name: string,
    seconds: number,
    run: () => Promise<void>,
    immediate = false,
    opts: JobOptions & { offline?: boolean } = {},
  ): void {
    this.jobs.push({ name, run });
    const { offline, ...rest } = opts;
    const paused = offline ? undefined : this.deps.servicePaused;
    if (!this.deps.once) this.scheduler.every(name, seconds * 1000, run, { ...rest, immediate, paused });
  }

  /** Subscribes a feature to one kind of game event; handlers run after the agent's own bookkeeping of a connect
   * and before that of a disconnect, so the player and their user are known to both. */
  onGame<T extends BridgeEventType>(type: T, fn: (e: BridgeEventOf<T>) => Promise<void> | void): void {
    const list = this.gameHandlers.get(type) ?? [];
    list.push(fn as (e: BridgeEvent) => Promise<void> | void);
    this.gameHandlers.set(type, list);
  }

  /** Registers a command typed in chat (with the bridge's prefix) or intercepted at the server console. */
  command(names: string | readonly string[], handler: CommandHandler): void {
    for (const name of typeof names === "string" ? [names] : names) this.commands.set(name.toLowerCase(), handler);
  }

  /** A message to a player, or a log line when the operator at the console (null) asked. */
  async reply(invoker: GamePlayer | null, text: string): Promise<void> {
    if (invoker) await this.deps.bridge.message(invoker, text);
    else this.deps.logger.withTag("console").info(text);
  }

  private startFeatures() {
    const { bridge } = this.deps;
    for (const install of this.deps.features ?? FEATURES) install(this);

    // Players already online when the agent starts count as connecting now, marked `resumed`.
    // The list is a snapshot, and each connect takes a while: one who left meanwhile (kicked by the first ban
    // refresh, say) is not connected from it, or they would be kicked twice.
    this.initialPlayers = this.scheduler.run("initial-players", async () => {
      const left = new Set<string>();
      const off = bridge.on((e) => void (e.type === "player_disconnect" && left.add(e.player.id)));
      try {
        const status = await bridge.status();
        for (const p of status.players) {
          if (this.players.has(p.id) || left.has(p.id)) continue;
          this.resumed.add(p.id);
          await this.connect(p);
        }
      } finally {
        off();
      }
    });
  }

  private async onBridgeEvent(e: BridgeEvent) {
    if (e.type === "player_connect") await this.connect(e.player);
    // The connection a disconnect ends: a rejoin while its handlers run is a new one, and stays online. It is seen
    // connecting, so it is not the one the previous run or the initial list knew.
    const leaving = e.type === "player_disconnect" ? this.players.get(e.player.id) : undefined;
    if (e.type === "player_disconnect") {
      this.resumed.delete(e.player.id);
      this.previousOnline.delete(e.player.id);
    }
    const handlers = this.gameHandlers.get(e.type) ?? [];
    await Promise.all(handlers.map((h) => this.scheduler.run(`game ${e.type}`, async () => h(e))));
    if (e.type === "chat_command") await this.dispatch(e.command, e.args, e.player);
    else if (e.type === "operator_input") {
      const [name = "", ...args] = e.line.trim().split(/\s+/);
      await this.dispatch(name, args, null);
    } else if (e.type === "player_disconnect" && this.players.get(e.player.id) === leaving) {
      this.players.delete(e.player.id);
      this.refused.delete(e.player.id);
      this.users.left(e.player.id);
    }
  }

  private async dispatch(name: string, args: string[], invoker: GamePlayer | null) {
    const handler = this.commands.get(name.toLowerCase());
    if (!handler) return;
    // An answer that can't be shown (the console down or slow) is logged, and never cuts the command short: a ban
    // typed in chat is queued and sent whether or not its "queued" answer reached the player.
    const reply = (text: string) =>
      this.reply(invoker, text).catch((e: unknown) =>
        this.log.warn(`the answer to ${name} by ${invoker?.name} was not shown: ${(e as Error).message}`, {
          answer: text,
        }),
      );
    const allowance = invoker ? this.commandLimit.take(limitKeys(invoker)) : ({ ok: true } as const);
    if (invoker && !allowance.ok) {
      const { burst, refillMs } = this.commandLimit.limit;
      const who = `${invoker.name} (${invoker.id})`;
      this.tooFast.warn(
        who,
        `${name} by ${who} refused: more than ${burst} chat commands at once, then one every ${refillMs / 1000} s`,
      );
      if (allowance.tell)
        await reply(this.deps.messages.t("command.too_fast", { seconds: Math.ceil(allowance.retryMs / 1000) }));
      return;
    }
    try {
      await handler({ invoker, args, reply });
    } catch (e) {
      // The store logged its failure once; the one who typed `ban` must still hear that nothing was queued.
      if (!(e instanceof StoreWriteError)) throw e;
      await reply(this.deps.messages.t("command.store_failed", { error: e.code }));
      if (invoker) this.log.warn(`${name} by ${invoker.name} not done: ${e.message}; nothing was queued`);
    }
  }

  private async connect(player: GamePlayer) {
    this.players.set(player.id, player);
    this.refused.delete(player.id);
    await this.events.emit("hub_ply_connected", { player });
    // A connect handler (the ban check) may have refused the player: then nothing is done for them.
    if (this.players.get(player.id) === player && !this.refused.has(player.id))
      await Promise.all(this.admitted.map((fn) => fn(player)));
  }

  /** Subscribes to players let in: after every hub_ply_connected handler finished without refusing them. */
  onAdmitted(fn: (player: GamePlayer) => Promise<void>): void {
    this.admitted.push(fn);
  }

  /** Players kicked at connect in this session: no user lookup, groups or rewards for them. */
  private refused = new Set<string>();

  /** Kicks a player and marks them refused, so the agent does not go on to initialize them. */
  async refuse(player: GamePlayer, reason: string): Promise<void> {
    this.refused.add(player.id);
    for (const fn of this.refusedListeners) fn(player);
    await this.deps.bridge.kick(player, reason);
  }

  private refusedListeners: ((player: GamePlayer) => void)[] = [];

  /** Subscribes to players refused (kicked), whether at their connect or by a ban refresh before it. */
  onRefused(fn: (player: GamePlayer) => void): void {
    this.refusedListeners.push(fn);
  }

  /** The periodic jobs, in the order `runOnce` runs them. */
  get jobNames(): string[] {
    return this.jobs.map((j) => j.name);
  }

  /** `run --once`: one round of every periodic job, in registration order, once the initial players are known. */
  async runOnce(): Promise<void> {
    await this.initialPlayers;
    for (const job of this.jobs) await this.scheduler.runJob(job.name, job.run);
  }

  /** Stops timers, waits for runs and event handlers in flight, and stops listening to the game. */
  async stop(): Promise<void> {
    for (const e of this.early ?? [])
      if (e.type === "operator_input") this.log.warn(`not handled, the agent stopped before it was ready: ${e.line}`);
    this.early = undefined;
    await this.scheduler.stop();
    this.unsubscribe?.();
    await this.events.idle();
    this.tooFast.close();
  }
}
