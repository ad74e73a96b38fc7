import { Buffer } from "node:buffer";
import * as net from "node:net";
import type { Clock } from "../../clock.ts";
import {
  encodePacket,
  type Packet,
  PacketReader,
  SERVERDATA_AUTH,
  SERVERDATA_AUTH_RESPONSE,
  SERVERDATA_EXECCOMMAND,
  SERVERDATA_RESPONSE_VALUE,
} from "./source-rcon-packets.ts";
import { errorMessage, MAX_REPLY_CHARS, TransportError } from "./transport.ts";

/**
 * How the end of a (possibly multi-packet) reply is detected:
 * - `terminator`: send an empty RESPONSE_VALUE right behind the command; the server answers requests in order, so
 *   its echo marks the end (srcds). Stray packets (srcds' extra `00 01 00 00` echo) are dropped by id.
 * - `fragment`: Minecraft. Vanilla reads one packet per socket read and drops the connection when a read holds
 *   anything else, so nothing may be sent behind the command. It splits replies into 4096-character packets:
 *   a shorter packet is the last one. Only when a packet is full do we send the terminator (the server has
 *   consumed the command by then) and collect until its "Unknown request 0" answer.
 * - `{ idleMs }`: the reply ends when no packet arrived for `idleMs` (servers that mishandle extra packets).
 */
export type ReplyEnd = "terminator" | "fragment" | { idleMs: number };

/** Minecraft splits at 4096 characters; mods split at 4096 bytes. Either way a shorter packet is the last. */
const FRAGMENT_MAX = 4096;

interface Waiter {
  packet(p: Packet): void;
  fail(e: Error): void;
}

/** One authenticated TCP connection. It never reconnects: SourceRcon replaces it when it dies. */
export class RconConnection {
  #reader = new PacketReader();
  #nextId = 1;
  #waiter?: Waiter;
  #error?: TransportError;
  #closeListeners: ((e: TransportError) => void)[] = [];
  #closedPromise: Promise<void>;

  private constructor(
    private socket: net.Socket,
    private target: string,
    private clock: Clock,
  ) {
    this.#closedPromise = new Promise((resolve) => socket.once("close", () => resolve()));
    socket.setNoDelay(true);
    socket.on("data", (chunk: Buffer) => this.#onData(chunk));
    socket.on("error", (e) => this.destroy(new TransportError("disconnected", `RCON ${target}: ${e.message}`)));
    socket.on("close", () => this.destroy(new TransportError("disconnected", `RCON ${target} closed the connection`)));
  }

  /** Connects and authenticates; rejects with an `auth` TransportError on a wrong password. */
  static async open(o: {
    host: string;
    port: number;
    password: string;
    clock: Clock;
    timeoutMs: number;
    signal: AbortSignal;
  }): Promise<RconConnection> {
    const target = `${o.host}:${o.port}`;
    const conn = new RconConnection(net.connect({ host: o.host, port: o.port }), target, o.clock);
    const timer = new AbortController();
    const signal = AbortSignal.any([o.signal, timer.signal]);
    o.clock.sleep(o.timeoutMs, timer.signal).then(
      () =>
        timer.abort(
          new TransportError("timeout", `RCON ${target}: no answer to connect/auth within ${o.timeoutMs} ms`),
        ),
      () => {},
    );
    try {
      await conn.#connected(signal);
      await conn.#auth(o.password, signal);
      return conn;
    } catch (e) {
      conn.destroy(e instanceof TransportError ? e : new TransportError("disconnected", errorMessage(e)));
      throw e;
    } finally {
      timer.abort();
    }
  }

  onClose(fn: (e: TransportError) => void): void {
    if (this.#error) fn(this.#error);
    else this.#closeListeners.push(fn);
  }

  /** Fails whatever is waiting with `e` and closes the socket; resolves once it is closed. */
  destroy(e: TransportError): Promise<void> {
    if (!this.#error) {
      this.#error = e;
      this.#waiter?.fail(e);
      this.socket.destroy();
      for (const fn of this.#closeListeners.splice(0)) fn(e);
    }
    return this.#closedPromise;
  }

  /** Runs one command; the caller serialises calls. */
  exec(command: string, end: ReplyEnd, signal: AbortSignal): Promise<string> {
    const id = this.#id();
    const term = this.#id();
    const chunks: Buffer[] = [];
    let bytes = 0;
    const text = () => Buffer.concat(chunks).toString("utf8");
    let termSent = false;
    let quiet: AbortController | undefined;

    const reply = this.#expect<string>(signal, (p, done) => {
      if (p.id === -1 && p.type === SERVERDATA_AUTH_RESPONSE) {
        // The server dropped our authentication (e.g. srcds after rcon_password is set): start over.
        const e = new TransportError("disconnected", `RCON ${this.target} no longer accepts this session`);
        void this.destroy(e);
        throw e;
      }
      if (p.id === term) return done(text());
      if (p.id !== id || p.type !== SERVERDATA_RESPONSE_VALUE) return;
      chunks.push(p.body);
      bytes += p.body.length;
      if (bytes > MAX_REPLY_CHARS) {
        // The rest of it would be taken for the next command's reply: that goes over a new connection.
        const what = command.split(" ", 1)[0];
        const e = new TransportError(
          "protocol",
          `RCON ${this.target}: the reply to "${what}" passed ${MAX_REPLY_CHARS} bytes`,
        );
        void this.destroy(e);
        throw e;
      }
      if (end === "fragment" && !termSent) {
        if (p.body.length < FRAGMENT_MAX && p.body.toString("utf8").length < FRAGMENT_MAX) return done(text());
        termSent = true;
        this.#write(encodePacket(term, SERVERDATA_RESPONSE_VALUE, ""));
      } else if (typeof end === "object") {
        quiet?.abort();
        const q = (quiet = new AbortController());
        this.clock.sleep(end.idleMs, AbortSignal.any([q.signal, signal])).then(
          () => done(text()),
          () => {},
        );
      }
    });
    const exec = encodePacket(id, SERVERDATA_EXECCOMMAND, command);
    // srcds handles both packets in one segment; Minecraft must never see two (see ReplyEnd).
    this.#write(end === "terminator" ? Buffer.concat([exec, encodePacket(term, SERVERDATA_RESPONSE_VALUE, "")]) : exec);
    return reply.finally(() => quiet?.abort());
  }

  #connected(signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      const off = () => signal.removeEventListener("abort", onAbort);
      const waiter: Waiter = { packet() {}, fail: (e) => (off(), reject(e)) };
      this.#waiter = waiter;
      this.socket.once("connect", () => {
        off();
        if (this.#waiter === waiter) this.#waiter = undefined;
        resolve();
      });
    });
  }

  #auth(password: string, signal: AbortSignal): Promise<void> {
    const id = this.#id();
    const result = this.#expect<void>(signal, (p, done) => {
      // srcds first sends an empty RESPONSE_VALUE; only the AUTH_RESPONSE carries the verdict.
      if (p.type !== SERVERDATA_AUTH_RESPONSE) return;
      if (p.id === id) return done();
      throw new TransportError(
        "auth",
        `RCON ${this.target} rejected the password: the configured RCON password is wrong. ` +
          "Not retrying automatically, because repeated failures get the agent's IP banned by the server.",
      );
    });
    this.#write(encodePacket(id, SERVERDATA_AUTH, password));
    return result;
  }

  /** Routes packets to `handle` until it calls `done`, throws, the signal aborts or the connection dies. */
  #expect<T>(signal: AbortSignal, handle: (p: Packet, done: (v: T) => void) => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.#error) return reject(this.#error);
      if (signal.aborted) return reject(signal.reason);
      const settle = (fn: () => void) => {
        if (this.#waiter !== waiter) return;
        this.#waiter = undefined;
        signal.removeEventListener("abort", onAbort);
        fn();
      };
      const onAbort = () => settle(() => reject(signal.reason));
      const waiter: Waiter = {
        packet: (p) => {
          try {
            handle(p, (v) => settle(() => resolve(v)));
          } catch (e) {
            settle(() => reject(e));
          }
        },
        fail: (e) => settle(() => reject(e)),
      };
      this.#waiter = waiter;
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  #onData(chunk: Buffer): void {
    let packets: Packet[];
    try {
      packets = this.#reader.push(chunk);
    } catch (e) {
      void this.destroy(e instanceof TransportError ? e : new TransportError("protocol", errorMessage(e)));
      return;
    }
    // Packets nobody waits for (late replies, srcds' extra terminator echo) are dropped here.
    for (const p of packets) this.#waiter?.packet(p);
  }

  #write(b: Buffer): void {
    this.socket.write(b);
  }

  #id(): number {
    const id = this.#nextId;
    this.#nextId = id >= 0x7fffffff ? 1 : id + 1;
    return id;
  }
}
