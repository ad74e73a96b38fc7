import { Buffer } from "node:buffer";
import type { Clock } from "../../clock.ts";
import type { Logger } from "../../log.ts";
import type { QueuedCommand } from "./command-queue.ts";
import { Pacer } from "./pacer.ts";
import { TransportError } from "./transport.ts";
import { UdpRcon } from "./udp-rcon.ts";

export interface Q3RconOptions {
  host: string;
  port: number;
  password: string;
  /** Default per-command timeout (queue + reply). */
  timeoutMs?: number;
  /** The reply is complete when no datagram arrived for this long (the protocol has no end marker). */
  quietMs?: number;
  /** Requests sent at once, and one more per period after that: default 8 and 1000 ms, below ioq3's limit. */
  rate?: { burst: number; periodMs: number };
  logger?: Logger;
  clock?: Clock;
}

const PRINT = Buffer.from("print\n");
/** ioq3 reads the request with MSG_ReadStringLine into a MAX_STRING_CHARS (1024) buffer. */
const MAX_REQUEST_BYTES = 1023;
/**
 * ioq3 takes a burst of 10 rcon requests from one address, then one a second, and drops the rest unanswered
 * (docs/game-consoles.md §2.2). hub-agent stays two below, leaving room for an operator's rcon tool beside it.
 */
const RATE_BURST = 8;
const RATE_PERIOD_MS = 1000;

/**
 * Quake 3 / ioquake3 rcon over UDP (the shared part is ./udp-rcon.ts): `\xff\xff\xff\xffrcon <password> <command>`,
 * answered by one or more `\xff\xff\xff\xffprint\n<text>` datagrams (the server flushes its ~1 KB redirect buffer as
 * it fills). A reply is whatever arrives from the server's port until a quiet period. A reply arriving after its
 * command timed out could be taken for the next command's; ioq3 answers within one server frame, so only an
 * unreasonably short timeout risks it.
 */
export class Q3Rcon extends UdpRcon {
  #password: string;
  #quietMs: number;
  #pacer: Pacer;

  constructor(opts: Q3RconOptions) {
    if (/\s/.test(opts.password) || opts.password === "") {
      // ioq3 takes the password as the first space-delimited word after "rcon".
      throw new TransportError("invalid", "Quake 3 rcon passwords must be non-empty and contain no whitespace");
    }
    super(opts, "q3rcon");
    this.#password = opts.password;
    this.#quietMs = opts.quietMs ?? 250;
    const rate = opts.rate ?? { burst: RATE_BURST, periodMs: RATE_PERIOD_MS };
    this.#pacer = new Pacer(this.clock, rate.burst, rate.periodMs);
  }

  protected refuse(command: string): string | undefined {
    // A newline would end the request line early on the server, and the rest would be lost.
    if (/[\0\n\r]/.test(command)) return "Quake 3 rcon commands can't contain NUL or line breaks";
    const bytes = Buffer.byteLength(`rcon ${this.#password} ${command}`);
    if (bytes > MAX_REQUEST_BYTES) return `rcon request is ${bytes} bytes; ioq3 reads ${MAX_REQUEST_BYTES}`;
    return undefined;
  }

  protected async run(job: QueuedCommand): Promise<string> {
    await this.#pacer.take(job.signal); // a request over the server's limit would be dropped: wait instead
    const parts: Buffer[] = [];
    let quiet: AbortController | undefined;
    const text = await this.exchange(
      job,
      (x) => {
        job.written = true;
        x.send(Buffer.from(`rcon ${this.#password} ${job.command}`));
      },
      (payload, x) => {
        if (!payload.subarray(0, PRINT.length).equals(PRINT)) return;
        parts.push(payload.subarray(PRINT.length));
        quiet?.abort();
        const q = (quiet = new AbortController());
        x.ended.addEventListener("abort", () => q.abort(), { once: true });
        this.clock.sleep(this.#quietMs, q.signal).then(
          () => x.resolve(Buffer.concat(parts).toString("utf8")),
          () => {},
        );
      },
    );
    const verdict = text.trim();
    if (verdict === "Bad rconpassword.") {
      const e = new TransportError(
        "auth",
        `rcon ${this.target} rejected the password: the configured rconpassword is wrong`,
      );
      this.log.error(e.message);
      throw e;
    }
    if (verdict === "No rconpassword set on the server.") {
      throw new TransportError("auth", `rcon ${this.target} has no rconpassword set, so it refuses all rcon commands`);
    }
    return text;
  }
}
