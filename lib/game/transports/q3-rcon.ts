import { Buffer } from "node:buffer";
import type { QueuedCommand } from "./command-queue.ts";
import { Pacer } from "./pacer.ts";
import { TransportError } from "./transport.ts";
import { UdpRcon, type UdpRconOptions } from "./udp-rcon.ts";

export interface Q3RconOptions extends UdpRconOptions {
  password: string;
  /** The reply is complete when no datagram arrived for this long (the protocol has no end marker). */
  quietMs?: number;
  /** Requests sent at once, and one more per period after that: default 8 and 1000 ms, below ioq3's limit. */
  rate?: { burst: number; periodMs: number };
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
/** How long a reply's end marker may stay away after its last datagram before the reply is taken as it is. */
const MARKER_GRACE_MS = 2000;

/**
 * Quake 3 / ioquake3 rcon over UDP (the shared part is ./udp-rcon.ts): `\xff\xff\xff\xffrcon <password> <command>`,
 * answered by one or more `\xff\xff\xff\xffprint\n<text>` datagrams (the server flushes its ~1 KB redirect buffer as
 * it fills, and always sends the last one, even empty). A request carries one command, and nothing in a reply says
 * which request it answers, so the end of a reply is marked the way the server allows (docs/game-consoles.md §2.2):
 * once the reply's first datagram is in, `echo <marker>` follows as a request of its own, and the reply is what came
 * before the marker's echo. The marker costs a request of the server's rate limit, so it is sent only while less than
 * half the burst is used and no other command waits; otherwise the reply ends after a quiet period (`quietMs`). A
 * command whose reply was cut short (a timeout, a marker that never came) leaves the next command to send a marker
 * first and drop everything before its echo: a late reply is never taken for the next command's.
 */
export class Q3Rcon extends UdpRcon {
  #password: string;
  #quietMs: number;
  #pacer: Pacer;
  /** Requests of the burst a marker leaves free. */
  #markerReserve: number;
  /** Every reply so far ended where it should: nothing of an earlier command's can still come. */
  #synced = true;

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
    this.#markerReserve = Math.ceil(rate.burst / 2);
  }

  protected refuse(command: string): string | undefined {
    // A newline would end the request line early on the server, and the rest would be lost.
    if (/[\0\n\r]/.test(command)) return "Quake 3 rcon commands can't contain NUL or line breaks";
    const bytes = this.#request(command).length;
    if (bytes > MAX_REQUEST_BYTES) return `rcon request is ${bytes} bytes; ioq3 reads ${MAX_REQUEST_BYTES}`;
    return undefined;
  }

  protected async run(job: QueuedCommand): Promise<string> {
    if (!this.#synced) await this.#resync(job);
    await this.#pacer.take(job.signal); // a request over the server's limit would be dropped: wait instead
    this.#synced = false; // until this reply is seen to its end
    const echo = markerEcho();
    const parts: Buffer[] = [];
    let bytes = 0;
    let marked = false;
    let timer: AbortController | undefined;
    const text = await this.exchange(
      job,
      (x) => {
        job.written = true;
        x.send(this.#request(job.command));
      },
      (payload, x) => {
        const whole = () => {
          this.#synced = true;
          x.resolve(Buffer.concat(parts).toString("utf8"));
        };
        if (marked && payload.equals(echo.reply)) return whole();
        if (!payload.subarray(0, PRINT.length).equals(PRINT)) return;
        const part = payload.subarray(PRINT.length);
        parts.push(part);
        const over = this.overLimit(job.command, (bytes += part.length));
        if (over) return x.reject(over); // not synced: the next command drops the rest
        if (parts.length === 1) {
          if (this.#refusal(part.toString("utf8"))) return whole(); // the whole answer, and the marker's would be too
          // Sent behind the reply's first datagram, the marker reaches the server after the command, never before.
          // Only when no other command waits (in a burst a marker would halve the rate: one request a second), and
          // only from the first half of the burst: the rest stays for commands and an operator's rcon tool.
          if (this.waiting === 0 && this.#pacer.tryTake(this.#markerReserve)) {
            marked = true;
            x.send(this.#request(echo.command));
          }
        }
        // Without a marker the reply ends after a quiet period; with one, it is taken as it is when the marker's
        // echo stays away (dropped by the server's limit, or lost), and the next command resynchronises.
        timer?.abort();
        const t = (timer = new AbortController());
        x.ended.addEventListener("abort", () => t.abort(), { once: true });
        this.clock.sleep(marked ? MARKER_GRACE_MS : this.#quietMs, t.signal).then(
          () => (marked ? x.resolve(Buffer.concat(parts).toString("utf8")) : whole()),
          () => {},
        );
      },
    );
    const refused = this.#refusal(text);
    if (refused) {
      this.log.error(refused.message);
      throw refused;
    }
    return text;
  }

  /** Sends a marker and drops every datagram until its echo: what is left of a reply cut short. */
  async #resync(job: QueuedCommand): Promise<void> {
    await this.#pacer.take(job.signal);
    const echo = markerEcho();
    await this.exchange(
      job,
      (x) => x.send(this.#request(echo.command)),
      (payload, x) => {
        if (payload.equals(echo.reply)) return x.resolve("");
        // The password is the same for every request: a refusal of any of them is the answer.
        const refused =
          payload.subarray(0, PRINT.length).equals(PRINT) && this.#refusal(payload.toString("utf8", PRINT.length));
        if (refused) {
          this.log.error(refused.message);
          x.reject(refused);
        }
      },
    );
    this.#synced = true;
  }

  #request(command: string): Buffer {
    return Buffer.from(`rcon ${this.#password} ${command}`);
  }

  /** The server's answer to every request when `reply` is a refusal (a wrong password, none set), else undefined. */
  #refusal(reply: string): TransportError | undefined {
    const verdict = reply.trim();
    if (verdict === "Bad rconpassword.")
      return new TransportError(
        "auth",
        `rcon ${this.target} rejected the password: the configured rconpassword is wrong`,
      );
    if (verdict === "No rconpassword set on the server.")
      return new TransportError("auth", `rcon ${this.target} has no rconpassword set, so it refuses all rcon commands`);
    return undefined;
  }
}

/** A fresh marker: the `echo` request that prints it, and the datagram that answers it (`echo` adds a line break). */
function markerEcho(): { command: string; reply: Buffer } {
  const marker = `hubagent_${Buffer.from(crypto.getRandomValues(new Uint8Array(6))).toString("hex")}`;
  return { command: `echo ${marker}`, reply: Buffer.from(`print\n${marker}\n`) };
}
