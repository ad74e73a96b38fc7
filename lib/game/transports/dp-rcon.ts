/**
 * DarkPlaces rcon (Xonotic, Nexuiz) over UDP; the shared part is ./udp-rcon.ts, the protocol docs/game-consoles.md
 * §2.8. Requests are `rcon <password> <commands>` (rcon_secure 0), `srcon HMAC-MD4 TIME <mac> <time> <commands>` (1)
 * or, after `getchallenge`, `srcon HMAC-MD4 CHALLENGE <mac> <challenge> <commands>` (2, the default: servers take
 * it whatever their rcon_secure). Replies are `n<text>` datagrams of up to 1399 bytes.
 *
 * `<commands>` may hold several commands separated by NUL bytes, run in order within one redirect, so each command
 * travels between two echoes of a fresh marker: the reply is exactly what lies between them, a stale datagram of an
 * earlier command is recognised, and a command printing nothing still gets an answer.
 *
 * The server never answers a refused password (before 2024) nor a request below its rcon_secure; it always answers
 * `getchallenge`. So when a request meets silence, a `getchallenge` tells "ignored" (auth) from "not there".
 */
import { Buffer } from "node:buffer";
import type { QueuedCommand } from "./command-queue.ts";
import { hmacMd4 } from "./md4.ts";
import { TransportError } from "./transport.ts";
import { type Exchange, UdpRcon, type UdpRconOptions } from "./udp-rcon.ts";

/** The server's `rcon_secure` this client speaks: 0 plain password, 1 HMAC over the time, 2 HMAC over a challenge. */
export type RconSecure = 0 | 1 | 2;

export interface DpRconOptions extends UdpRconOptions {
  password: string;
  /** Default 2: a challenge-signed request is accepted at every rcon_secure (only `sv_public -3` blocks it). */
  secure?: RconSecure;
  /** How long a request may go unanswered before a `getchallenge` asks whether the server is there (1000 ms). */
  probeMs?: number;
}

/** DarkPlaces' own client builds requests in 1500 bytes; staying below keeps a datagram in one Ethernet frame. */
const MAX_REQUEST_BYTES = 1400;
/** The server reads a plain password into 64 bytes: a longer one is cut there and never matches. */
const MAX_PLAIN_PASSWORD_BYTES = 63;

const REPLY = 0x6e; // "n", QuakeWorld's print
const CHALLENGE = Buffer.from("challenge ");
const encoder = new TextEncoder();

export class DpRcon extends UdpRcon {
  #password: string;
  #secure: RconSecure;
  #probeMs: number;
  /** A reply came with this password: a later silence is more likely a restart than a wrong password. */
  #authed = false;
  /** Whether the server expands `$` in rcon commands as its console does (DarkPlaces since 2024); learnt from replies. */
  #expands?: boolean;

  constructor(opts: DpRconOptions) {
    const secure = opts.secure ?? 2;
    if (opts.password === "" || /\s/.test(opts.password)) {
      // The server splits rcon_password at spaces into several passwords.
      throw new TransportError("invalid", "DarkPlaces rcon passwords must be non-empty and contain no whitespace");
    }
    if (secure === 0 && encoder.encode(opts.password).length > MAX_PLAIN_PASSWORD_BYTES) {
      throw new TransportError(
        "invalid",
        `a plain DarkPlaces rcon password is read as at most ${MAX_PLAIN_PASSWORD_BYTES} bytes: use a shorter one`,
      );
    }
    super(opts, "dprcon");
    this.#password = opts.password;
    this.#secure = secure;
    this.#probeMs = opts.probeMs ?? 1000;
  }

  protected refuse(command: string): string | undefined {
    // NUL separates commands inside a request; the console ends a command at a line break and drops the rest.
    if (/[\0\n\r]/.test(command)) return "DarkPlaces rcon commands can't contain NUL or line breaks";
    const bytes = this.#request(Buffer.from(this.#commands(command, "hubagent_000000000000")), "0".repeat(11)).length;
    if (bytes > MAX_REQUEST_BYTES) return `rcon request is ${bytes} bytes; at most ${MAX_REQUEST_BYTES} are sent`;
    return undefined;
  }

  protected async run(job: QueuedCommand): Promise<string> {
    // A `$$` (an escaped `$`) reaches the server as typed where it doesn't expand `$`: find out before sending one.
    if (this.#expands === undefined && job.command.includes("$")) await this.#roundTrip(job, "");
    const command = this.#expands === false ? job.command.replaceAll("$$", "$") : job.command;
    return this.#roundTrip(job, command);
  }

  /** One request (`command` between two markers) and its reply. */
  async #roundTrip(job: QueuedCommand, command: string): Promise<string> {
    const marker = `hubagent_${Buffer.from(crypto.getRandomValues(new Uint8Array(6))).toString("hex")}`;
    const commands = Buffer.from(this.#commands(command, marker));
    const begin = Buffer.from(`${marker}_start`);
    const end = Buffer.from(`${marker}_end \n`);
    const parts: Buffer[] = [];
    let bytes = 0;
    /** The reply's last bytes, where its end marker shows (it may span datagrams). */
    let tail = Buffer.alloc(0);
    let sent = false;

    const sendRequest = (x: Exchange, challenge?: string) => {
      if (command) job.written = true;
      sent = true;
      x.send(this.#request(commands, challenge));
      this.#probe(
        x,
        () => parts.length === 0,
        () => x.send(Buffer.from("getchallenge")),
      );
    };
    const reply = await this.exchange(
      job,
      (x) => {
        if (this.#secure < 2) return sendRequest(x);
        x.send(Buffer.from("getchallenge"));
        // A lost challenge (or one dropped by the server's flood control) is asked for again.
        this.#probe(
          x,
          () => !sent,
          () => x.send(Buffer.from("getchallenge")),
        );
      },
      (payload, x) => {
        if (payload.subarray(0, CHALLENGE.length).equals(CHALLENGE)) {
          if (!sent) return sendRequest(x, challengeOf(payload));
          // The server answered our probe but not the request it got first: it ignored the request.
          if (parts.length === 0) x.reject(this.#ignored(command));
          return;
        }
        if (payload[0] !== REPLY || !sent) return;
        const text = payload.subarray(1);
        if (parts.length === 0 && !text.subarray(0, begin.length).equals(begin)) {
          // DarkPlaces since 2024 says so; older ones stay silent.
          if (text.includes("server denied rcon access")) x.reject(this.#refused());
          return; // else a late datagram of an earlier command
        }
        parts.push(text);
        // What is left of a reply cut off here doesn't start with the next request's marker: it is dropped.
        const over = this.overLimit(job.command, (bytes += text.length));
        if (over) return x.reject(over);
        tail = Buffer.concat([tail, text]).subarray(-end.length);
        if (tail.equals(end)) x.resolve(Buffer.concat(parts).toString("utf8"));
      },
    );
    this.#authed = true;
    // `<marker>_start$ \n` where the server expanded `$$`, `<marker>_start$$ \n` where it didn't.
    const firstLine = reply.indexOf("\n");
    this.#expands ??= reply.slice(0, firstLine).trimEnd().endsWith(`${marker}_start$`);
    return reply.slice(firstLine + 1, reply.length - end.length);
  }

  /** Every `probeMs` while `waiting()`: `act()`. Stops with the exchange. */
  #probe(x: Exchange, waiting: () => boolean, act: () => void): void {
    const tick = () =>
      this.clock.sleep(this.#probeMs, x.ended).then(
        () => {
          if (!waiting()) return;
          act();
          tick();
        },
        () => {},
      );
    tick();
  }

  /** The commands of one request: `command` between the echoes of `marker` (an empty command is skipped). */
  #commands(command: string, marker: string): string {
    return `echo ${marker}_start$$\0${command}\0echo ${marker}_end`;
  }

  /** The datagram payload (after the OOB prefix) carrying `commands`, signed as rcon_secure says. */
  #request(commands: Buffer, challenge?: string): Buffer {
    if (this.#secure === 0) return Buffer.concat([Buffer.from(`rcon ${this.#password} `), commands]);
    // rcon_secure 1: DarkPlaces' client sends "<unix time>.<6 random digits>"; the server checks the seconds (±5 s).
    const salt =
      this.#secure === 1
        ? `${Math.floor(this.clock.now() / 1000)}.${String(Math.floor(Math.random() * 1e6)).padStart(6, "0")}`
        : (challenge ?? "");
    const signed = Buffer.concat([Buffer.from(`${salt} `), commands]);
    const mac = hmacMd4(encoder.encode(this.#password), signed);
    const kind = this.#secure === 1 ? "TIME" : "CHALLENGE";
    return Buffer.concat([Buffer.from(`srcon HMAC-MD4 ${kind} `), mac, Buffer.from(" "), signed]);
  }

  /** A request met silence while the server answered: after a reply with this password, likely a restart. */
  #ignored(command: string): TransportError {
    const what = command.split(" ", 1)[0] || "echo";
    if (!this.#authed) return this.#refused();
    this.#authed = false; // a second silence in a row is taken for a refused password
    return new TransportError(
      "disconnected",
      `rcon ${this.target}: no reply to "${what}" though the server answers: it restarted meanwhile, or its rcon_password or rcon_secure changed`,
    );
  }

  #refused(): TransportError {
    const secure =
      this.#secure === 2
        ? ""
        : `, or its rcon_secure is above ${this.#secure} (hub-agent signs commands as rcon_secure ${this.#secure})`;
    const e = new TransportError(
      "auth",
      `rcon ${this.target} ignored the command though it answers on that port: the rcon_password is wrong${secure}`,
    );
    this.log.error(e.message);
    return e;
  }
}

/** `challenge <11 characters>`, a NUL, then what the server's crypto adds. */
function challengeOf(payload: Buffer): string {
  const text = payload.subarray(CHALLENGE.length);
  const nul = text.indexOf(0);
  return text.subarray(0, nul < 0 ? text.length : nul).toString("latin1");
}
