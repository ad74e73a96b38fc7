/**
 * What the Quake-family rcon consoles over UDP share (Quake 3 and DarkPlaces; docs/game-consoles.md §2.2, §2.8):
 * one local socket, opened on first use; out-of-band datagrams (`FF FF FF FF` + text) to the server and back;
 * commands one at a time, since nothing in a reply says which request it answers. A dialect says how a command
 * becomes datagrams and when its reply is complete.
 *
 * Replies only from the game: the server's name is resolved when the socket opens, and the socket is bound to a
 * loopback address when the server is on loopback and connected to the server's address and port, so the kernel
 * drops every datagram from anyone else. Where a runtime doesn't pass the connect on to the kernel (Deno), the same
 * check is made here. A datagram is read only while an exchange waits for one. "connected" means the socket is open.
 */
import { Buffer } from "node:buffer";
import * as dgram from "node:dgram";
import { lookup } from "node:dns/promises";
import { isIP, isIPv4, isIPv6 } from "node:net";
import { type Clock, systemClock } from "../../clock.ts";
import { type Logger, silentLogger } from "../../log.ts";
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

/** The out-of-band prefix of every connectionless datagram. */
export const OOB = Buffer.from([0xff, 0xff, 0xff, 0xff]);

export interface UdpRconOptions {
  host: string;
  port: number;
  /** Default per-command timeout (queue and reply): 10 s. */
  timeoutMs?: number;
  /** A command whose reply passes this many bytes fails (default MAX_REPLY_CHARS). */
  maxReplyBytes?: number;
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
  /** Where the last socket was connected: a name that resolves elsewhere later is said in the log. */
  #peer?: string;
  #onDatagram?: (payload: Buffer) => void;
  #closed = false;
  /** Datagrams from elsewhere that reached this process since the last warning, and when that was. */
  #strays = 0;
  #strayWarned?: number;

  /** `tag` names the dialect in log lines. */
  constructor(opts: UdpRconOptions, tag: string) {
    const o = { timeoutMs: 10_000, maxReplyBytes: MAX_REPLY_CHARS, logger: silentLogger, clock: systemClock, ...opts };
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

  /** How many commands wait behind the one running. */
  protected get waiting(): number {
    return this.#queue.waiting;
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
      let heard = false;
      const ended = new AbortController();
      const finish = (fn: () => void) => {
        if (ended.signal.aborted) return;
        this.#onDatagram = undefined;
        ended.abort();
        job.signal.removeEventListener("abort", onAbort);
        fn();
      };
      const onAbort = () =>
        finish(() => {
          if (!heard) this.#silence();
          reject(job.signal.reason);
        });
      const x: Exchange = {
        send: (payload) =>
          socket.send(Buffer.concat([OOB, payload]), (e) => {
            if (e) finish(() => reject(new TransportError("disconnected", `rcon ${this.target}: ${e.message}`)));
          }),
        resolve: (reply) => finish(() => resolve(reply)),
        reject: (e) => finish(() => reject(e)),
        ended: ended.signal,
      };
      if (job.signal.aborted) return onAbort();
      job.signal.addEventListener("abort", onAbort, { once: true });
      this.#onDatagram = (payload) => {
        heard = true;
        take(payload, x);
      };
      start(x);
    });
  }

  /**
   * The error of a command whose reply has grown to `bytes`, once past maxReplyBytes: what a command waits for is
   * bounded. Each dialect then drops what is left of the reply, as it does after a timeout.
   */
  protected overLimit(command: string, bytes: number): TransportError | undefined {
    const max = this.#o.maxReplyBytes;
    if (bytes <= max) return undefined;
    return new TransportError(
      "protocol",
      `rcon ${this.target}: the reply to "${command.split(" ", 1)[0]}" passed ${max} bytes`,
    );
  }

  /**
   * A command met silence. A server given by name may have moved (a container recreated with another address): the
   * next command resolves the name again, on a fresh socket. An address given as such stays as it is.
   */
  #silence(): void {
    if (this.#closed || isIP(this.#o.host)) return;
    const socket = this.#socket;
    this.#socket = undefined;
    void socket?.then(
      (s) => s.close(),
      () => {},
    );
  }

  /** Opens the socket once (again after a failure, e.g. a name that didn't resolve yet, or after silence). */
  #open(): Promise<dgram.Socket> {
    this.#socket ??= this.#connect().catch((e: unknown) => {
      this.#socket = undefined;
      const error =
        e instanceof TransportError ? e : new TransportError("disconnected", `rcon ${this.target}: ${errorMessage(e)}`);
      this.#events.emit("closed", error);
      throw error;
    });
    return this.#socket;
  }

  async #connect(): Promise<dgram.Socket> {
    this.#events.emit("connecting");
    const peer = await resolvePeer(this.#o.host).catch((e: unknown) => {
      throw new TransportError(
        "disconnected",
        `rcon ${this.target}: can't resolve ${this.#o.host}: ${errorMessage(e)}`,
      );
    });
    if (this.#peer !== undefined && this.#peer !== peer.address)
      this.log.info(`rcon: ${this.#o.host} now resolves to ${peer.address} (was ${this.#peer})`, {
        target: this.target,
      });
    this.#peer = peer.address;
    const port = this.#o.port;
    const socket = dgram.createSocket({ type: peer.family === 6 ? "udp6" : "udp4", recvBufferSize: RECEIVE_BUFFER });
    socket.on("message", (msg, rinfo) => {
      if (rinfo.port !== port || canonical(rinfo.address) !== peer.address) return this.#stray(rinfo);
      if (!msg.subarray(0, OOB.length).equals(OOB)) return;
      this.#onDatagram?.(msg.subarray(OOB.length));
    });
    const opened = new Promise<void>((resolve, reject) => {
      socket.once("error", reject);
      // A loopback server: a loopback local address, which no other host can reach.
      socket.bind(0, localAddressFor(peer), () =>
        socket.connect(port, peer.address, (e?: Error) => {
          socket.off("error", reject);
          if (e) reject(e);
          else resolve();
        }),
      );
    });
    await opened.catch((e: unknown) => {
      socket.close();
      throw e;
    });
    socket.on("error", (e: NodeJS.ErrnoException) => {
      // A connected socket hears of an ICMP "port unreachable": the server is down or restarting. Its command
      // times out as one sent to a silent server does.
      if (e.code === "ECONNREFUSED")
        return this.log.debug("rcon: nothing listens on the server's port", { target: this.target });
      this.log.warn("rcon socket error", { target: this.target, error: e.message });
      this.#events.emit("closed", e);
    });
    this.#events.emit("connected");
    return socket;
  }

  /** A datagram from someone other than the server (only where the runtime ignored the connect): dropped, and said. */
  #stray(from: dgram.RemoteInfo): void {
    this.#strays++;
    const now = this.clock.monotonic();
    if (this.#strayWarned !== undefined && now - this.#strayWarned < STRAY_WARN_MS) return;
    this.#strayWarned = now;
    this.log.warn("rcon: ignored datagrams that did not come from the game server", {
      target: this.target,
      from: `${from.address}:${from.port}`,
      count: this.#strays,
    });
    this.#strays = 0;
  }
}

/**
 * The socket's receive buffer: a server sends a long reply in one go (ioq3's `fdir *` on OpenArena: 126 KB in 128
 * datagrams), and with Linux's default (212992 bytes, about 90 such datagrams) the rest was dropped unseen. Linux
 * gives at most twice net.core.rmem_max: on a default system twice its default.
 */
const RECEIVE_BUFFER = 1 << 20;

/** Datagrams from elsewhere are reported at most once a minute (with their count): a flood can't flood the log. */
const STRAY_WARN_MS = 60_000;

interface Peer {
  address: string;
  family: 4 | 6;
}

/**
 * The server's address: an IP as it is (an unspecified one, 0.0.0.0 or ::, as loopback); a name resolved to its first
 * IPv4 address, or IPv6 when it has none (an IPv4 socket used to resolve names, and a server that listens on both may
 * not on IPv6).
 */
async function resolvePeer(host: string): Promise<Peer> {
  const found = isIPv4(host) || isIPv6(host) ? [{ address: host }] : await lookup(host, { all: true });
  const first = found.find((a) => isIPv4(a.address)) ?? found[0];
  if (!first) throw new Error("no address found");
  const address = canonical(first.address);
  const family = isIPv4(address) ? 4 : 6;
  // "Any address" as a destination is this host (the kernel's reading too), and replies come from its loopback.
  if (address === "0.0.0.0" || address === "::") return { address: family === 4 ? "127.0.0.1" : "::1", family };
  return { address, family };
}

/**
 * An address as the kernel reports a datagram's source: IPv6 in its shortest lower-case form (URL's serialiser
 * follows the same rules), an IPv4-mapped IPv6 address as the IPv4 address it is.
 */
function canonical(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return mapped;
  if (!isIPv6(address) || address.includes("%")) return address;
  return new URL(`http://[${address}]/`).hostname.slice(1, -1);
}

/** The local address to bind: loopback for a server on loopback, else any (the connect picks the route's). */
function localAddressFor(peer: Peer): string {
  if (peer.family === 4) return peer.address.startsWith("127.") ? "127.0.0.1" : "0.0.0.0";
  return peer.address === "::1" ? "::1" : "::";
}
