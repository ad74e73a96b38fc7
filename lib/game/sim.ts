/**
 * A simulated game: scripted players, every action recorded. Tests of every feature drive it with a ManualClock;
 * `hub-agent demo` plays its timeline (lib/app/demo-timeline.ts) on the real clock and prints what the sim logs. With
 * `churn` it makes up its own players, coming and going (sim-churn.ts, for bench/load.ts and bench/soak.ts). Its
 * console's escaping is in sim-escape.ts, the record of its actions and their log file in sim-actions.ts.
 */
import { systemClock, type Clock } from "../clock.ts";
import { silentLogger, type Logger } from "../log.ts";
import type {
  BridgeEvent,
  BridgeEventType,
  BridgeHealth,
  GameBridge,
  GamePlayer,
  GameStatus,
  ScriptRunner,
} from "./bridge.ts";
import { parseChatCommand } from "./chat.ts";
import { SIM_USER_TYPE } from "./user-type.ts";
import { OwnGroupChanges } from "./echoes.ts";
import { actionAppender, type SimAction, type SimActionType } from "./sim-actions.ts";
import { SimChurner, type SimChurn } from "./sim-churn.ts";
import { simEscape, simQuoting } from "./sim-escape.ts";

export type { SimAction, SimActionType } from "./sim-actions.ts";
export { GENERATED_ID_BASE, type SimChurn } from "./sim-churn.ts";

export const ALL_EVENT_TYPES: readonly BridgeEventType[] = [
  "ready",
  "down",
  "player_connect",
  "player_disconnect",
  "player_spawn",
  "player_death",
  "chat_command",
  "group_change",
  "operator_input",
];

/** Calls that `fail()` can make reject; `message(null, …)` counts as "broadcast". */
export type SimFailable = SimActionType | "status";

export interface SimGameOptions {
  userType?: string;
  multiGroup?: boolean;
  privateMessage?: boolean;
  /** How players are known (the bridge's caps.identity; default "platform"). */
  identity?: "platform" | "name";
  maxPlayers?: number;
  /** `undefined` simulates a game that cannot tell its map. */
  map?: string | undefined;
  /** Which events the sim reports (its caps); others are never emitted. */
  events?: readonly BridgeEventType[];
  commandPrefix?: string;
  /** The console's answer to `exec` (default ""). */
  execReply?: string | ((command: string) => string);
  clock?: Clock;
  logger?: Logger;
  /** Players already online when the sim starts (no connect event: the agent finds them in `status()`). */
  players?: readonly GamePlayer[];
  /**
   * A file every recorded action is appended to as one JSON line, synced before the call returns, so a test can
   * read what a `run` process did even after it was killed.
   */
  actionsLog?: string;
  /** Lets the sim run scripts (SCRIPT rewards): adds `script`. */
  scripts?: boolean;
  /** Generated players and their comings and goings (the `[game.sim]` keys online, churn, distinct). */
  churn?: SimChurn;
  /** Keep only the newest this many actions in `actions` (default: all; `run` keeps 1,000, the log file has all). */
  maxActions?: number;
}

export class SimGame implements GameBridge {
  readonly userType: string;
  readonly caps: GameBridge["caps"];
  readonly maxPlayers: number;
  readonly commandPrefix: string;
  map: string | undefined;
  /** Every successful action, oldest first. */
  actions: SimAction[] = [];
  execReply: string | ((command: string) => string);
  /** Present only with the `scripts` option: how a bridge says it can run scripts. */
  readonly script?: ScriptRunner;

  private appendAction: ((line: string) => Promise<void>) | undefined;
  private players = new Map<string, GamePlayer>();
  private own: OwnGroupChanges;
  private groups = new Map<string, string[]>();
  private listeners = new Set<(e: BridgeEvent) => void>();
  private failures = new Map<SimFailable, { times: number; error: Error }>();
  private downReason: string | undefined;
  private clock: Clock;
  private log: Logger;
  private maxActions: number;
  private churner: SimChurner | undefined;

  constructor(o: SimGameOptions = {}) {
    this.userType = o.userType ?? SIM_USER_TYPE;
    this.caps = {
      events: new Set(o.events ?? ALL_EVENT_TYPES),
      multiGroup: o.multiGroup ?? false,
      privateMessage: o.privateMessage ?? true,
      identity: o.identity ?? "platform",
    };
    this.maxPlayers = o.maxPlayers ?? 24;
    this.map = "map" in o ? o.map : "sim_island";
    this.commandPrefix = o.commandPrefix ?? "!";
    this.execReply = o.execReply ?? "";
    this.clock = o.clock ?? systemClock;
    this.own = new OwnGroupChanges(this.clock);
    this.log = (o.logger ?? silentLogger).withTag("sim");
    this.appendAction = o.actionsLog === undefined ? undefined : actionAppender(o.actionsLog);
    this.maxActions = o.maxActions ?? Number.POSITIVE_INFINITY;
    for (const p of o.players ?? []) this.players.set(p.id, { ...p });
    if (o.churn) {
      this.churner = new SimChurner(o.churn, {
        clock: this.clock,
        maxPlayers: this.maxPlayers,
        isDown: () => this.isDown,
        isOnline: (id) => this.isOnline(id),
        onlineCount: () => this.players.size,
        join: (p) => this.join(p),
        leave: (id) => this.leave(id),
      });
      for (let i = 0; i < o.churn.online; i++) {
        const p = this.churner.nextGenerated();
        this.players.set(p.id, p);
      }
    }
    if (o.scripts) {
      this.script = {
        escape: (value) => JSON.stringify(value),
        quoting: simQuoting,
        run: async (script, player) => {
          this.check("script");
          await this.record({ type: "script", script, ...(player ? { player: player.id } : {}) });
          this.log.info(`script: ${script}`);
        },
      };
    }
  }

  // ── GameBridge ──────────────────────────────────────────────────────────────

  health(): BridgeHealth {
    return this.downReason === undefined ? { state: "up" } : { state: "down", reason: this.downReason };
  }

  start(): Promise<void> {
    this.emit({ type: "ready" });
    this.churner?.start();
    return Promise.resolve();
  }

  stop(): Promise<void> {
    this.churner?.stop();
    return Promise.resolve();
  }

  on(fn: (e: BridgeEvent) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  async status(): Promise<GameStatus> {
    this.check("status");
    return { players: this.online(), maxPlayers: this.maxPlayers, map: this.map };
  }

  async kick(player: GamePlayer, reason: string): Promise<void> {
    this.check("kick");
    const logged = this.record({ type: "kick", player: player.id, text: reason }); // the game's side goes on at once
    this.log.info(`${player.name} was kicked: ${reason}`, { id: player.id });
    const online = this.players.get(player.id);
    if (online && this.players.delete(player.id))
      this.emit({ type: "player_disconnect", player: online, reason: "kicked" });
    await logged;
  }

  async message(player: GamePlayer | null, text: string): Promise<void> {
    if (player) {
      this.check("message");
      await this.record({ type: "message", player: player.id, text });
      this.log.info(`to ${player.name}: ${text}`, { id: player.id });
    } else {
      this.check("broadcast");
      await this.record({ type: "broadcast", text });
      this.log.info(`to everyone: ${text}`);
    }
  }

  async setGroup(player: GamePlayer, group: string, op: "add" | "remove", seconds?: number): Promise<void> {
    this.check("set_group");
    const logged = this.record({
      type: "set_group",
      player: player.id,
      group,
      op,
      ...(seconds !== undefined ? { seconds } : {}),
    });
    this.own.note(player.id, group, op);
    this.applyGroup(player.id, group, op);
    const how = seconds !== undefined ? ` for ${seconds} s` : "";
    this.log.info(`${player.name}: group ${group} ${op === "add" ? "added" : "removed"}${how}`, { id: player.id });
    await logged;
  }

  async playerGroups(player: GamePlayer): Promise<string[]> {
    return this.groupsOf(player.id);
  }

  async exec(command: string): Promise<string> {
    this.check("exec");
    await this.record({ type: "exec", command });
    this.log.info(`console: ${command}`);
    return typeof this.execReply === "function" ? this.execReply(command) : this.execReply;
  }

  /** One JSON-style double-quoted token: `"`, `\`, control characters and line separators are escaped. */
  escape(value: string): string {
    return simEscape(value);
  }

  readonly quoting = simQuoting;

  // ── Test controls ──────────────────────────────────────────────────────────

  join(player: GamePlayer): GamePlayer {
    if (this.players.has(player.id)) throw new Error(`sim: ${player.id} is already online`);
    if (this.players.size >= this.maxPlayers) throw new Error(`sim: server full (${this.maxPlayers})`);
    const p = { ...player };
    this.players.set(p.id, p);
    this.log.info(`${p.name} joined`, { id: p.id });
    this.emit({ type: "player_connect", player: p });
    return p;
  }

  leave(id: string, reason?: string): void {
    const player = this.player(id);
    this.players.delete(id);
    this.log.info(`${player.name} left${reason ? ` (${reason})` : ""}`, { id });
    this.emit({ type: "player_disconnect", player, ...(reason !== undefined ? { reason } : {}) });
  }

  spawn(id: string): void {
    const player = this.player(id);
    this.log.info(`${player.name} spawned`, { id });
    this.emit({ type: "player_spawn", player });
  }

  death(id: string, killerId?: string): void {
    const player = this.player(id);
    const killer = killerId !== undefined ? this.player(killerId) : undefined;
    this.log.info(killer ? `${killer.name} killed ${player.name}` : `${player.name} died`, { id });
    this.emit({ type: "player_death", player, ...(killer ? { killer } : {}) });
  }

  /** A chat line; only lines starting with the command prefix are reported (as `chat_command`). */
  chat(id: string, text: string): void {
    const player = this.player(id);
    this.log.info(`${player.name}: ${text}`, { id });
    const parsed = parseChatCommand(text, this.commandPrefix);
    if (parsed) this.emit({ type: "chat_command", player, ...parsed });
  }

  /**
   * A group change reported by the game; the player may be offline. Like every bridge, the sim does not report a
   * change it made itself for the agent (setGroup) within the last 30 s: the game echoing it back.
   */
  groupChange(id: string, group: string, op: "add" | "remove", o: { seconds?: number; byId?: string } = {}): void {
    if (this.own.isEcho(id, group, op)) return;
    const player = this.players.get(id) ?? { id, name: id };
    const by = o.byId !== undefined ? (this.players.get(o.byId) ?? { id: o.byId, name: o.byId }) : undefined;
    this.applyGroup(id, group, op);
    this.log.info(`in game: ${player.name} group ${group} ${op === "add" ? "added" : "removed"}`, { id });
    this.emit({
      type: "group_change",
      player,
      group,
      op,
      ...(o.seconds !== undefined ? { seconds: o.seconds } : {}),
      ...(by ? { by } : {}),
    });
  }

  operatorInput(line: string): void {
    this.emit({ type: "operator_input", line });
  }

  setMap(map: string | undefined): void {
    this.map = map;
    this.log.info(`map changed to ${map ?? "(unknown)"}`);
  }

  /** Makes the next `times` calls of `action` reject with `error`. */
  fail(action: SimFailable, times = 1, error: Error | string = `sim: ${action} failed`): void {
    this.failures.set(action, { times, error: typeof error === "string" ? new Error(error) : error });
  }

  /** The game goes away: emits `down`; every action rejects until `up()`. */
  down(reason = "sim: server stopped"): void {
    this.downReason = reason;
    this.log.warn(`game down: ${reason}`);
    this.emit({ type: "down", reason });
  }

  up(): void {
    this.downReason = undefined;
    this.log.info("game up");
    this.emit({ type: "ready" });
  }

  // ── Churn ──────────────────────────────────────────────────────────────────

  /** Generated players who joined so far (those online from the start included). */
  get generatedJoins(): number {
    return this.churner?.generatedJoins ?? 0;
  }

  /** Distinct generated players seen so far. */
  get distinctPlayers(): number {
    return this.churner?.distinctPlayers ?? 0;
  }

  // ── Queries ────────────────────────────────────────────────────────────────

  get isDown(): boolean {
    return this.downReason !== undefined;
  }

  online(): GamePlayer[] {
    return [...this.players.values()].map((p) => ({ ...p }));
  }

  isOnline(id: string): boolean {
    return this.players.has(id);
  }

  /** The in-game groups of a player (online or not). */
  groupsOf(id: string): string[] {
    return [...(this.groups.get(id) ?? [])];
  }

  actionsOf<T extends SimActionType>(type: T): (SimAction & { type: T })[] {
    return this.actions.filter((a): a is SimAction & { type: T } => a.type === type);
  }

  clearActions(): void {
    this.actions = [];
  }

  // ── Internals ──────────────────────────────────────────────────────────────

  private player(id: string): GamePlayer {
    const p = this.players.get(id);
    if (!p) throw new Error(`sim: ${id} is not online`);
    return p;
  }

  private check(action: SimFailable): void {
    if (this.downReason !== undefined) throw new Error(`sim: game is down (${this.downReason})`);
    const f = this.failures.get(action);
    if (!f) return;
    if (--f.times <= 0) this.failures.delete(action);
    throw f.error;
  }

  /** Kept in `actions` at once; the call's promise settles once the line is written to the actions log (a kill -9 keeps it). */
  private record(a: Omit<SimAction, "at">): Promise<void> {
    const action = { ...a, at: this.clock.now() } as SimAction;
    this.actions.push(action);
    // Dropped in batches, so keeping the newest costs no copy per action.
    if (this.actions.length > 2 * this.maxActions) this.actions = this.actions.slice(-this.maxActions);
    return this.appendAction?.(`${JSON.stringify(action)}\n`) ?? Promise.resolve();
  }

  private applyGroup(id: string, group: string, op: "add" | "remove"): void {
    const current = this.groups.get(id) ?? [];
    let next: string[];
    if (op === "remove") next = current.filter((g) => g !== group);
    else if (!this.caps.multiGroup) next = [group];
    else next = current.includes(group) ? current : [...current, group];
    if (next.length) this.groups.set(id, next);
    else this.groups.delete(id);
  }

  private emit(e: BridgeEvent): void {
    if (!this.caps.events.has(e.type)) return;
    for (const fn of this.listeners) {
      try {
        fn(e);
      } catch (err) {
        // One faulty listener must not stop the others or the sim's own state changes.
        this.log.error("event listener threw", { event: e.type, error: String(err) });
      }
    }
  }
}
