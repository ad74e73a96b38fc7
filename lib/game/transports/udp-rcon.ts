/**
 * What the Quake-family rcon consoles over UDP share (Quake 3 and DarkPlaces; docs/game-consoles.md §2.2, §2.8):
 * one local socket, bound on first use; out-of-band datagrams (`FF FF FF FF` + text) to the server and back from
 * its port; commands one at a time, since nothing in a reply says which request it answers. A dialect says how a
 * command becomes datagrams and when its reply is complete. There is no connection: "connected" means the local
 * socket is bound.
 */
import { Buffer } from "node:buffer";
import * as dgram from "node:dgram";
import { isIPv6 } from "node:net";
import { type Clock, systemClock } from "../../clock.ts";
import { type Logger, silentLogger } from "../../log.ts";
import { CommandQueue, type QueuedCommand } from "./command-queue.ts";
import { type SendOptions, StateEvents, type Transport, TransportError, type TransportState } from "./transport.ts";

/** The out-of-band prefix of every connectionless datagram. */
export const OOB = Buffer.from([0xff, 0xff, 0xff, 0xff]);

export interface UdpRconOptions {
  host: string;
  port: number;
  /** Default per-command timeout (queue and reply): 10 s. */
  timeoutMs?: number;
  logger?: Logger;
  clock?: Clock;
}

/** One command's conversation with the server: what a dialect can do while its reply comes in. */
export interface Exchange {
  /** Sends one datagram (`OOB` + `payload`) to the server. */
  send(payload: Buffer): void;
  resolve(reply: string): void;
  reject(e: Error): void;
  /** Aborts when the exchange ends (settled, timed out, closed): timers a dialect arms stop with it. */
  ended: AbortSignal;
}

export abstract class UdpRcon implements Transport {
  readonly target: string;
  protected readonly clock: Clock;
  protected readonly log: Logger;
  #o: Required<UdpRconOptions>;
  #events = new StateEvents();
  #queue: CommandQueue;
  #socket?: Promise<dgram.Socket>;
  #onDatagram?: (payload: Buffer) => void;
  #closed = false;

  /** `tag` names the dialect in log lines. */
  constructor(opts: UdpRconOptions, tag: string) {
    const o = { timeoutMs: 10_000, logger: silentLogger, clock: systemClock, ...opts };
    this.#o = o;
    this.target = `${o.host}:${o.port}`;
    this.clock = o.clock;
    this.log = o.logger.withTag(tag);
    this.#queue = new CommandQueue(
      o.clock,
      (job) => this.run(job),
      (cmd, ms) =>
        new TransportError("timeout", `rcon ${this.target}: no reply to "${cmd.split(" ", 1)[0]}" within ${ms} ms`),
    );
  }

  /** Why `command` can't be sent in this dialect, or undefined. */
  protected abstract refuse(command: string): string | undefined;
  /** Runs one command (alone: commands are queued) and returns its reply. */
  protected abstract run(job: QueuedCommand): Promise<string>;

  get state(): TransportState {
    return this.#events.state;
  }

  send(command: string, opts?: SendOptions): Promise<string> {
    if (this.#closed) return Promise.reject(new TransportError("closed", `rcon ${this.target}: transport closed`));
    const why = this.refuse(command);
    if (why) return Promise.reject(new TransportError("invalid", why));
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

  /**
   * One command's conversation: `start` sends its first datagram(s); every datagram from the server (its payload,
   * after `OOB`) goes to `take` until one of them resolves or rejects, or the job is aborted.
   */
  protected async exchange(
    job: QueuedCommand,
    start: (x: Exchange) => void,
    take: (payload: Buffer, x: Exchange) => void,
  ): Promise<string> {
    const socket = await this.#open();
    return new Promise<string>((resolve, reject) => {
      const ended = new AbortController();
      const finish = (fn: () => void) => {
        if (ended.signal.aborted) return;
        this.#onDatagram = undefined;
        ended.abort();
        job.signal.removeEventListener("abort", onAbort);
        fn();
      };
      const onAbort = () => finish(() => reject(job.signal.reason));
      const x: Exchange = {
        send: (payload) =>
          socket.send(Buffer.concat([OOB, payload]), this.#o.port, this.#o.host, (e) => {
            if (e) finish(() => reject(new TransportError("disconnected", `rcon ${this.target}: ${e.message}`)));
          }),
        resolve: (reply) => finish(() => resolve(reply)),
        reject: (e) => finish(() => reject(e)),
        ended: ended.signal,
      };
      if (job.signal.aborted) return onAbort();
      job.signal.addEventListener("abort", onAbort, { once: true });
      this.#onDatagram = (payload) => take(payload, x);
      start(x);
    });
  }

  /** Binds the local UDP socket once; datagrams from anyone but the server's port are ignored. */
  #open(): Promise<dgram.Socket> {
    this.#socket ??= new Promise((resolve, reject) => {
      this.#events.emit("connecting");
      const socket = dgram.createSocket(isIPv6(this.#o.host) ? "udp6" : "udp4");
      socket.on("message", (msg, rinfo) => {
        if (rinfo.port !== this.#o.port || !msg.subarray(0, OOB.length).equals(OOB)) return;
        this.#onDatagram?.(msg.subarray(OOB.length));
      });
      socket.on("error", (e) => {
        this.log.warn("rcon socket error", { target: this.target, error: e.message });
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
