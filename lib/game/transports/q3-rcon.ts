import { Buffer } from "node:buffer";
import * as dgram from "node:dgram";
import { isIPv6 } from "node:net";
import { type Clock, systemClock } from "../../clock.ts";
import { type Logger, silentLogger } from "../../log.ts";
import { CommandQueue, type QueuedCommand } from "./command-queue.ts";
import { type SendOptions, StateEvents, type Transport, TransportError, type TransportState } from "./transport.ts";

export interface Q3RconOptions {
  host: string;
  port: number;
  password: string;
  /** Default per-command timeout (queue + reply). */
  timeoutMs?: number;
  /** The reply is complete when no datagram arrived for this long (the protocol has no end marker). */
  quietMs?: number;
  logger?: Logger;
  clock?: Clock;
}

const OOB = Buffer.from([0xff, 0xff, 0xff, 0xff]);
const PRINT = Buffer.concat([OOB, Buffer.from("print\n")]);
/** ioq3 reads the request with MSG_ReadStringLine into a MAX_STRING_CHARS (1024) buffer. */
const MAX_REQUEST_BYTES = 1023;

/**
 * Quake 3 / ioquake3 rcon over UDP: `\xff\xff\xff\xffrcon <password> <command>`, answered by one or more
 * `\xff\xff\xff\xffprint\n<text>` datagrams (the server flushes its ~1 KB redirect buffer as it fills).
 * Nothing correlates replies with requests, so commands run one at a time and a reply is whatever arrives
 * from the server's port until a quiet period. A reply arriving after its command timed out could be taken for
 * the next command's; ioq3 answers within one server frame, so only an unreasonably short timeout risks it.
 * There is no connection: "connected" means the local socket is bound.
 */
export class Q3Rcon implements Transport {
  readonly target: string;
  #o: Required<Q3RconOptions>;
  #log: Logger;
  #events = new StateEvents();
  #queue: CommandQueue;
  #socket?: Promise<dgram.Socket>;
  #onDatagram?: (text: Buffer) => void;
  #closed = false;

  constructor(opts: Q3RconOptions) {
    if (/\s/.test(opts.password) || opts.password === "") {
      // ioq3 takes the password as the first space-delimited word after "rcon".
      throw new TransportError("invalid", "Quake 3 rcon passwords must be non-empty and contain no whitespace");
    }
    this.target = `${opts.host}:${opts.port}`;
    this.#o = {
      timeoutMs: 10_000,
      quietMs: 250,
      logger: silentLogger,
      clock: systemClock,
      ...opts,
    };
    this.#log = this.#o.logger.withTag("q3rcon");
    this.#queue = new CommandQueue(
      this.#o.clock,
      (job) => this.#run(job),
      (cmd, ms) =>
        new TransportError("timeout", `rcon ${this.target}: no reply to "${cmd.split(" ", 1)[0]}" within ${ms} ms`),
    );
  }

  get state(): TransportState {
    return this.#events.state;
  }

  send(command: string, opts?: SendOptions): Promise<string> {
    if (this.#closed) return Promise.reject(new TransportError("closed", `rcon ${this.target}: transport closed`));
    if (/[\0\n\r]/.test(command)) {
      // A newline would end the request line early on the server, and the rest would be lost.
      return Promise.reject(new TransportError("invalid", "Quake 3 rcon commands can't contain NUL or line breaks"));
    }
    const bytes = OOB.length + Buffer.byteLength(`rcon ${this.#o.password} ${command}`);
    if (bytes - OOB.length > MAX_REQUEST_BYTES) {
      return Promise.reject(
        new TransportError("invalid", `rcon request is ${bytes - OOB.length} bytes; ioq3 reads ${MAX_REQUEST_BYTES}`),
      );
    }
    return this.#queue.push({ command }, opts?.timeoutMs ?? this.#o.timeoutMs);
  }

  on(_event: "state", fn: (state: TransportState, error?: Error) => void): () => void {
    return this.#events.on(fn);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#queue.abortAll(new TransportError("closed", `rcon ${this.target}: transport closed`));
    const socket = await this.#socket?.catch(() => undefined);
    if (socket) await new Promise<void>((resolve) => socket.close(() => resolve()));
    this.#events.emit("closed");
  }

  async #run(job: QueuedCommand): Promise<string> {
    const socket = await this.#open();
    const reply = await new Promise<Buffer>((resolve, reject) => {
      const parts: Buffer[] = [];
      let quiet: AbortController | undefined;
      const finish = (fn: () => void) => {
        this.#onDatagram = undefined;
        quiet?.abort();
        job.signal.removeEventListener("abort", onAbort);
        fn();
      };
      const onAbort = () => finish(() => reject(job.signal.reason));
      if (job.signal.aborted) return onAbort();
      job.signal.addEventListener("abort", onAbort, { once: true });
      this.#onDatagram = (text) => {
        parts.push(text);
        quiet?.abort();
        const q = (quiet = new AbortController());
        this.#o.clock.sleep(this.#o.quietMs, q.signal).then(
          () => finish(() => resolve(Buffer.concat(parts))),
          () => {},
        );
      };
      job.written = true;
      socket.send(
        Buffer.concat([OOB, Buffer.from(`rcon ${this.#o.password} ${job.command}`)]),
        this.#o.port,
        this.#o.host,
        (e) => {
          if (e) finish(() => reject(new TransportError("disconnected", `rcon ${this.target}: ${e.message}`)));
        },
      );
    });
    const text = reply.toString("utf8");
    const verdict = text.trim();
    if (verdict === "Bad rconpassword.") {
      const e = new TransportError(
        "auth",
        `rcon ${this.target} rejected the password: the configured rconpassword is wrong`,
      );
      this.#log.error(e.message);
      throw e;
    }
    if (verdict === "No rconpassword set on the server.") {
      throw new TransportError("auth", `rcon ${this.target} has no rconpassword set, so it refuses all rcon commands`);
    }
    return text;
  }

  /** Binds the local UDP socket once; datagrams from anyone but the server's port are ignored. */
  #open(): Promise<dgram.Socket> {
    this.#socket ??= new Promise((resolve, reject) => {
      this.#events.emit("connecting");
      const socket = dgram.createSocket(isIPv6(this.#o.host) ? "udp6" : "udp4");
      socket.on("message", (msg, rinfo) => {
        if (rinfo.port !== this.#o.port || !msg.subarray(0, PRINT.length).equals(PRINT)) return;
        this.#onDatagram?.(msg.subarray(PRINT.length));
      });
      socket.on("error", (e) => {
        this.#log.warn("rcon socket error", { target: this.target, error: e.message });
        this.#events.emit("closed", e);
        reject(e);
      });
      socket.bind(0, () => {
        this.#events.emit("connected");
        resolve(socket);
      });
    });
    return this.#socket;
  }
}
