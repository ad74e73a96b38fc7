/**
 * One connection to the plugin link: its state, how its peer is named, and how it is answered and dropped. Shared
 * by the link (plugin-link.ts), which serves the authenticated plugin, and its gate (hello-gate.ts), which handles
 * connections before their hello; here so that neither imports the other for it.
 */
import type * as net from "node:net";
import { encode } from "./plugin-protocol.ts";
import type { TransportError } from "./transport.ts";

export interface Conn {
  socket: net.Socket;
  peer: string;
  /** The peer's address without its port: what failed hellos are counted by. */
  address: string;
  authed: boolean;
  /** hub-agent's challenge to this connection (hex); its hello's HMAC covers it. */
  nonce: string;
  /** Dropped: the lines still buffered (sent in the same write as a refused hello) are not read. */
  dropped: boolean;
  /** Requests in flight by id. */
  pending: Map<number, { resolve(r: unknown): void; reject(e: Error): void }>;
  lastHeard: number;
}

/** A connection just accepted: not authenticated, nothing in flight. */
export function newConn(socket: net.Socket, peer: string, address: string, now: number): Conn {
  return { socket, peer, address, authed: false, nonce: "", dropped: false, pending: new Map(), lastHeard: now };
}

/** Closes a connection without reading more of it; its requests in flight fail with `error` when given. */
export function drop(conn: Conn, error?: TransportError): void {
  conn.dropped = true;
  if (error) for (const p of conn.pending.values()) p.reject(error);
  conn.pending.clear();
  conn.socket.end();
  conn.socket.destroySoon?.();
  // A peer that never reads must not hold the socket open.
  setTimeout(() => conn.socket.destroy(), 1000).unref?.();
}

/** Writes a message to the peer unless the socket is gone. */
export function reply(conn: Conn, message: Record<string, unknown>): void {
  if (!conn.socket.destroyed && conn.socket.writable) conn.socket.write(encode(message));
}

/** An IPv4 peer of a dual-stack listener is reported as ::ffff:a.b.c.d; it is the same address as a.b.c.d. */
export function plainAddress(address: string): string {
  return address.startsWith("::ffff:") && address.includes(".") ? address.slice(7) : address;
}

/** A host as it is written before `:port` (an IPv6 address in brackets). */
export function formatHost(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}
