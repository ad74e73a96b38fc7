/**
 * Rust's WebRCON (docs/game-consoles.md §2.6): a WebSocket to `ws://host:port/<password>`; a request is
 * `{"Identifier", "Message", "Name"}`, its reply a message with the same Identifier. Every console line is also
 * broadcast to every client with Identifier 0 (or -1): that broadcast is the event stream, so this transport is a
 * line source too. Chat arrives as `Type: "Chat"` with a JSON message, turned into the preset's `[CHAT]` line from
 * its fields (a nick can't forge the id). Replies are correlated, so commands need not wait for each other.
 */
import { type Clock, systemClock } from "../../clock.ts";
import { type Logger, silentLogger } from "../../log.ts";
import { cleanLine, type LineSource, type OnLine } from "../sources/lines.ts";
import {
  errorMessage,
  type SendOptions,
  StateEvents,
  type Transport,
  TransportError,
  type TransportState,
} from "./transport.ts";

export interface WebRconOptions {
  host: string;
  port: number;
  password: string;
  /** Default per-command timeout (connecting and the reply). */
  timeoutMs?: number;
  /** Reconnect delays while the event stream is wanted. */
  backoff?: { initialMs?: number; maxMs?: number };
  clock?: Clock;
  logger?: Logger;
}

/** The largest message read: a `playerlist` of a full server is a few hundred KB. */
const MAX_MESSAGE_CHARS = 4 * 1024 * 1024;

interface Pending {
  resolve(reply: string): void;
  reject(e: TransportError): void;
}

export class WebRcon implements Transport, LineSource {
  readonly target: string;
  #o: WebRconOptions & { timeoutMs: number; clock: Clock };
  #log: Logger;
  #events = new StateEvents();
  #socket?: Promise<WebSocket>;
  #pending = new Map<number, Pending>();
  #nextId = 1000;
  #onLine?: OnLine;
  #closed = false;
  #retry?: AbortController;

  constructor(opts: WebRconOptions) {
    this.target = `${opts.host}:${opts.port}`;
    this.#o = { timeoutMs: 10_000, clock: systemClock, ...opts };
    this.#log = (opts.logger ?? silentLogger).withTag("webrcon");
  }

  get state(): TransportState {
    return this.#events.state;
  }

  on(_event: "state", fn: (state: TransportState, error?: Error) => void): () => void {
    return this.#events.on(fn);
  }

  /** The event stream: broadcast lines from now on; reconnects with backoff while started. */
  async start(onLine: OnLine): Promise<void> {
    this.#onLine = onLine;
    this.#connect().catch(() => this.#reconnectLater());
  }

  async stop(): Promise<void> {
    await this.close();
  }

  send(command: string, opts?: SendOptions): Promise<string> {
    if (this.#closed) return Promise.reject(this.#error("closed", "transport closed"));
    if (/[\0\r\n]/.test(command))
      return Promise.reject(this.#error("invalid", "a console command can't contain NUL or line breaks"));
    const timeoutMs = opts?.timeoutMs ?? this.#o.timeoutMs;
    const id = this.#nextId++;
    let written = false;
    const timer = new AbortController();
    return new Promise<string>((resolve, reject) => {
      const fail = (e: TransportError) => {
        this.#pending.delete(id);
        timer.abort();
        reject(written && !e.written ? new TransportError(e.code, e.message, { cause: e, written: true }) : e);
      };
      this.#o.clock.sleep(timeoutMs, timer.signal).then(
        () => fail(this.#error("timeout", `no reply to "${command.split(" ", 1)[0]}" within ${timeoutMs} ms`)),
        () => {},
      );
      this.#pending.set(id, {
        resolve: (reply) => {
          this.#pending.delete(id);
          timer.abort();
          resolve(reply);
        },
        reject: fail,
      });
      this.#connect().then(
        (ws) => {
          if (!this.#pending.has(id)) return; // timed out or closed while connecting
          written = true;
          ws.send(JSON.stringify({ Identifier: id, Message: command, Name: "hub-agent" }));
        },
        (e: unknown) => fail(e instanceof TransportError ? e : this.#error("disconnected", errorMessage(e))),
      );
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#retry?.abort();
    for (const p of this.#pending.values()) p.reject(this.#error("closed", "transport closed"));
    const ws = await this.#socket?.catch(() => undefined);
    ws?.close();
    this.#events.emit("closed");
  }

  #error(code: TransportError["code"], message: string): TransportError {
    return new TransportError(code, `WebRCON ${this.target}: ${message}`);
  }

  /** The open socket, opening one if needed (one attempt; callers and the reconnect loop decide about more). */
  #connect(): Promise<WebSocket> {
    if (this.#closed) return Promise.reject(this.#error("closed", "transport closed"));
    this.#socket ??= this.#open().catch((e: unknown) => {
      this.#socket = undefined;
      throw e;
    });
    return this.#socket;
  }

  #open(): Promise<WebSocket> {
    const { host, port, password } = this.#o;
    this.#events.emit("connecting");
    return new Promise<WebSocket>((resolve, reject) => {
      const ws = new WebSocket(
        `ws://${host.includes(":") ? `[${host}]` : host}:${port}/${encodeURIComponent(password)}`,
      );
      let opened = false;
      ws.onopen = () => {
        opened = true;
        this.#events.emit("connected");
        resolve(ws);
      };
      ws.onmessage = (m) => this.#message(m.data);
      ws.onclose = () => {
        if (!opened) {
          void this.#refusal().then((e) => {
            this.#events.emit("connecting", e);
            reject(e);
          });
          return;
        }
        if (this.#socket) this.#socket = undefined;
        // A command in flight may have run: its reply is lost with the connection.
        for (const p of this.#pending.values()) p.reject(this.#error("disconnected", "connection lost"));
        if (this.#closed) return;
        this.#events.emit("connecting", this.#error("disconnected", "connection lost"));
        this.#reconnectLater();
      };
    });
  }

  /** Why a handshake failed: WebRCON refuses a wrong password at the upgrade, which only a plain request can see. */
  async #refusal(): Promise<TransportError> {
    const { host, port, password } = this.#o;
    try {
      const res = await fetch(
        `http://${host.includes(":") ? `[${host}]` : host}:${port}/${encodeURIComponent(password)}`,
        {
          signal: AbortSignal.timeout(2000),
        },
      );
      await res.body?.cancel();
      if (res.status === 401 || res.status === 403) {
        const e = this.#error("auth", "the server refused the password: the configured rcon.password is wrong");
        this.#log.error(e.message);
        return e;
      }
      return this.#error("disconnected", `the WebSocket handshake failed (HTTP ${res.status})`);
    } catch (e) {
      return this.#error("disconnected", `not connected: ${errorMessage(e)}`);
    }
  }

  #reconnectLater(): void {
    if (this.#closed || !this.#onLine || this.#retry) return;
    const retry = (this.#retry = new AbortController());
    const { initialMs = 1000, maxMs = 30_000 } = this.#o.backoff ?? {};
    void (async () => {
      for (let delay = initialMs; !retry.signal.aborted; delay = Math.min(delay * 2, maxMs)) {
        try {
          await this.#o.clock.sleep(delay, retry.signal);
          await this.#connect();
          break;
        } catch {
          // the next attempt waits longer
        }
      }
      if (this.#retry === retry) this.#retry = undefined;
    })();
  }

  #message(data: unknown): void {
    if (typeof data !== "string" || data.length > MAX_MESSAGE_CHARS) return;
    let m: { Identifier?: unknown; Message?: unknown; Type?: unknown };
    try {
      m = JSON.parse(data) as typeof m;
    } catch {
      return; // one bad message never ends the stream
    }
    const id = typeof m.Identifier === "number" ? m.Identifier : 0;
    const text = typeof m.Message === "string" ? m.Message : "";
    const pending = id > 0 ? this.#pending.get(id) : undefined;
    if (pending) return pending.resolve(text);
    if (id > 0) return; // the reply of a command that timed out
    if (m.Type === "Chat") return this.#chat(text);
    for (const line of text.split(/\r?\n/)) {
      // Chat comes as its own message; its console echo would be a second, forgeable copy.
      if (line && !line.startsWith("[CHAT] ")) this.#onLine?.(cleanLine(line), "log");
    }
  }

  /** `{Channel, Message, UserId, Username}` → `[CHAT] <name>[<id>] : <text>`, with nothing in the name to forge. */
  #chat(json: string): void {
    let c: { Message?: unknown; UserId?: unknown; Username?: unknown };
    try {
      c = JSON.parse(json) as typeof c;
    } catch {
      return;
    }
    const id = String(c.UserId ?? "");
    if (!/^\d{17}$/.test(id)) return;
    const name = String(c.Username ?? "").replace(/[[\]\r\n]/g, "");
    const text = String(c.Message ?? "").replace(/[\r\n]+/g, " ");
    this.#onLine?.(cleanLine(`[CHAT] ${name}[${id}] : ${text}`), "log");
  }
}
