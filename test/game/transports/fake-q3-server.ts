/**
 * A Quake 3 (ioquake3) rcon responder for tests: parses `\xff\xff\xff\xffrcon <password> <command>` the way
 * SVC_RemoteCommand does and answers with `print\n` datagrams, flushing at ioq3's redirect buffer size.
 */
import { Buffer } from "node:buffer";
import * as dgram from "node:dgram";

export interface FakeQ3Options {
  password?: string;
  /** Returns the console output of a command. */
  handler?: (command: string) => string | Promise<string>;
  /** Redirect buffer: SV_OUTPUTBUF_LENGTH (1024 - 16), minus the terminating NUL. */
  flushAt?: number;
  /** Never answer (for timeouts). */
  silent?: boolean;
}

export class FakeQ3Server {
  readonly host = "127.0.0.1";
  port = 0;
  commands: string[] = [];
  datagramsSent = 0;
  #socket = dgram.createSocket("udp4");

  private constructor(private o: FakeQ3Options) {}

  static async start(o: FakeQ3Options = {}): Promise<FakeQ3Server> {
    const s = new FakeQ3Server(o);
    await s.#bind();
    return s;
  }

  /** Resolves once `command` has been received (already or later). */
  async received(command: string): Promise<void> {
    while (!this.commands.includes(command)) await new Promise<void>((resolve) => this.#waiters.push(resolve));
  }

  /** A server restart: the socket closes (a command being answered gets no reply) and binds the same port again. */
  async restart(): Promise<void> {
    await this.close();
    this.#socket = dgram.createSocket("udp4");
    await this.#bind();
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.#socket.close(() => resolve()));
  }

  #waiters: (() => void)[] = [];

  async #bind(): Promise<void> {
    this.#socket.on("message", (msg, rinfo) => void this.#onMessage(msg, rinfo));
    await new Promise<void>((resolve) => this.#socket.bind(this.port, this.host, () => resolve()));
    this.port = this.#socket.address().port;
  }

  async #onMessage(msg: Buffer, rinfo: dgram.RemoteInfo): Promise<void> {
    if (!msg.subarray(0, 4).equals(Buffer.from([0xff, 0xff, 0xff, 0xff]))) return;
    // SV_ConnectionlessPacket reads the request with MSG_ReadStringLine: up to the first newline or NUL.
    const line = msg
      .subarray(4)
      .toString("utf8")
      .split(/[\n\0]/)[0]!;
    const m = /^rcon +(\S+) +(.*)$/s.exec(line);
    if (!m || this.o.silent) return;
    const [, password = "", command = ""] = m;
    const ok = password === (this.o.password ?? "secret");
    if (ok) {
      this.commands.push(command);
      for (const w of this.#waiters.splice(0)) w();
    }
    const socket = this.#socket;
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
      const datagram = Buffer.concat([Buffer.from([0xff, 0xff, 0xff, 0xff]), Buffer.from(`print\n${text}`)]);
      // A restart closed the socket this command came in on: its answer is lost, as on a real restart.
      if (socket !== this.#socket) return;
      socket.send(datagram, rinfo.port, rinfo.address);
    }
  }
}
