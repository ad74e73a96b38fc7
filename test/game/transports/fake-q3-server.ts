/**
 * A Quake 3 (ioquake3) rcon responder for tests: parses `\xff\xff\xff\xffrcon <password> <command>` the way
 * SVC_RemoteCommand does and answers with `print\n` datagrams, flushing at ioq3's redirect buffer size. Like ioq3 it
 * drops, unanswered, a request over its per-address rate limit (docs/game-consoles.md §2.2).
 */
import { Buffer } from "node:buffer";
import type * as dgram from "node:dgram";
import { UdpFake } from "./udp-fake.ts";

/** ioq3's leaky bucket: a burst of requests, one forgotten per elapsed period. */
export interface RateLimit {
  burst: number;
  periodMs: number;
}

export interface FakeQ3Options {
  password?: string;
  /** Returns the console output of a command. */
  handler?: (command: string) => string | Promise<string>;
  /** Redirect buffer: SV_OUTPUTBUF_LENGTH (1024 - 16), minus the terminating NUL. */
  flushAt?: number;
  /** Never answer (for timeouts). */
  silent?: boolean;
  /** The per-address rcon limit; default ioq3's, 10 requests and one a second after that. */
  rateLimit?: RateLimit;
}

export class FakeQ3Server extends UdpFake {
  datagramsSent = 0;
  /** Requests dropped by the rate limit. */
  dropped = 0;
  #buckets = new Map<string, { level: number; last: number }>();

  private constructor(private o: FakeQ3Options) {
    super();
  }

  static async start(o: FakeQ3Options = {}): Promise<FakeQ3Server> {
    const s = new FakeQ3Server(o);
    await s.bind();
    return s;
  }

  /** SVC_RateLimit: whether the request is over the limit (then dropped); counts it if not. */
  #limited(address: string): boolean {
    const { burst, periodMs } = this.o.rateLimit ?? { burst: 10, periodMs: 1000 };
    const now = performance.now();
    const b = this.#buckets.get(address) ?? { level: 0, last: now };
    this.#buckets.set(address, b);
    const interval = now - b.last;
    const expired = Math.floor(interval / periodMs);
    if (expired > b.level || interval < 0) {
      b.level = 0;
      b.last = now;
    } else {
      b.level -= expired;
      b.last = now - (interval % periodMs);
    }
    if (b.level < burst) {
      b.level++;
      return false;
    }
    return true;
  }

  protected async onDatagram(data: Buffer, reply: (payload: Buffer) => void, peer: dgram.RemoteInfo): Promise<void> {
    // SV_ConnectionlessPacket reads the request with MSG_ReadStringLine: up to the first newline or NUL.
    const line = data.toString("utf8").split(/[\n\0]/)[0]!;
    const m = /^rcon +(\S+) +(.*)$/s.exec(line);
    if (!m || this.o.silent) return;
    if (this.#limited(peer.address)) {
      this.dropped++;
      return;
    }
    const [, password = "", command = ""] = m;
    const ok = password === (this.o.password ?? "secret");
    if (ok) this.ran(command);
    const output = ok ? await (this.o.handler ?? ((c) => `${c}\n`))(command) : "Bad rconpassword.\n";
    // Com_Printf appends whole messages (lines here) and flushes first when the next one wouldn't fit.
    const flushAt = this.o.flushAt ?? 1007;
    const buffers: string[] = [];
    let current = "";
    for (const piece of output.match(/[^\n]*\n|[^\n]+$/g) ?? []) {
      if (current.length + piece.length > flushAt) {
        buffers.push(current);
        current = "";
      }
      current += piece;
    }
    buffers.push(current);
    for (const text of buffers) {
      this.datagramsSent++;
      reply(Buffer.from(`print\n${text}`));
    }
  }
}
