/**
 * The plugin protocol's listener (docs/plugin-protocol.md): hub-agent listens on a TCP address, a plugin inside the
 * game server connects to it, proves it knows the shared token (hello-gate.ts), then sends events and answers
 * requests, each correlated by id. One plugin at a time: a newly authenticated connection replaces the old one (a restarted game
 * server's plugin comes back before the old socket is known dead). A bad line is logged and answered with an
 * error, never fatal; a line longer than the limit is dropped whole (bounded-lines.ts). Connections before their
 * hello pass a gate (hello-gate.ts): failed hellos slow their address down (hello-throttle.ts), and their log lines
 * are counted rather than repeated (lib/repeated-warnings.ts).
 */
import * as net from "node:net";
import { type Clock, systemClock } from "../../clock.ts";
import { type Logger, silentLogger } from "../../log.ts";
import type { BridgeEventType } from "../bridge.ts";
import type { PlayerList } from "../presets/types.ts";
import type { PlayerRef, StructuredConsole, StructuredEvent } from "../structured.ts";
import { BoundedLines } from "./bounded-lines.ts";
import { HelloGate, MAX_HELLO_BYTES } from "./hello-gate.ts";
import type { HelloLimits } from "./hello-throttle.ts";
import { type Conn, drop, formatHost, newConn, plainAddress, reply } from "./plugin-conn.ts";
import {
  BadLine,
  encode,
  type Op,
  parseLine,
  parseOutput,
  parsePlayers,
  type PluginMessage,
} from "./plugin-protocol.ts";
import { errorMessage, type SendOptions, StateEvents, type Transport, TransportError } from "./transport.ts";

export interface PluginLinkOptions {
  host: string;
  /** 0: any free port (`address()` says which). */
  port: number;
  token: string;
  /** Per request, unless the caller says otherwise. */
  timeoutMs?: number;
  /** How long a new connection has to say hello. */
  helloTimeoutMs?: number;
  /** Silence after which the link pings, and after twice which it drops the plugin. */
  idleMs?: number;
  /** How often the token may be tried (default HELLO_LIMITS); tests shorten the waits. */
  helloLimits?: Partial<HelloLimits>;
  clock?: Clock;
  logger?: Logger;
}

/** A line from an authenticated plugin may be this long (an exec's output); a longer one is dropped. */
export const MAX_LINE_BYTES = 1024 * 1024;
const TIMEOUT = Symbol("timeout");

/** The plugin refused a request (`"ok": false`): its own words, e.g. "no such player". */
export class PluginRefused extends Error {
  override name = "PluginRefused";
}

export class PluginLink implements Transport, StructuredConsole {
  readonly events: ReadonlySet<BridgeEventType> = new Set<BridgeEventType>([
    "player_connect",
    "player_disconnect",
    "player_spawn",
    "player_death",
    "chat_command",
    "group_change",
  ]);
  #o: Required<Omit<PluginLinkOptions, "logger" | "helloLimits">>;
  #log: Logger;
  /** Connections before their hello: who is let in, and what a failed hello costs. */
  #gate: HelloGate;
  #state = new StateEvents();
  #listeners = new Set<(e: StructuredEvent) => void>();
  #server?: net.Server;
  #listening?: Promise<void>;
  #active?: Conn;
  /** Callers waiting for a plugin to connect. */
  #waiters = new Set<{ resolve(c: Conn): void; reject(e: Error): void }>();
  /** The last connection's refused hello: what a caller waiting for a plugin is told. */
  #authFailed?: TransportError;
  #nextId = 1;
  #closed = false;
  #keepalive?: AbortController;

  constructor(opts: PluginLinkOptions) {
    this.#o = { timeoutMs: 10_000, helloTimeoutMs: 5_000, idleMs: 30_000, clock: systemClock, ...opts };
    this.#log = (opts.logger ?? silentLogger).withTag("plugin");
    this.#gate = new HelloGate({
      token: opts.token,
      clock: this.#o.clock,
      log: this.#log,
      limits: opts.helloLimits,
      onWrongToken: (err) => {
        this.#authFailed = err;
        for (const w of this.#waiters) w.reject(err);
      },
    });
  }

  /** host:port as configured (the bound port once listening, when 0 was asked). */
  get target(): string {
    const a = this.address();
    return a ? `${formatHost(a.host)}:${a.port}` : `${formatHost(this.#o.host)}:${this.#o.port}`;
  }

  address(): { host: string; port: number } | undefined {
    const a = this.#server?.address();
    return a && typeof a === "object" ? { host: a.address, port: a.port } : undefined;
  }

  on(_event: "state", fn: (state: "connecting" | "connected" | "closed", error?: Error) => void): () => void {
    return this.#state.on(fn);
  }

  onEvent(fn: (e: StructuredEvent) => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  /** Binds the address (once); rejects with one line when it can't. */
  start(): Promise<void> {
    if (this.#closed) return Promise.reject(this.#error("closed", "the plugin link is closed"));
    this.#listening ??= new Promise<void>((resolve, reject) => {
      const server = net.createServer((socket) => this.#accept(socket));
      this.#server = server;
      server.once("error", (e: NodeJS.ErrnoException) => {
        const why =
          e.code === "EADDRINUSE" ? "the address is in use (another hub-agent, or another program)" : e.message;
        reject(new TransportError("disconnected", `could not listen for the plugin on ${this.target}: ${why}`));
      });
      server.listen({ host: this.#o.host, port: this.#o.port, exclusive: true }, () => {
        server.on("error", (e) => this.#log.warn(`plugin listener: ${errorMessage(e)}`));
        this.#log.info(`waiting for the game's plugin on ${this.target}`);
        this.#state.emit("connecting", new Error(`no plugin has connected to ${this.target} yet`));
        this.#keepaliveLoop();
        resolve();
      });
    });
    return this.#listening;
  }

  // ── Transport: a console command is an `exec` request ──────────────────────

  async send(command: string, opts?: SendOptions): Promise<string> {
    if (command.includes("\0")) throw this.#error("invalid", "a command can't contain a NUL byte");
    return parseOutput(await this.#request("exec", { cmd: command }, opts?.timeoutMs));
  }

  // ── StructuredConsole ─────────────────────────────────────────────────────

  async players(opts?: { timeoutMs?: number }): Promise<PlayerList> {
    const r = parsePlayers(await this.#request("players", {}, opts?.timeoutMs));
    return {
      players: r.players.map((p) => ({ id: p.id, name: p.name, ...(p.slot ? { slot: p.slot } : {}) })),
      ...(r.max !== undefined ? { maxPlayers: r.max } : {}),
      ...(r.map ? { map: r.map } : {}),
    };
  }

  async kick(player: PlayerRef, reason: string): Promise<void> {
    await this.#request("kick", { p: player.id, ...slotOf(player), reason });
  }

  async message(player: PlayerRef | null, text: string): Promise<void> {
    await this.#request("message", { ...(player ? { p: player.id, ...slotOf(player) } : {}), text });
  }

  async setGroup(player: PlayerRef, group: string, op: "add" | "remove", seconds?: number): Promise<void> {
    const time = seconds !== undefined ? { seconds: Math.max(1, Math.ceil(seconds)) } : {};
    await this.#request("group", { p: player.id, ...slotOf(player), group, action: op, ...time });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#keepalive?.abort();
    const closed = this.#error("closed", "the plugin link was closed");
    for (const w of this.#waiters) w.reject(closed);
    this.#waiters.clear();
    for (const c of [...this.#gate.pending, ...(this.#active ? [this.#active] : [])]) drop(c, closed);
    const server = this.#server;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
    this.#gate.close();
    this.#state.emit("closed");
  }

  // ── Requests ──────────────────────────────────────────────────────────────

  async #request(op: Op, fields: Record<string, unknown>, timeoutMs = this.#o.timeoutMs): Promise<unknown> {
    if (this.#closed) throw this.#error("closed", "the plugin link is closed");
    const { clock } = this.#o;
    const stop = new AbortController();
    const timedOut = clock.sleep(timeoutMs, stop.signal).then(
      (): typeof TIMEOUT => TIMEOUT,
      (): typeof TIMEOUT => TIMEOUT,
    );
    try {
      await this.start();
      const conn = await this.#connection(timedOut, timeoutMs);
      const id = this.#nextId++;
      const reply = new Promise<unknown>((resolve, reject) => conn.pending.set(id, { resolve, reject }));
      conn.socket.write(encode({ t: "req", id, op, ...fields }));
      const r = await Promise.race([reply, timedOut]);
      if (r === TIMEOUT) {
        conn.pending.delete(id);
        throw this.#error("timeout", `the plugin did not answer "${op}" within ${timeoutMs} ms`, true);
      }
      return r;
    } finally {
      stop.abort();
    }
  }

  /** The authenticated plugin, waiting for one to connect (within the request's time). */
  async #connection(timedOut: Promise<typeof TIMEOUT>, timeoutMs: number): Promise<Conn> {
    if (this.#active) return this.#active;
    if (this.#authFailed) throw this.#authFailed;
    let waiter!: { resolve(c: Conn): void; reject(e: Error): void };
    const connected = new Promise<Conn>((resolve, reject) => {
      waiter = { resolve, reject };
      this.#waiters.add(waiter);
    });
    try {
      const c = await Promise.race([connected, timedOut]);
      if (c === TIMEOUT)
        throw this.#error("disconnected", `no plugin connected to ${this.target} within ${timeoutMs} ms`);
      return c;
    } finally {
      this.#waiters.delete(waiter);
    }
  }

  // ── Connections ───────────────────────────────────────────────────────────

  #accept(socket: net.Socket): void {
    const address = plainAddress(socket.remoteAddress ?? "?");
    const peer = `${formatHost(address)}:${socket.remotePort ?? "?"}`;
    if (this.#closed) return void socket.destroy();
    if (!this.#gate.admit(socket, address)) return;
    socket.setNoDelay(true);
    const conn = newConn(socket, peer, address, this.#o.clock.monotonic());
    this.#gate.pending.add(conn);
    const hello = this.#gate.deadline(conn, this.#o.helloTimeoutMs);
    this.#gate.challenge(conn);
    const lines = new BoundedLines(
      (line) => this.#line(conn, line),
      (bytes) => {
        const limit = conn.authed ? MAX_LINE_BYTES : MAX_HELLO_BYTES;
        const line = `dropped a line of over ${bytes} bytes from the plugin at ${peer} (the limit is ${limit})`;
        const answer = { error: "line_too_long", message: `lines are limited to ${limit} bytes` };
        if (!conn.authed) return this.#gate.failed(conn, line, answer);
        this.#log.warn(line);
        reply(conn, { t: "error", ...answer });
      },
      () => (conn.authed ? MAX_LINE_BYTES : MAX_HELLO_BYTES),
    );
    socket.on("data", (chunk: Buffer) => {
      conn.lastHeard = this.#o.clock.monotonic();
      lines.push(chunk);
    });
    socket.on("error", () => {}); // "close" follows and says it
    socket.on("close", () => {
      hello.abort();
      this.#closedConn(conn);
    });
  }

  #line(conn: Conn, line: string): void {
    if (conn.dropped || conn.socket.destroyed) return;
    let m: PluginMessage;
    try {
      m = parseLine(line);
    } catch (e) {
      if (!(e instanceof BadLine)) throw e;
      const answer = { error: "bad_line", message: e.message };
      if (!conn.authed)
        return this.#gate.failed(conn, `a connection from ${conn.peer} sent a bad hello: ${e.message}: closed`, answer);
      this.#log.warn(`ignored a line from the plugin at ${conn.peer}: ${e.message}`, { line: line.slice(0, 120) });
      reply(conn, { t: "error", ...answer });
      return;
    }
    if (!conn.authed) return this.#hello(conn, m);
    switch (m.t) {
      case "hello":
        reply(conn, { t: "error", error: "bad_line", message: "already said hello" });
        return;
      case "event":
        this.#emit(m.event);
        return;
      case "res": {
        const waiting = conn.pending.get(m.id);
        if (!waiting) {
          this.#log.warn(`the plugin answered request ${m.id}, which is not waiting (late, or never asked)`);
          return;
        }
        conn.pending.delete(m.id);
        if (m.ok) waiting.resolve(m.r);
        else waiting.reject(new PluginRefused(`the plugin refused: ${m.err}`));
        return;
      }
      case "ping":
        reply(conn, { t: "pong" });
        return;
      case "pong":
        return;
      case "unknown":
        this.#log.debug(`ignored ${m.what} from the plugin (a newer protocol?)`);
        return;
    }
  }

  #hello(conn: Conn, m: PluginMessage): void {
    if (!this.#gate.hello(conn, m)) return;
    this.#authFailed = undefined;
    const old = this.#active;
    this.#active = conn;
    if (old) {
      this.#log.info(`the plugin at ${old.peer} is replaced by a new connection from ${conn.peer}`);
      reply(old, { t: "error", error: "replaced", message: "a newer connection took over" });
      drop(old, this.#error("disconnected", "the plugin reconnected while the request was in flight", true));
    }
    reply(conn, this.#gate.welcome(conn, m));
    const what = [m.game, m.software].filter(Boolean).join(", ");
    this.#log.info(`the plugin connected from ${conn.peer}${what ? ` (${what})` : ""}`);
    this.#state.emit("connected");
    for (const w of this.#waiters) w.resolve(conn);
  }

  #closedConn(conn: Conn): void {
    this.#gate.pending.delete(conn);
    const lost = this.#error("disconnected", `the plugin at ${conn.peer} disconnected`, true);
    for (const p of conn.pending.values()) p.reject(lost);
    conn.pending.clear();
    if (this.#active !== conn) return;
    this.#active = undefined;
    if (this.#closed) return;
    this.#log.warn(`the plugin at ${conn.peer} disconnected; waiting for it on ${this.target}`);
    this.#state.emit("connecting", new Error(`the plugin disconnected from ${this.target}`));
  }

  /** Pings a quiet plugin; one silent for twice the idle time is gone (a half-open socket never says so). */
  async #keepaliveLoop(): Promise<void> {
    const stop = (this.#keepalive = new AbortController());
    const { clock, idleMs } = this.#o;
    for (;;) {
      try {
        await clock.sleep(idleMs / 2, stop.signal);
      } catch {
        return;
      }
      const conn = this.#active;
      if (!conn) continue;
      const quiet = clock.monotonic() - conn.lastHeard;
      if (quiet >= idleMs * 2) {
        this.#log.warn(`the plugin at ${conn.peer} was silent for ${Math.round(quiet / 1000)} s: dropped`);
        drop(conn);
        conn.socket.destroy();
      } else if (quiet >= idleMs) reply(conn, { t: "ping" });
    }
  }

  #emit(e: StructuredEvent): void {
    for (const fn of this.#listeners) {
      try {
        fn(e);
      } catch (err) {
        this.#log.error("plugin event listener threw", { error: errorMessage(err) });
      }
    }
  }

  #error(code: TransportError["code"], message: string, written = false): TransportError {
    return new TransportError(code, message, { written });
  }
}

function slotOf(player: PlayerRef): { slot?: string } {
  return player.slot ? { slot: player.slot } : {};
}
