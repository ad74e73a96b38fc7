import { Buffer } from "node:buffer";
import { TransportError } from "./transport.ts";

/** Packet types. 2 is EXECCOMMAND client→server and AUTH_RESPONSE server→client. */
export const SERVERDATA_AUTH = 3;
export const SERVERDATA_EXECCOMMAND = 2;
export const SERVERDATA_AUTH_RESPONSE = 2;
export const SERVERDATA_RESPONSE_VALUE = 0;

/** size counts id + type + body + two NULs, so an empty body gives 10. */
const MIN_SIZE = 10;
/** Valve caps packets at 4096; stay lenient with servers that don't, but bound memory. */
const MAX_SIZE = 1024 * 1024;

export interface Packet {
  id: number;
  type: number;
  body: Buffer;
}

export function encodePacket(id: number, type: number, body: string | Uint8Array): Buffer {
  const bytes = typeof body === "string" ? Buffer.from(body, "utf8") : body;
  const out = Buffer.alloc(4 + MIN_SIZE + bytes.length);
  out.writeInt32LE(MIN_SIZE + bytes.length, 0);
  out.writeInt32LE(id, 4);
  out.writeInt32LE(type, 8);
  out.set(bytes, 12);
  // the last two bytes stay 0: body terminator and the empty second string
  return out;
}

/** Streaming framer: TCP may deliver half a packet or several packets in one chunk. */
export class PacketReader {
  #buf: Buffer = Buffer.alloc(0);

  /** Returns every packet completed by `chunk`; throws a `protocol` TransportError on a bad size field. */
  push(chunk: Uint8Array): Packet[] {
    this.#buf = this.#buf.length ? Buffer.concat([this.#buf, chunk]) : Buffer.from(chunk);
    const packets: Packet[] = [];
    while (this.#buf.length >= 4) {
      const size = this.#buf.readInt32LE(0);
      // Valve's minimum is 10, but id + type (8) is all we need; be lenient with servers that skip the NULs.
      if (size < 8 || size > MAX_SIZE) throw new TransportError("protocol", `invalid RCON packet size ${size}`);
      if (this.#buf.length < 4 + size) break;
      const frame = this.#buf.subarray(4, 4 + size);
      packets.push({ id: frame.readInt32LE(0), type: frame.readInt32LE(4), body: stripNuls(frame.subarray(8)) });
      this.#buf = this.#buf.subarray(4 + size);
    }
    return packets;
  }
}

/** Drops the body terminator and the empty second string (at most two trailing NULs). */
function stripNuls(b: Buffer): Buffer {
  let end = b.length;
  for (let i = 0; i < 2 && end > 0 && b[end - 1] === 0; i++) end--;
  return Buffer.from(b.subarray(0, end));
}
