/**
 * What the fakes of the UDP consoles (Quake 3 and DarkPlaces rcon) share: a socket on loopback, the commands the
 * server ran, waiting for one, a restart on the same port, and replies that a restart loses.
 */
import { Buffer } from "node:buffer";
import * as dgram from "node:dgram";

export const OOB = Buffer.from([0xff, 0xff, 0xff, 0xff]);

export abstract class UdpFake {
  readonly host = "127.0.0.1";
  port = 0;
  /** Every command the server ran, in order. */
  commands: string[] = [];
  #socket = dgram.createSocket("udp4");
  #waiters: (() => void)[] = [];

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
    this.#socket = dgram.createSocket("udp4");
    await this.bind();
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.#socket.close(() => resolve()));
  }

  protected async bind(): Promise<void> {
    const socket = this.#socket;
    socket.on("message", (msg, rinfo) => {
      if (!msg.subarray(0, OOB.length).equals(OOB)) return;
      const reply = (payload: Buffer) => {
        if (socket === this.#socket) socket.send(Buffer.concat([OOB, payload]), rinfo.port, rinfo.address);
      };
      void this.onDatagram(msg.subarray(OOB.length), reply, rinfo);
    });
    await new Promise<void>((resolve) => socket.bind(this.port, this.host, () => resolve()));
    this.port = socket.address().port;
  }
}
