/**
 * The one generic GameBridge (docs/game-consoles.md §1): a transport for commands (Source RCON, Quake 3 rcon, the
 * wrapped server's stdin), line sources for events (the wrapped server's output, a log tail), player-list polling,
 * and a preset that knows the game. Every line goes through the preset's patterns (event-reader.ts); connects and
 * disconnects from lines and from polling meet in one roster, which reports each once.
 */
import type { Clock } from "../clock.ts";
import type { Logger } from "../log.ts";
import type { BridgeEvent, GameBridge, GameEnd, GamePlayer, GameStatus, ScriptRunner, BridgeHealth } from "./bridge.ts";
import { EventReader, eventTypes, lineRef } from "./event-reader.ts";
import type { CommandKind, PlayerList, Preset } from "./presets/types.ts";
import type { Quoting } from "./presets/quoting.ts";
import { render, TemplateError, type TemplateValues } from "./presets/template.ts";
import { Roster } from "./roster.ts";
import { presetNameId } from "./user-type.ts";
import type { LineSource } from "./sources/lines.ts";
import { PlayerPoll } from "./sources/poll.ts";
import { errorMessage, type SendOptions, type Transport, TransportError } from "./transports/transport.ts";
import { OwnGroupChanges } from "./echoes.ts";
import type { PlayerRef, StructuredConsole } from "./structured.ts";

/** Where a reply ends on a wrapped console without echo: the player list's `until` and `start` lines. */
type ReplyEnd = Pick<Preset["list"], "until" | "start">;

/** A server process hub-agent runs (the wrapper): it knows when the game is ready or gone, and what the operator typed. */
export interface ServerProcess {
  on<K extends keyof ServerProcessEvents>(event: K, fn: (...args: ServerProcessEvents[K]) => void): () => void;
}

export interface ServerProcessEvents {
  ready: [];
  down: [reason: string];
  operator_input: [line: string];
  /** The process ended; `restarting` when another start follows. */
  exit: [info: { reason: string; requested: boolean; restarting: boolean }];
}

export interface PresetBridgeOptions {
  preset: Preset;
  /** Sends commands; the wrapper's takes `until` (and `start`) for consoles without echo. */
  transport: Transport & { send(command: string, opts?: SendOptions & ReplyEnd): Promise<string> };
  /** Where event lines come from (the wrapper's output, a log tail); started and stopped with the bridge. */
  sources?: LineSource[];
  /**
   * The wrapper, when hub-agent runs the server: ready, down and operator input come from it, and players are
   * gone when it goes down. Without it, the bridge is ready once the player list answers and down when it stops
   * answering or the connection drops; players are then kept until a poll after the reconnect says otherwise.
   */
  process?: ServerProcess;
  /** Parse command replies as event lines: Quake 3 rcon prints events caused by a command into its reply only. */
  parseReplies?: boolean;
  /**
   * A console that reports players itself (the plugin protocol): its events, player list, kicks, messages and
   * groups replace the preset's lines and command templates; `exec` still goes through the transport.
   */
  structured?: StructuredConsole;
  /** Player-list polling interval (`intervals.player_poll`); 0 polls only for status() and resyncs. */
  pollIntervalMs: number;
  clock: Clock;
  logger: Logger;
  /** How long a group change the agent made itself is recognised when the game reports it back (default 30 s). */
  echoTtlMs?: number;
}

/** Group names go into console commands bare on some games: letters, digits and `_ . + -` only. */
const GROUP_NAME = /^[\p{L}\p{N}_.+-]{1,64}$/u;

export class BridgeCommandError extends Error {
  override name = "BridgeCommandError";
}

export class PresetBridge implements GameBridge {
  readonly userType: string;
  readonly nameId?: (name: string) => string | undefined;
  readonly caps: GameBridge["caps"];
  readonly preset: Preset;
  #o: PresetBridgeOptions;
  #log: Logger;
  #listeners = new Set<(e: BridgeEvent) => void>();
  #roster: Roster;
  #poll: PlayerPoll;
  #own: OwnGroupChanges;
  /** The game's lines and structured events, read into the roster and events. */
  #reader: EventReader;
  #unsubscribe: (() => void)[] = [];
  /** "unknown" until the first answer (or failure): a game down at startup is logged once, with no `down` event. */
  #state: "unknown" | "up" | "down" = "unknown";
  #downReason = "";
  #lost = false;
  #started = false;

  /** SCRIPT rewards, where the preset has a script console. */
  readonly script?: ScriptRunner;

  constructor(o: PresetBridgeOptions) {
    this.#o = o;
    this.preset = o.preset;
    const script = o.preset.script;
    if (script)
      this.script = {
        escape: (v) => script.escape(v),
        quoting: script.quoting,
        run: (code, player) => this.#runScript(code, player),
      };
    this.#log = o.logger.withTag("game");
    this.userType = o.preset.userType;
    const nameId = presetNameId(o.preset);
    if (nameId) this.nameId = nameId;
    const events = eventTypes(o.preset, { lines: !!o.sources?.length || !!o.parseReplies, wrapped: !!o.process });
    for (const type of o.structured?.events ?? []) events.add(type);
    this.caps = {
      events,
      multiGroup: o.preset.multiGroup,
      privateMessage: o.structured !== undefined || o.preset.commands.message !== undefined,
      colours: o.preset.colours,
      identity: o.preset.identity,
    };
    this.#own = new OwnGroupChanges(o.clock, o.echoTtlMs);
    this.#roster = new Roster((e) => this.#emit(e));
    this.#poll = new PlayerPoll({
      list: () => this.#list(),
      roster: this.#roster,
      clock: o.clock,
      intervalMs: o.pollIntervalMs,
      logger: this.#log,
      onResult: (r) => this.#pollResult(r),
    });
    this.#reader = new EventReader({
      preset: o.preset,
      roster: this.#roster,
      own: this.#own,
      poll: this.#poll,
      emit: (e) => this.#emit(e),
      log: this.#log,
      wrapped: !!o.process,
    });
  }

  // ── GameBridge ──────────────────────────────────────────────────────────────

  health(): BridgeHealth {
    return this.#state === "down" ? { state: "down", reason: this.#downReason } : { state: this.#state };
  }

  get wrapsProcess(): boolean {
    return !!this.#o.process;
  }

  async start(): Promise<void> {
    if (this.#started) return;
    this.#started = true;
    const { transport, process: proc } = this.#o;
    this.#unsubscribe.push(transport.on("state", (state, error) => this.#transportState(state, error)));
    if (proc) {
      this.#unsubscribe.push(
        proc.on("ready", () => this.#setUp()),
        proc.on("down", (reason) => this.#processDown(reason)),
        proc.on("operator_input", (line) => this.#emit({ type: "operator_input", line })),
      );
    }
    const structured = this.#o.structured;
    if (structured) {
      this.#unsubscribe.push(structured.onEvent((e) => this.#reader.structured(e)));
      await structured.start();
    }
    for (const source of this.#o.sources ?? []) await source.start((line) => this.#reader.line(line));
    this.#poll.start();
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    const polling = this.#poll.stop();
    for (const off of this.#unsubscribe.splice(0)) off();
    // Closing the transport first fails a poll in flight at once instead of waiting for its timeout.
    await this.#o.transport.close();
    for (const source of this.#o.sources ?? []) await source.stop();
    await polling;
  }

  on(fn: (e: BridgeEvent) => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  onEnd(fn: (end: GameEnd) => void): () => void {
    const proc = this.#o.process;
    if (!proc) return () => {};
    return proc.on("exit", ({ reason, requested, restarting }) => {
      if (!restarting) fn({ reason, requested });
    });
  }

  async status(): Promise<GameStatus> {
    const list = await this.#poll.refresh();
    return {
      players: this.#roster.online(),
      maxPlayers: this.preset.maxPlayers ?? list.maxPlayers ?? 0,
      ...(list.map ? { map: list.map } : {}),
    };
  }

  async kick(player: GamePlayer, reason: string): Promise<void> {
    const structured = this.#o.structured;
    if (structured) await structured.kick(this.#playerRef(player), reason);
    else await this.#command("kick", { ...this.#values(player), reason });
  }

  /**
   * A private message, or a broadcast for null. A game without a private message (no `message` command) gets a
   * public line naming the player instead, `<name>: <text>` through `broadcast`: everyone reads it, but the player
   * still hears the answer (docs/game-consoles.md §5.6).
   */
  async message(player: GamePlayer | null, text: string): Promise<void> {
    const lines = text.split(/\r\n|\r|\n/).filter((l) => l.trim() !== "");
    const structured = this.#o.structured;
    const hasMessage = this.preset.commands.message !== undefined;
    for (const line of lines) {
      if (structured) await structured.message(player && this.#playerRef(player), line);
      else if (player && hasMessage) await this.#command("message", { ...this.#values(player), text: line });
      else await this.#command("broadcast", { text: player ? `${player.name}: ${line}` : line });
    }
  }

  async setGroup(player: GamePlayer, group: string, op: "add" | "remove", seconds?: number): Promise<void> {
    if (!GROUP_NAME.test(group)) {
      throw new BridgeCommandError(
        `group ${JSON.stringify(group)} can't be used on the ${this.preset.name} console: use letters, digits and _ . + - only`,
      );
    }
    const structured = this.#o.structured;
    if (structured) {
      this.#own.note(player.id, group, op);
      return structured.setGroup(this.#playerRef(player), group, op, seconds);
    }
    const temp = op === "add" && seconds !== undefined && this.preset.commands.group_add_temp !== undefined;
    const kind: CommandKind = op === "remove" ? "group_remove" : temp ? "group_add_temp" : "group_add";
    const values: TemplateValues = { ...this.#values(player), group };
    if (seconds !== undefined) {
      values.seconds = Math.max(1, Math.ceil(seconds));
      values.minutes = Math.max(1, Math.ceil(seconds / 60));
    }
    this.#own.note(player.id, group, op);
    await this.#command(kind, values);
  }

  async exec(command: string, opts?: ReplyEnd): Promise<string> {
    const reply = await this.#o.transport.send(command, opts);
    if (this.#o.parseReplies) for (const line of reply.split(/\r?\n/)) this.#reader.line(line);
    return reply;
  }

  escape(value: string): string {
    return this.preset.escape(value);
  }

  get quoting(): Quoting {
    return this.preset.quoting;
  }

  /** The script's lines in order; only the last runs the code, so a failure before it leaves nothing run. */
  async #runScript(code: string, player: GamePlayer | null): Promise<void> {
    const lines = this.preset.script!.lines(code, player, crypto.randomUUID().slice(0, 8));
    for (const [i, line] of lines.entries()) {
      try {
        await this.exec(line);
      } catch (e) {
        if (i === lines.length - 1 || !(e instanceof TransportError) || !e.written) throw e;
        throw new TransportError(e.code, `the script was not run: ${e.message}`, { cause: e });
      }
    }
  }

  /** A player as the structured console knows them: its own id spelling is the slot the roster kept. */
  #playerRef(player: GamePlayer): PlayerRef {
    const slot = player.slot ?? this.#roster.get(player.id)?.slot;
    return { id: player.id, name: player.name, ...(slot !== undefined ? { slot } : {}) };
  }

  // ── Commands ───────────────────────────────────────────────────────────────

  async #command(kind: CommandKind, values: TemplateValues): Promise<void> {
    const template = this.preset.commands[kind];
    if (template === undefined) {
      throw new BridgeCommandError(
        `the ${this.preset.name} preset has no ${kind} command: the game can't do it without a plugin; set game.overrides.commands.${kind} if yours can`,
      );
    }
    let command: string;
    try {
      command = render(template, values, this.preset);
    } catch (e) {
      if (e instanceof TemplateError) throw new BridgeCommandError(`${kind}: ${e.message}`);
      throw e;
    }
    await this.exec(command);
  }

  #values(player: GamePlayer): TemplateValues {
    const slot = player.slot ?? this.#roster.get(player.id)?.slot;
    const platformId = this.preset.identity === "platform" && this.preset.normaliseId(player.id) === player.id;
    return {
      id: player.id,
      name: player.name,
      ...(slot !== undefined ? { slot, userid: slot } : {}),
      ...(platformId ? this.preset.idValues(player.id) : {}),
    };
  }

  // ── Polling, up and down ──────────────────────────────────────────────────

  async #list(): Promise<PlayerList> {
    const structured = this.#o.structured;
    if (structured) {
      const list = await structured.players();
      const players = list.players.map(({ id, ...p }) => {
        const ref = lineRef(this.preset, { id, name: p.name, slot: p.slot }, "");
        return { ...p, name: ref.name ?? p.name, ...(ref.id !== undefined ? { id: ref.id } : {}) };
      });
      return { ...list, players };
    }
    const { command, until, start, parse } = this.preset.list;
    return parse(await this.exec(command, until ? { until, ...(start ? { start } : {}) } : undefined));
  }

  #pollResult(r: { ok: true } | { ok: false; error: Error }): void {
    if (this.#o.process) return; // the wrapper knows better whether the server is up
    if (r.ok) this.#setUp();
    else this.#setDown(r.error.message);
  }

  #transportState(state: string, error?: Error): void {
    if (state === "connected") {
      if (this.#lost) this.#poll.trigger(); // resync: who left or joined while we couldn't see
      this.#lost = false;
      return;
    }
    if (!error) return;
    this.#lost = true;
    if (!this.#o.process) this.#setDown(error.message);
  }

  #processDown(reason: string): void {
    this.#setDown(reason);
    // The server process is gone, and everyone with it.
    for (const p of this.#roster.online()) this.#roster.disconnect({ id: p.id }, reason);
  }

  #setUp(): void {
    if (this.#state === "up") return;
    this.#state = "up";
    this.#log.info(`${this.preset.title} is reachable`);
    this.#emit({ type: "ready" });
    if (this.#o.process) this.#poll.trigger();
  }

  /** Set by stop(): the console closing then (a poll failing with "transport closed") is ours, not the game's. */
  #stopping = false;

  #setDown(reason: string): void {
    if (this.#stopping) return;
    this.#downReason = reason;
    if (this.#state === "down") return;
    const wasUp = this.#state === "up";
    this.#state = "down";
    this.#log.warn(`${this.preset.title} is not reachable: ${reason}`);
    if (wasUp) this.#emit({ type: "down", reason });
  }

  #emit(e: BridgeEvent): void {
    for (const fn of this.#listeners) {
      try {
        fn(e);
      } catch (err) {
        this.#log.error("event listener threw", { event: e.type, error: errorMessage(err) });
      }
    }
  }
}
