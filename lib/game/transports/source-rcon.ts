import { Buffer } from "node:buffer";
import { type Clock, systemClock } from "../../clock.ts";
import { type Logger, silentLogger } from "../../log.ts";
import { CommandQueue, type QueuedCommand } from "./command-queue.ts";
import { RconConnection, type ReplyEnd } from "./source-rcon-connection.ts";
import {
  errorMessage,
  type SendOptions,
  StateEvents,
  type Transport,
  TransportError,
  type TransportState,
} from "./transport.ts";

export type { ReplyEnd } from "./source-rcon-connection.ts";

/** `source`: srcds games (GMod, CS2, TF2, …). `minecraft`: Minecraft Java's RCON. */
export type SourceRconDialect = "source" | "minecraft";

export interface SourceRconOptions {
  host: string;
  port: number;
  password: string;
  dialect?: SourceRconDialect;
  /** Overrides the dialect's reply-end detection (see ReplyEnd). */
  end?: ReplyEnd;
  /** Default per-command timeout (queue + connect + reply). */
  timeoutMs?: number;
  /** Reconnect delays after a dropped connection or failed attempt: doubles from initialMs up to maxMs. */
  backoff?: { initialMs?: number; maxMs?: number };
  /** After a rejected password, sends fail at once for this long before one new attempt is allowed. */
  authRetryMs?: number;
  logger?: Logger;
  clock?: Clock;
}

/**
 * Largest command body in bytes. Valve caps a packet at 4096 (body 4086); vanilla Minecraft reads at most
 * 1460 bytes per packet (body 1446).
 */
export const MAX_COMMAND_BYTES: Record<SourceRconDialect, number> = { source: 4086, minecraft: 1446 };

/**
 * Source RCON client (TCP). Connects on the first send and keeps the connection, reconnecting with exponential
 * backoff when it drops. Commands run one at a time (Minecraft can't take more, and it keeps replies simple).
 *
 * A command in flight when the connection drops fails with a `disconnected` error and is NOT retried: it may
 * already have run (kick, give reward, add group), and running it twice is worse than reporting it. Commands
 * still queued are sent after the reconnect. A command that times out after being sent resets the
 * connection, so its late reply can't be taken for the next command's.
 *
 * States: "connecting" (with the last error while retrying), "connected", and "closed" only when it stopped
 * trying: close() was called, or the password was rejected (sends then fail at once until authRetryMs passed).
 */
export class SourceRcon implements Transport {
  readonly target: string;
  readonly dialect: SourceRconDialect;
  #o: Required<Omit<SourceRconOptions, "backoff" | "dialect">> & { backoff: { initialMs: number; maxMs: number } };
  #log: Logger;
  #events = new StateEvents();
  #queue: CommandQueue;
  #conn?: RconConnection;
  #loop?: Promise<void>;
  #wakers = new Set<() => void>();
  #lastError?: Error;
  #authFailure?: { error: TransportError; at: number };
  #closed = false;
  #stop = new AbortController();

  constructor(opts: SourceRconOptions) {
    this.dialect = opts.dialect ?? "source";
    this.target = `${opts.host}:${opts.port}`;
    this.#o = {
      host: opts.host,
      port: opts.port,
      password: opts.password,
      end: opts.end ?? (this.dialect === "minecraft" ? "fragment" : "terminator"),
      timeoutMs: opts.timeoutMs ?? 10_000,
      backoff: { initialMs: opts.backoff?.initialMs ?? 1000, maxMs: opts.backoff?.maxMs ?? 30_000 },
      authRetryMs: opts.authRetryMs ?? 5 * 60_000,
      logger: opts.logger ?? silentLogger,
      clock: opts.clock ?? systemClock,
    };
    this.#log = this.#o.logger.withTag("rcon");
    this.#queue = new CommandQueue(
      this.#o.clock,
      (job) => this.#run(job),
      (cmd, ms) => this.#timeoutError(cmd, ms),
    );
  }

  get state(): TransportState {
    return this.#events.state;
  }

  send(command: string, opts?: SendOptions): Promise<string> {
    if (this.#closed) return Promise.reject(closedError(this.target));
    if (command.includes("\0")) return Promise.reject(new TransportError("invalid", "RCON commands can't contain NUL"));
    const bytes = Buffer.byteLength(command, "utf8");
    const max = MAX_COMMAND_BYTES[this.dialect];
    if (bytes > max) {
      return Promise.reject(
        new TransportError("invalid", `RCON command is ${bytes} bytes; the ${this.dialect} protocol allows ${max}`),
      );
    }
    return this.#queue.push({ command }, opts?.timeoutMs ?? this.#o.timeoutMs);
  }

  /** Connects now instead of on the first send (for startup and the doctor check). */
  async connect(opts?: { timeoutMs?: number }): Promise<void> {
    const timer = new AbortController();
    const signal = AbortSignal.any([timer.signal, this.#stop.signal]);
    const ms = opts?.timeoutMs ?? this.#o.timeoutMs;
    this.#o.clock.sleep(ms, signal).then(
      () => timer.abort(this.#timeoutError("(connect)", ms)),
      () => {},
    );
    try {
      await this.#connection(signal);
    } finally {
      timer.abort();
    }
  }

  on(_event: "state", fn: (state: TransportState, error?: Error) => void): () => void {
    return this.#events.on(fn);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const e = closedError(this.target);
    this.#stop.abort(e);
    this.#queue.abortAll(e);
    const conn = this.#conn;
    this.#conn = undefined;
    this.#wake();
    await conn?.destroy(e);
    await this.#loop;
    this.#events.emit("closed");
  }

  async #run(job: QueuedCommand): Promise<string> {
    const conn = await this.#connection(job.signal);
    try {
      job.written = true;
      return await conn.exec(job.command, this.#o.end, job.signal);
    } catch (e) {
      if (job.signal.aborted && !this.#closed) {
        void conn.destroy(new TransportError("disconnected", `RCON ${this.target}: reset after a command timed out`));
      }
      throw e;
    }
  }

  /** Resolves with an authenticated connection, starting the connect loop if needed. */
  async #connection(signal: AbortSignal): Promise<RconConnection> {
    for (;;) {
      if (this.#closed) throw closedError(this.target);
      if (this.#conn) return this.#conn;
      if (this.#authFailure) {
        if (this.#o.clock.monotonic() - this.#authFailure.at < this.#o.authRetryMs) throw this.#authFailure.error;
        this.#authFailure = undefined;
      }
      this.#startLoop(0);
      await this.#changed(signal);
    }
  }

  #startLoop(delayMs: number): void {
    if (this.#loop || this.#closed) return;
    this.#loop = this.#connectLoop(delayMs).finally(() => {
      this.#loop = undefined;
      this.#wake();
    });
  }

  async #connectLoop(firstDelayMs: number): Promise<void> {
    const { clock, backoff } = this.#o;
    let delay = backoff.initialMs;
    try {
      if (firstDelayMs > 0) await clock.sleep(firstDelayMs, this.#stop.signal);
      while (!this.#closed) {
        this.#events.emit("connecting");
        try {
          const conn = await RconConnection.open({ ...this.#o, signal: this.#stop.signal });
          this.#conn = conn;
          this.#lastError = undefined;
          conn.onClose((e) => this.#lost(conn, e));
          this.#log.info("RCON connected", { target: this.target, dialect: this.dialect });
          this.#events.emit("connected");
          return;
        } catch (e) {
          if (this.#closed) return;
          const err = e instanceof Error ? e : new Error(String(e));
          this.#lastError = err;
          if (err instanceof TransportError && err.code === "auth") {
            this.#authFailure = { error: err, at: clock.monotonic() };
            this.#log.error(err.message, { target: this.target });
            this.#events.emit("closed", err);
            return;
          }
          this.#log.warn("RCON connection failed; retrying", {
            target: this.target,
            error: err.message,
            delayMs: delay,
          });
          this.#events.emit("connecting", err);
          await clock.sleep(delay, this.#stop.signal);
          delay = Math.min(delay * 2, backoff.maxMs);
        }
      }
    } catch {
      // only the stop signal lands here: close() was called
    }
  }

  #lost(conn: RconConnection, e: TransportError): void {
    if (this.#conn !== conn) return;
    this.#conn = undefined;
    this.#lastError = e;
    if (this.#closed) return;
    this.#log.warn("RCON connection lost; reconnecting", { target: this.target, error: e.message });
    this.#events.emit("connecting", e);
    this.#startLoop(this.#o.backoff.initialMs);
  }

  /** Waits until the connection state may have changed, or the signal aborts. */
  #changed(signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      const done = () => {
        this.#wakers.delete(done);
        signal.removeEventListener("abort", onAbort);
        resolve();
      };
      const onAbort = () => {
        this.#wakers.delete(done);
        reject(signal.reason);
      };
      this.#wakers.add(done);
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  #wake(): void {
    for (const fn of this.#wakers) fn();
  }

  #timeoutError(command: string, ms: number): TransportError {
    const what = command.split(" ", 1)[0];
    const why = this.#conn ? "" : ` (not connected${this.#lastError ? `: ${errorMessage(this.#lastError)}` : ""})`;
    return new TransportError("timeout", `RCON ${this.target}: "${what}" got no complete reply within ${ms} ms${why}`);
  }
}

function closedError(target: string): TransportError {
  return new TransportError("closed", `RCON ${target}: transport closed`);
}
