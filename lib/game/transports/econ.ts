/**
 * Teeworlds / DDNet econ (docs/game-consoles.md §2.7): a telnet-like TCP console. The server prompts
 * `Enter password:`, answers a line with `Authentication successful…` or `Wrong password N/3.` (three wrong ones
 * ban the address for ec_bantime), then streams its console as lines `[hh:mm:ss][category]: text`, each followed
 * by NULs. Nothing correlates a reply with its command, so commands run one at a time, each followed by
 * `echo <marker>`: the reply is every line up to `[Console]: <marker>` (a player's chat is `[chat]`, so it can't
 * end a reply). After a command timed out, lines go to no reply until its marker has come: the rest of its output
 * is never taken for the next command's. The stream is the event source as well: lines go to the bridge as `[category]: text`.
 */
import * as net from "node:net";
import { type Clock, systemClock } from "../../clock.ts";
import { type Logger, silentLogger } from "../../log.ts";
import { cleanLine, type LineSource, type OnLine } from "../sources/lines.ts";
import { CommandQueue, type QueuedCommand } from "./command-queue.ts";
import {
  errorMessage,
  type SendOptions,
  StateEvents,
  type Transport,
  TransportError,
  type TransportState,
} from "./transport.ts";

export interface EconOptions {
  host: string;
  port: number;
  password: string;
  timeoutMs?: number;
  /** Reconnect delays while the event stream is wanted. */
  backoff?: { initialMs?: number; maxMs?: number };
  clock?: Clock;
  logger?: Logger;
}

/** A line longer than this is cut (the server's own lines are far shorter). */
const MAX_LINE = 64 * 1024;
const LINE = /^\[[^\]]*\]\[([^\]]+)\]: ?(.*)$/;

interface Connection {
  socket: net.Socket;
  /** Lines as they arrive, to whoever waits for a reply; undefined when nobody does. */
  reply?: (category: string, text: string) => void;
  /**
   * The marker of the last command whose reply was cut short (a timeout): until the server echoes it, what it prints
   * is still that command's, and no later command's reply.
   */
  behind?: string;
  closed: Promise<TransportError>;
}

export class Econ implements Transport, LineSource {
  readonly target: string;
  #o: EconOptions & { timeoutMs: number; clock: Clock };
  #log: Logger;
  #events = new StateEvents();
  #queue: CommandQueue;
  #conn?: Promise<Connection>;
  #onLine?: OnLine;
  #closed = false;
  #authFailed?: TransportError;
  #retry?: AbortController;

  constructor(opts: EconOptions) {
    this.target = `${opts.host}:${opts.port}`;
    this.#o = { timeoutMs: 10_000, clock: systemClock, ...opts };
    this.#log = (opts.logger ?? silentLogger).withTag("econ");
    this.#queue = new CommandQueue(
      this.#o.clock,
      (job) => this.#run(job),
      (cmd, ms) => this.#error("timeout", `no reply to "${cmd.split(" ", 1)[0]}" within ${ms} ms`),
    );
  }

  get state(): TransportState {
    return this.#events.state;
  }

  on(_event: "state", fn: (state: TransportState, error?: Error) => void): () => void {
    return this.#events.on(fn);
  }

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
    return this.#queue.push({ command }, opts?.timeoutMs ?? this.#o.timeoutMs);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#retry?.abort();
    this.#queue.abortAll(this.#error("closed", "transport closed"));
    const conn = await this.#conn?.catch(() => undefined);
    conn?.socket.destroy();
    this.#events.emit("closed");
  }

  #error(code: TransportError["code"], message: string): TransportError {
    return new TransportError(code, `econ ${this.target}: ${message}`);
  }

  async #run(job: QueuedCommand): Promise<string> {
    const conn = await this.#connect();
    const marker = `hub-agent-${crypto.randomUUID()}`;
    return new Promise<string>((resolve, reject) => {
      const lines: string[] = [];
      const done = (fn: () => void) => {
        conn.reply = undefined;
        job.signal.removeEventListener("abort", onAbort);
        fn();
      };
      const onAbort = () => {
        if (job.written) conn.behind = marker;
        done(() => reject(job.signal.reason));
      };
      if (job.signal.aborted) return onAbort();
      job.signal.addEventListener("abort", onAbort, { once: true });
      void conn.closed.then((e) => done(() => reject(e)));
      conn.reply = (category, text) => {
        if (category === "Console" && text === marker) done(() => resolve(lines.join("\n")));
        // Not the reply: the echo of our own command, and econ's bookkeeping (`cid=0 authed` after the login).
        else if (!(category === "server" && text.startsWith("cid=")) && category !== "econ") lines.push(text);
      };
      job.written = true;
      conn.socket.write(`${job.command}\necho ${marker}\n`);
    });
  }

  #connect(): Promise<Connection> {
    if (this.#closed) return Promise.reject(this.#error("closed", "transport closed"));
    // Three wrong passwords ban the address: after one, nothing is tried again until the operator fixes it.
    if (this.#authFailed) return Promise.reject(this.#authFailed);
    this.#conn ??= this.#open().catch((e: unknown) => {
      this.#conn = undefined;
      throw e;
    });
    return this.#conn;
  }

  #open(): Promise<Connection> {
    this.#events.emit("connecting");
    return new Promise<Connection>((resolve, reject) => {
      const socket = net.connect({ host: this.#o.host, port: this.#o.port });
      let authed = false;
      let partial = "";
      let closedWith: (e: TransportError) => void = () => {};
      const conn: Connection = { socket, closed: new Promise((r) => (closedWith = r)) };
      const fail = (e: TransportError) => {
        socket.destroy();
        if (!authed) {
          this.#events.emit("connecting", e);
          return reject(e);
        }
        closedWith(e);
        if (this.#conn) this.#conn = undefined;
        if (this.#closed) return;
        this.#events.emit("connecting", e);
        this.#reconnectLater();
      };
      socket.setNoDelay(true);
      socket.on("error", (e) => fail(this.#error("disconnected", e.message)));
      socket.on("close", () => fail(this.#error("disconnected", "the server closed the connection")));
      socket.on("data", (chunk: Buffer) => {
        const text = partial + chunk.toString("utf8");
        const parts = text.split(/\n/);
        partial = (parts.pop() ?? "").slice(-MAX_LINE);
        for (const raw of parts) {
          const line = raw.replaceAll("\0", "").replace(/\r$/, "");
          if (!line) continue;
          if (authed) this.#line(conn, line);
          else if (line === "Enter password:") socket.write(`${this.#o.password}\n`);
          else if (line.startsWith("Authentication successful")) {
            authed = true;
            this.#events.emit("connected");
            resolve(conn);
          } else if (line.startsWith("Wrong password")) {
            const e = this.#error(
              "auth",
              `the server refused the password (${line}): the configured rcon.password is wrong`,
            );
            this.#authFailed = e;
            this.#log.error(e.message);
            fail(e);
          }
        }
      });
    });
  }

  #line(conn: Connection, line: string): void {
    const m = LINE.exec(line);
    if (!m) return;
    const [, category = "", text = ""] = m;
    if (conn.behind === undefined) conn.reply?.(category, text);
    else if (category === "Console" && text === conn.behind) conn.behind = undefined;
    // Our own commands and markers are not game events.
    if (category === "Console" || (category === "server" && text.startsWith("cid="))) return;
    this.#onLine?.(cleanLine(`[${category}]: ${text}`), "log");
  }

  #reconnectLater(): void {
    if (this.#closed || !this.#onLine || this.#retry || this.#authFailed) return;
    const retry = (this.#retry = new AbortController());
    const { initialMs = 1000, maxMs = 30_000 } = this.#o.backoff ?? {};
    void (async () => {
      for (let delay = initialMs; !retry.signal.aborted && !this.#authFailed; delay = Math.min(delay * 2, maxMs)) {
        try {
          await this.#o.clock.sleep(delay, retry.signal);
          await this.#connect();
          break;
        } catch (e) {
          this.#log.debug(`reconnect failed: ${errorMessage(e)}`);
        }
      }
      if (this.#retry === retry) this.#retry = undefined;
    })();
  }
}
