/**
 * A DarkPlaces rcon responder for tests, written from the engine's NetConn_ServerParsePacket, RCon_Authenticate,
 * RCon_Execute and Con_Rcon_Redirect_* (docs/game-consoles.md §2.8): plain `rcon` only at rcon_secure 0, `srcon …
 * TIME` up to 1, `srcon … CHALLENGE` always; `getchallenge` with its flood control (a second request within 0.5 s
 * while the first challenge is unused gets nothing); HMAC-MD4 checked (Bun's own MD4, not the client's); the
 * commands of a request split at NUL and run in order; the output flushed in datagrams of at most 1399 bytes,
 * always at least one; a refused request is not answered (or, as DarkPlaces does since 2024, answered with
 * `server denied rcon access`).
 */
import { Buffer } from "node:buffer";
import type * as dgram from "node:dgram";
import { UdpFake } from "./udp-fake.ts";

export interface FakeDpOptions {
  /** Where it listens: 127.0.0.1 (default) or ::1. */
  host?: string;
  password?: string;
  /** The server's rcon_secure (default 0). */
  secure?: 0 | 1 | 2;
  /** Console output of one command. */
  handler?: (command: string) => string | Promise<string>;
  /** Expand `$$` to `$` in rcon commands, as DarkPlaces does since 2024 (older engines run them as sent). */
  expands?: boolean;
  /** Answer a refused request with `server denied rcon access` (DarkPlaces since 2024) instead of silence. */
  answersDenied?: boolean;
  /** The server's clock, for rcon_secure 1 (default: now). */
  now?: () => number;
  /** Sees each datagram before the server reads it: a test's attacker watching the wire. */
  before?: (request: Buffer) => void | Promise<void>;
}

/** rcon_redirect_buffer is 1400 bytes; it is flushed when 1399 are used (the 5-byte header included). */
const FLUSH_AT = 1399;

export class FakeDpServer extends UdpFake {
  /** How many datagrams each accepted request was answered with. */
  replies: number[] = [];
  getchallenges = 0;
  #challenges = new Map<string, { challenge: string; time: number }>();

  /** The server's settings; a test may change them while it runs (`rcon_password` set anew). */
  private constructor(readonly options: FakeDpOptions) {
    super(options.host);
  }

  static async start(o: FakeDpOptions = {}): Promise<FakeDpServer> {
    const s = new FakeDpServer(o);
    await s.bind();
    return s;
  }

  /** A restart loses the challenges handed out, too. */
  override async restart(): Promise<void> {
    this.#challenges.clear();
    await super.restart();
  }

  protected async onDatagram(data: Buffer, reply: (payload: Buffer) => void, rinfo: dgram.RemoteInfo): Promise<void> {
    await this.options.before?.(data);
    const peer = `${rinfo.address}:${rinfo.port}`;
    const starts = (s: string) => data.subarray(0, s.length).toString("latin1") === s;
    const password = this.options.password ?? "secret";
    const secure = this.options.secure ?? 0;

    if (starts("getchallenge")) {
      this.getchallenges++;
      const now = performance.now();
      let entry = this.#challenges.get(peer);
      if (entry && entry.time > now - 500) return; // flood control: the unused challenge was asked for just now
      entry ??= { challenge: challengeString(), time: now };
      entry.time = now;
      this.#challenges.set(peer, entry);
      return reply(Buffer.from(`challenge ${entry.challenge}\0`, "latin1"));
    }
    let ok = false;
    let commands: Buffer | undefined;
    if (data.length >= 37 && starts("srcon HMAC-MD4 TIME ")) {
      if (secure > 1) return;
      const mac = data.subarray(20, 36);
      const rest = data.subarray(37);
      const space = rest.indexOf(0x20);
      if (space < 0) return;
      const time = Number.parseInt(rest.subarray(0, space).toString("latin1"), 10);
      const now = Math.floor((this.options.now?.() ?? Date.now()) / 1000);
      ok = Math.abs(now - time) <= 5 && hmac(password, rest).equals(mac);
      commands = rest.subarray(space + 1);
    } else if (data.length >= 42 && starts("srcon HMAC-MD4 CHALLENGE ")) {
      const mac = data.subarray(25, 41);
      const rest = data.subarray(42);
      const space = rest.indexOf(0x20);
      if (space < 0) return;
      const entry = this.#challenges.get(peer);
      const known = entry !== undefined && rest.subarray(0, 11).toString("latin1") === entry.challenge;
      ok = known && hmac(password, rest).equals(mac);
      if (ok) this.#challenges.delete(peer); // used up: no replay
      commands = rest.subarray(space + 1);
    } else if (starts("rcon ")) {
      if (secure > 0) return;
      const rest = data.subarray(5);
      let space = rest.findIndex((b) => b <= 0x20);
      if (space < 0) space = rest.length;
      ok = rest.subarray(0, Math.min(space, 63)).toString("latin1") === password;
      commands = data.subarray(5 + Math.min(space + 1, rest.length));
    } else {
      return;
    }
    if (!ok) {
      if (this.options.answersDenied) reply(Buffer.from(`n^1server denied rcon access to ${peer}\n`));
      return;
    }
    let buffer = "";
    let datagrams = 0;
    const flush = () => {
      datagrams++;
      reply(Buffer.concat([Buffer.from("n"), Buffer.from(buffer, "latin1")]));
      buffer = "";
    };
    for (const part of commands!.toString("utf8").split("\0")) {
      if (!part) continue;
      const command = this.options.expands ? part.replaceAll("$$", "$") : part;
      this.ran(command);
      const output = await this.#run(command);
      // Byte by byte, as Con_Rcon_AddChar does: a flush may fall inside a line or a character.
      for (const byte of Buffer.from(output, "utf8")) {
        buffer += String.fromCharCode(byte);
        if (buffer.length + 5 >= FLUSH_AT) flush();
      }
    }
    flush();
    this.replies.push(datagrams);
  }

  async #run(command: string): Promise<string> {
    const [name, ...args] = command.trim().split(/\s+/);
    // Cmd_Echo_f: each argument followed by a space, then a line break.
    if (name === "echo") return `${args.map((a) => `${a} `).join("")}\n`;
    return (this.options.handler ?? (() => `Unknown command "${name}"\n`))(command);
  }
}

function hmac(password: string, message: Buffer): Buffer {
  const h = new Bun.CryptoHasher("md4", password);
  return Buffer.from(h.update(message).digest());
}

/** NetConn_BuildChallengeString: 11 printable characters but `\ ; " % /`. */
function challengeString(): string {
  let s = "";
  while (s.length < 11) {
    const c = String.fromCharCode(33 + Math.floor(Math.random() * 94));
    if (!'\\;"%/'.includes(c)) s += c;
  }
  return s;
}
