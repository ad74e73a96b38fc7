/**
 * A Source RCON server for tests, written from the protocol descriptions (Valve wiki, wiki.vg, vanilla
 * Minecraft's RconClient) rather than from our client, so the two don't share framing bugs.
 *
 * - `source` (srcds): answers AUTH with an empty RESPONSE_VALUE and then AUTH_RESPONSE (double auth reply);
 *   splits replies into packets of at most `maxBody` bytes; mirrors an empty RESPONSE_VALUE and follows it
 *   with the odd `00 01 00 00` packet.
 * - `minecraft`: one AUTH_RESPONSE; replies in 4096-character packets; "Unknown request <hex>" for other
 *   types; and, like vanilla, each socket read must hold exactly one packet or the connection is dropped.
 */
import { Buffer } from "node:buffer";
import * as net from "node:net";

export type WriteMode = "packet" | "coalesce" | "split";

export interface FakeSourceRconOptions {
  dialect?: "source" | "minecraft";
  password?: string;
  /** srcds' empty RESPONSE_VALUE before AUTH_RESPONSE; default on for `source`. */
  doubleAuthReply?: boolean;
  /**
   * How reply packets hit the wire: one write each (`packet`); everything produced for one incoming chunk in
   * one write (`coalesce`); each packet cut into small pieces written separately (`split`).
   */
  writeMode?: WriteMode;
  /** srcds: largest body per packet, in bytes. */
  maxBody?: number;
  handler?: (command: string) => string | Promise<string>;
}

const AUTH = 3;
const EXEC = 2;
const AUTH_RESPONSE = 2;
const RESPONSE_VALUE = 0;

function frame(id: number, type: number, body: Buffer | string): Buffer {
  const b = typeof body === "string" ? Buffer.from(body, "utf8") : body;
  const head = Buffer.alloc(12);
  head.writeInt32LE(b.length + 10, 0);
  head.writeInt32LE(id, 4);
  head.writeInt32LE(type, 8);
  return Buffer.concat([head, b, Buffer.from([0, 0])]);
}

/** srcds' second answer to the empty RESPONSE_VALUE: body `00 01 00 00`, no string terminators. */
function srcdsTrailer(id: number): Buffer {
  const b = Buffer.alloc(16);
  b.writeInt32LE(12, 0);
  b.writeInt32LE(id, 4);
  b.writeInt32LE(RESPONSE_VALUE, 8);
  b.set([0, 1, 0, 0], 12);
  return b;
}

const defaultHandler = (command: string): string => {
  const [name = "", ...rest] = command.split(" ");
  if (name === "echo") return rest.join(" ");
  return `Unknown command "${name}"\n`;
};

export class FakeSourceRconServer {
  readonly host = "127.0.0.1";
  port = 0;
  dialect: "source" | "minecraft";
  password: string;
  doubleAuthReply: boolean;
  writeMode: WriteMode;
  maxBody: number;
  handler: (command: string) => string | Promise<string>;
  /** Every executed command, in order. */
  commands: string[] = [];
  authAttempts = 0;
  connections = 0;
  /** Minecraft: reads that held more or less than one packet (vanilla drops the connection). */
  badReads = 0;
  #server?: net.Server;
  #sockets = new Set<net.Socket>();
  #commandWaiters: { command: string; resolve: () => void }[] = [];

  private constructor(o: FakeSourceRconOptions) {
    this.dialect = o.dialect ?? "source";
    this.password = o.password ?? "secret";
    this.doubleAuthReply = o.doubleAuthReply ?? this.dialect === "source";
    this.writeMode = o.writeMode ?? "packet";
    this.maxBody = o.maxBody ?? 4086;
    this.handler = o.handler ?? defaultHandler;
  }

  static async start(o: FakeSourceRconOptions = {}): Promise<FakeSourceRconServer> {
    const s = new FakeSourceRconServer(o);
    await s.#listen();
    return s;
  }

  /** Resolves once `command` has been received (already or later). */
  received(command: string): Promise<void> {
    if (this.commands.includes(command)) return Promise.resolve();
    return new Promise((resolve) => this.#commandWaiters.push({ command, resolve }));
  }

  /** Drops every connection (mid-command if one is running) and listens again on the same port. */
  async restart(): Promise<void> {
    await this.#shutdown();
    await this.#listen();
  }

  async close(): Promise<void> {
    await this.#shutdown();
  }

  async #shutdown(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    for (const s of this.#sockets) s.destroy();
    this.#sockets.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  #listen(): Promise<void> {
    const server = net.createServer((socket) => this.#accept(socket));
    this.#server = server;
    return new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, this.host, () => {
        const addr = server.address();
        if (addr && typeof addr === "object") this.port = addr.port;
        resolve();
      });
    });
  }

  #accept(socket: net.Socket): void {
    this.connections++;
    this.#sockets.add(socket);
    socket.setNoDelay(true);
    socket.on("close", () => this.#sockets.delete(socket));
    socket.on("error", () => {});
    let authed = false;
    let buf: Buffer = Buffer.alloc(0);
    // Requests are handled strictly in order, like both real servers do.
    let chain = Promise.resolve();

    socket.on("data", (chunk: Buffer) => {
      const packets: { id: number; type: number; body: string }[] = [];
      if (this.dialect === "minecraft") {
        // Vanilla: `read(buf, 0, 1460)`, then `if (size != read - 4) return;` — i.e. close the connection.
        if (chunk.length < 10 || chunk.length > 1460 || chunk.readInt32LE(0) !== chunk.length - 4) {
          this.badReads++;
          socket.destroy();
          return;
        }
        buf = chunk;
      } else {
        buf = Buffer.concat([buf, chunk]);
      }
      while (buf.length >= 4 && buf.length >= 4 + buf.readInt32LE(0)) {
        const size = buf.readInt32LE(0);
        const body = buf.subarray(12, 4 + size);
        const end = body.indexOf(0);
        packets.push({
          id: buf.readInt32LE(4),
          type: buf.readInt32LE(8),
          body: body.subarray(0, end < 0 ? body.length : end).toString("utf8"),
        });
        buf = buf.subarray(4 + size);
      }
      chain = chain.then(async () => {
        const out: Buffer[] = [];
        for (const p of packets) {
          if (p.type === AUTH) {
            this.authAttempts++;
            authed = p.body === this.password;
            if (this.doubleAuthReply) out.push(frame(p.id, RESPONSE_VALUE, ""));
            out.push(frame(authed ? p.id : -1, AUTH_RESPONSE, ""));
          } else if (p.type === EXEC && !authed) {
            out.push(frame(-1, AUTH_RESPONSE, ""));
          } else if (p.type === EXEC) {
            this.commands.push(p.body);
            for (const w of this.#commandWaiters.filter((w) => w.command === p.body)) w.resolve();
            const reply = await this.handler(p.body);
            out.push(...this.#replyPackets(p.id, reply));
          } else if (this.dialect === "minecraft") {
            out.push(frame(p.id, RESPONSE_VALUE, `Unknown request ${p.type.toString(16)}`));
          } else if (p.type === RESPONSE_VALUE) {
            out.push(frame(p.id, RESPONSE_VALUE, ""), srcdsTrailer(p.id));
          }
          if (this.writeMode !== "coalesce") await this.#write(socket, out.splice(0));
        }
        await this.#write(socket, out.splice(0));
      });
    });
  }

  #replyPackets(id: number, reply: string): Buffer[] {
    const packets: Buffer[] = [];
    if (this.dialect === "minecraft") {
      // Vanilla's sendCmdResponse: 4096-character substrings, at least one packet.
      let rest = reply;
      do {
        packets.push(frame(id, RESPONSE_VALUE, rest.slice(0, 4096)));
        rest = rest.slice(4096);
      } while (rest.length);
    } else {
      // srcds cuts bytes, so a UTF-8 character may straddle two packets.
      const bytes = Buffer.from(reply, "utf8");
      let off = 0;
      do {
        packets.push(frame(id, RESPONSE_VALUE, bytes.subarray(off, off + this.maxBody)));
        off += this.maxBody;
      } while (off < bytes.length);
    }
    return packets;
  }

  async #write(socket: net.Socket, packets: Buffer[]): Promise<void> {
    if (!packets.length || socket.destroyed) return;
    if (this.writeMode === "coalesce") {
      socket.write(Buffer.concat(packets));
      return;
    }
    for (const p of packets) {
      if (this.writeMode === "packet") {
        socket.write(p);
        continue;
      }
      // Cut inside the size field, inside the header and through the body, with a pause so each piece
      // arrives in its own read.
      const cuts = [2, 7];
      for (let c = 7 + 1000; c < p.length; c += 1000) cuts.push(c);
      let prev = 0;
      for (const c of [...cuts, p.length]) {
        if (c <= prev || socket.destroyed) continue;
        socket.write(p.subarray(prev, Math.min(c, p.length)));
        prev = Math.min(c, p.length);
        await new Promise((r) => setTimeout(r, 1));
      }
    }
  }
}
