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
  /** Where it listens: 127.0.0.1 (default), another loopback address, or ::1. */
  host?: string;
  /** Its port; default any free one. */
  port?: number;
  password?: string;
  /**
   * Returns the console output of a command. `print` prints while it runs (a datagram goes out whenever the
   * redirect buffer fills), for a command that prints, works for a while, and prints again.
   */
  handler?: (command: string, print: (text: string) => void) => string | Promise<string>;
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
    super(o.host);
  }

  static async start(o: FakeQ3Options = {}): Promise<FakeQ3Server> {
    const s = new FakeQ3Server(o);
    s.port = o.port ?? 0;
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
    // Com_Printf into the redirect buffer: whole messages (lines here), flushed first when the next one wouldn't
    // fit, and once more when the command is done (even empty).
    const flushAt = this.o.flushAt ?? 1007;
    let buffer = "";
    const flush = () => {
      this.datagramsSent++;
      reply(Buffer.from(`print\n${buffer}`));
      buffer = "";
    };
    const print = (text: string) => {
      for (const piece of text.match(/[^\n]*\n|[^\n]+$/g) ?? []) {
        if (buffer.length + piece.length > flushAt) flush();
        buffer += piece;
      }
    };
    print(ok ? await this.#run(command, print) : "Bad rconpassword.\n");
    flush();
  }

  /** Cmd_Echo_f is the engine's own: the arguments, split at whitespace and joined by one space, then a line break. */
  async #run(command: string, print: (text: string) => void): Promise<string> {
    const [name = "", ...args] = command.trim().split(/\s+/);
    if (name.toLowerCase() === "echo") return `${args.join(" ")}\n`;
    return (this.o.handler ?? ((c) => `${c}\n`))(command, print);
  }
}
