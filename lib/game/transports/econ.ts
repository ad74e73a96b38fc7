/**
 * Teeworlds / DDNet econ (docs/game-consoles.md §2.7): a telnet-like TCP console. The server prompts
 * `Enter password:`, answers a line with `Authentication successful…` or `Wrong password N/3.` (three wrong ones
 * ban the address for ec_bantime), then streams its console, each line followed by NULs, in one of two forms:
 * Teeworlds 0.7 `[hh:mm:ss][category]: text`, DDNet `yyyy-mm-dd hh:mm:ss I category: text`. Both become
 * `[category]: text` here, for replies and events alike, so a preset anchors its patterns at the category.
 * Nothing correlates a reply with its command, so commands run one at a time, each followed by `echo <marker>`:
 * the reply is every line up to the console's echo of the marker (`[Console]`, DDNet `[console]`; a player's chat
 * is `[chat]`, so it can't end a reply). After a command timed out, lines go to no reply until its marker has come:
 * the rest of its output is never taken for the next command's. The stream is the event source as well.
 */
import * as net from "node:net";
import { type Clock, systemClock } from "../../clock.ts";
import { type Logger, silentLogger } from "../../log.ts";
import { type LineSource, LineSplitter, type OnLine } from "../sources/lines.ts";
import { CommandQueue, type QueuedCommand } from "./command-queue.ts";
import {
  errorMessage,
  MAX_REPLY_CHARS,
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

/**
 * The longest command line econ reads, in bytes: both servers read into a 1,400-byte buffer that must hold a whole
 * line and its line break, and drop the connection ("too weak connection (out of buffer)") on a longer one
 * (measured on teeworlds-server 0.7.5 and DDNet-Server 16.4).
 */
export const MAX_COMMAND_BYTES = 1398;

/** Teeworlds: `[time][category]: text` (0.7.5 prints hh:mm:ss, 0.6 a hex timestamp). */
const TEEWORLDS_LINE = /^\[[^\]]*\]\[([^\]]+)\]: ?(.*)$/;
/** DDNet: `yyyy-mm-dd hh:mm:ss <level letter> category: text`. */
const DDNET_LINE = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [A-Z] ([^\s:]+): ?(.*)$/;

/** Which server's form a console line has. */
export type EconForm = "teeworlds" | "ddnet";

export interface EconLine {
  category: string;
  text: string;
  form: EconForm;
}

/** A console line as econ streams it, in either server's form; undefined for anything else. */
export function parseEconLine(line: string): EconLine | undefined {
  const t = TEEWORLDS_LINE.exec(line);
  const m = t ?? DDNET_LINE.exec(line);
  return m ? { category: m[1]!, text: m[2]!, form: t ? "teeworlds" : "ddnet" } : undefined;
}

/** What hub-agent makes of a line: `[category]: text`, as both servers' console lines look to a preset. */
export const econText = ({ category, text }: Pick<EconLine, "category" | "text">) => `[${category}]: ${text}`;

/** The console's own output: `echo` prints here (Teeworlds `Console`, DDNet `console`). */
const isConsole = (category: string) => category.toLowerCase() === "console";

/** econ's bookkeeping, never part of a reply nor an event: the echo of a command (`cid=0 cmd='…'`), logins. */
const isBookkeeping = ({ category, text }: EconLine) =>
  (category === "server" && text.startsWith("cid=")) || category === "econ";

interface Connection {
  socket: net.Socket;
  /** Lines as they arrive, to whoever waits for a reply; undefined when nobody does. */
  reply?: (line: EconLine) => void;
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
  #form?: EconForm;

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

  /** The form of the server's console lines, once one arrived: which server this is (doctor's preset check). */
  get form(): EconForm | undefined {
    return this.#form;
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
    const bytes = Buffer.byteLength(command);
    if (bytes > MAX_COMMAND_BYTES)
      return Promise.reject(
        this.#error(
          "invalid",
          `a console command of ${bytes} bytes: econ reads lines of at most ${MAX_COMMAND_BYTES} and drops the connection on a longer one`,
        ),
      );
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
      let chars = 0;
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
      conn.reply = (line) => {
        if (isConsole(line.category) && line.text === marker) return done(() => resolve(lines.join("\n")));
        if (isBookkeeping(line)) return;
        const text = econText(line);
        chars += text.length + 1;
        lines.push(text);
        if (chars <= MAX_REPLY_CHARS) return;
        // The rest of it, up to the marker, is no later command's reply either.
        conn.behind = marker;
        done(() =>
          reject(
            this.#error(
              "protocol",
              `the reply to "${job.command.split(" ", 1)[0]}" passed ${MAX_REPLY_CHARS} characters`,
            ),
          ),
        );
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
      let closedWith: (e: TransportError) => void = () => {};
      const conn: Connection = { socket, closed: new Promise((r) => (closedWith = r)) };
      let failed = false;
      const fail = (e: TransportError) => {
        // A reset brings "error", then "close": a second turn would forget the connection a command opened
        // in between, which would then stay open and deliver every line twice.
        if (failed) return;
        failed = true;
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
      const lines = new LineSplitter((line) => {
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
      });
      socket.on("data", (chunk: Buffer) => lines.push(chunk));
    });
  }

  #line(conn: Connection, raw: string): void {
    const line = parseEconLine(raw);
    if (!line) return;
    this.#form = line.form;
    if (conn.behind === undefined) conn.reply?.(line);
    else if (isConsole(line.category) && line.text === conn.behind) conn.behind = undefined;
    // Our own commands and markers are not game events.
    if (isConsole(line.category) || isBookkeeping(line)) return;
    this.#onLine?.(econText(line), "log");
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
