/**
 * What the fakes of the UDP consoles (Quake 3 and DarkPlaces rcon) share: a socket on loopback (IPv4 or IPv6), the
 * commands the server ran, waiting for one, a restart on the same port, and replies that a restart loses. Also the
 * attacker of the spoofing tests: a socket elsewhere on loopback that forges the server's datagrams.
 */
import { Buffer } from "node:buffer";
import * as dgram from "node:dgram";
import type { LogLine } from "../../../lib/log.ts";

export const OOB = Buffer.from([0xff, 0xff, 0xff, 0xff]);

export abstract class UdpFake {
  port = 0;
  /** Every command the server ran, in order. */
  commands: string[] = [];
  /** Where the last request came from: the client's address and port, as an attacker on the host can see them. */
  client?: { address: string; port: number };
  #socket: dgram.Socket;
  #waiters: (() => void)[] = [];
  #busy = Promise.resolve();

  /** `host`: 127.0.0.1 (default), another loopback address, or ::1. */
  constructor(readonly host = "127.0.0.1") {
    this.#socket = socketFor(host);
  }

  /**
   * One datagram from a client (after `OOB`). `reply` sends `OOB` + a payload back to it, unless the server
   * restarted since the datagram came in (its answer is lost, as on a real restart).
   */
  protected abstract onDatagram(data: Buffer, reply: (payload: Buffer) => void, peer: dgram.RemoteInfo): Promise<void>;

  /** Records a command as run; `received` waits for this. */
  protected ran(command: string): void {
    this.commands.push(command);
    for (const w of this.#waiters.splice(0)) w();
  }

  /** Resolves once `command` has been run (already or later). */
  async received(command: string): Promise<void> {
    while (!this.commands.includes(command)) await new Promise<void>((resolve) => this.#waiters.push(resolve));
  }

  /** A server restart: the socket closes (a command being answered gets no reply) and binds the same port again. */
  async restart(): Promise<void> {
    await this.close();
    this.#busy = Promise.resolve(); // a new process: what the old one was stuck in is gone
    this.#socket = socketFor(this.host);
    await this.bind();
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.#socket.close(() => resolve()));
  }

  protected async bind(): Promise<void> {
    const socket = this.#socket;
    socket.on("message", (msg, rinfo) => {
      if (!msg.subarray(0, OOB.length).equals(OOB)) return;
      this.client = { address: rinfo.address, port: rinfo.port };
      const reply = (payload: Buffer) => {
        if (socket === this.#socket) socket.send(Buffer.concat([OOB, payload]), rinfo.port, rinfo.address);
      };
      // One datagram at a time, as the game's single thread reads them: a slow command holds up the next.
      this.#busy = this.#busy.then(() => this.onDatagram(msg.subarray(OOB.length), reply, rinfo)).catch(() => {});
    });
    await new Promise<void>((resolve) => socket.bind(this.port, this.host, () => resolve()));
    this.port = socket.address().port;
  }
}

const socketFor = (host: string) => dgram.createSocket(host.includes(":") ? "udp6" : "udp4");

/**
 * Someone else on the host who forges the server's datagrams (`OOB` + payload) to the client's port: from another
 * loopback address with the server's port, or from the server's address with another port.
 */
export class Attacker {
  /** Datagrams sent. */
  sent = 0;
  #floods: ReturnType<typeof setInterval>[] = [];

  private constructor(private socket: dgram.Socket) {}

  static async at(address: string, port = 0): Promise<Attacker> {
    const socket = socketFor(address);
    await new Promise<void>((resolve, reject) => {
      socket.once("error", reject);
      socket.bind(port, address, () => resolve());
    });
    return new Attacker(socket);
  }

  get from(): string {
    const { address, port } = this.socket.address();
    return `${address}:${port}`;
  }

  send(to: { address: string; port: number }, payload: string | Buffer): Promise<void> {
    this.sent++;
    return new Promise((resolve) =>
      this.socket.send(Buffer.concat([OOB, Buffer.from(payload)]), to.port, to.address, () => resolve()),
    );
  }

  /** Sends `payload` every `everyMs` until stop or close. */
  flood(to: { address: string; port: number }, payload: string | Buffer, everyMs: number): void {
    void this.send(to, payload);
    this.#floods.push(setInterval(() => void this.send(to, payload), everyMs));
  }

  stop(): void {
    for (const f of this.#floods.splice(0)) clearInterval(f);
  }

  close(): Promise<void> {
    this.stop();
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }
}

/**
 * Where an attacker on the same host can send from (issue 17): another loopback address with the game's port, the
 * game's own address with another port, and on IPv6 (::1 is the only loopback address) the game's address with
 * another port. `host` is where the game listens.
 */
export const ATTACKERS = [
  { where: "127.0.0.2 with the game's port", host: "127.0.0.1", at: (port: number) => Attacker.at("127.0.0.2", port) },
  { where: "127.0.0.1 (the game's address) with another port", host: "127.0.0.1", at: () => Attacker.at("127.0.0.1") },
  { where: "::1 (the game's address) with another port", host: "::1", at: () => Attacker.at("::1") },
];

/** The transport's warnings of datagrams that reached the process from elsewhere (none where the kernel drops them). */
export const strays = (lines: LogLine[]) => lines.filter((l) => l.msg.includes("did not come from the game server"));
