/**
 * A Quake 3 (ioquake3) rcon responder for tests: parses `\xff\xff\xff\xffrcon <password> <command>` the way
 * SVC_RemoteCommand does and answers with `print\n` datagrams, flushing at ioq3's redirect buffer size.
 */
import { Buffer } from "node:buffer";
import { UdpFake } from "./udp-fake.ts";

export interface FakeQ3Options {
  password?: string;
  /** Returns the console output of a command. */
  handler?: (command: string) => string | Promise<string>;
  /** Redirect buffer: SV_OUTPUTBUF_LENGTH (1024 - 16), minus the terminating NUL. */
  flushAt?: number;
  /** Never answer (for timeouts). */
  silent?: boolean;
}

export class FakeQ3Server extends UdpFake {
  datagramsSent = 0;

  private constructor(private o: FakeQ3Options) {
    super();
  }

  static async start(o: FakeQ3Options = {}): Promise<FakeQ3Server> {
    const s = new FakeQ3Server(o);
    await s.bind();
    return s;
  }

  protected async onDatagram(data: Buffer, reply: (payload: Buffer) => void): Promise<void> {
    // SV_ConnectionlessPacket reads the request with MSG_ReadStringLine: up to the first newline or NUL.
    const line = data.toString("utf8").split(/[\n\0]/)[0]!;
    const m = /^rcon +(\S+) +(.*)$/s.exec(line);
    if (!m || this.o.silent) return;
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
