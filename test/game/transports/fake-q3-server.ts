/**
 * A Quake 3 (ioquake3) rcon responder for tests: parses `\xff\xff\xff\xffrcon <password> <command>` the way
 * SVC_RemoteCommand does and answers with `print\n` datagrams, flushing at ioq3's redirect buffer size.
 */
import { Buffer } from "node:buffer";
import * as dgram from "node:dgram";

export interface FakeQ3Options {
  password?: string;
  /** Returns the console output of a command. */
  handler?: (command: string) => string;
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
    s.#socket.on("message", (msg, rinfo) => s.#onMessage(msg, rinfo));
    await new Promise<void>((resolve) => s.#socket.bind(0, s.host, () => resolve()));
    s.port = s.#socket.address().port;
    return s;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.#socket.close(() => resolve()));
  }

  #onMessage(msg: Buffer, rinfo: dgram.RemoteInfo): void {
    if (!msg.subarray(0, 4).equals(Buffer.from([0xff, 0xff, 0xff, 0xff]))) return;
    const line = msg.subarray(4).toString("utf8");
    const m = /^rcon +(\S+) +(.*)$/s.exec(line);
    if (!m || this.o.silent) return;
    const [, password = "", command = ""] = m;
    const output =
      password === (this.o.password ?? "secret")
        ? (this.commands.push(command), (this.o.handler ?? ((c) => `${c}\n`))(command))
        : "Bad rconpassword.\n";
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
      this.#socket.send(datagram, rinfo.port, rinfo.address);
    }
  }
}
