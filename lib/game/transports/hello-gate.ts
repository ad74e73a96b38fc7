/**
 * The plugin link's gate (docs/plugin-protocol.md §4.1): everything that faces a peer before it has proven it knows
 * the token. Who is let in before a line is read (hello-throttle.ts is the policy), how many connections may wait
 * for their hello and how long, whether a hello is correct, and what a failed one costs and logs. Separate from
 * plugin-link.ts, which serves the plugin once it is in.
 *
 * The token never crosses the wire: whoever holds the port while hub-agent is down hears the plugin's hello, so a
 * hello proves the token with an HMAC over a fresh challenge instead, and the welcome proves it back to the plugin.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type * as net from "node:net";
import type { Clock } from "../../clock.ts";
import type { Logger } from "../../log.ts";
import { RepeatedWarnings } from "../../repeated-warnings.ts";
import { type Conn, drop, reply } from "./plugin-conn.ts";
import { encode, type PluginMessage, PROTOCOL_VERSION } from "./plugin-protocol.ts";
import { type Admission, HelloThrottle, type HelloLimits } from "./hello-throttle.ts";
import { TransportError } from "./transport.ts";

/** Before hello, lines are short: an unauthenticated peer can't make hub-agent buffer much. */
export const MAX_HELLO_BYTES = 4096;
/** Connections waiting for their hello at once; a newer one closes the oldest. */
const MAX_PENDING = 8;

type Hello = Extract<PluginMessage, { t: "hello" }>;

export interface HelloGateOptions {
  token: string;
  clock: Clock;
  /** The link's logger. */
  log: Logger;
  /** How often the token may be tried (default HELLO_LIMITS). */
  limits?: Partial<HelloLimits> | undefined;
  /** A wrong token was presented: the callers waiting for a plugin are told (with this error). */
  onWrongToken(error: TransportError): void;
}

export class HelloGate {
  /** Connections waiting for their hello. */
  readonly pending = new Set<Conn>();
  #o: HelloGateOptions;
  #log: Logger;
  #throttle: HelloThrottle;
  /** Lines about failed and refused hellos: one per address and minute, the rest counted. */
  #hellos: RepeatedWarnings;
  #token: string;

  constructor(o: HelloGateOptions) {
    this.#o = o;
    this.#log = o.log;
    this.#token = o.token;
    const { clock } = o;
    this.#throttle = new HelloThrottle(() => clock.monotonic(), o.limits);
    this.#hellos = new RepeatedWarnings(this.#log, clock, { what: "failed or refused hellos" });
  }

  /**
   * Whether a new connection may say hello: false when it was refused (answered and closed) before anything is
   * read. Admitting one into a full waiting room closes the oldest waiting connection.
   */
  admit(socket: net.Socket, address: string): boolean {
    // Refused before anything is read: a throttled address can't even get a line parsed.
    const waiting = { here: 0, untrusted: 0 };
    for (const c of this.pending) {
      if (c.address === address) waiting.here++;
      if (!this.#throttle.trusted(c.address)) waiting.untrusted++;
    }
    const admission = this.#throttle.admit(address, waiting);
    if (!admission.ok) {
      this.#refuse(socket, address, admission);
      return false;
    }
    // Full: the oldest waiting peer goes, not the newcomer, so peers that connect and stay silent can't keep the
    // plugin (which says hello as soon as it connects) out for good; one from an address that never said a correct
    // hello goes first, so a flood from many addresses can't push out the returning plugin.
    if (this.pending.size >= MAX_PENDING) {
      const pending = [...this.pending];
      const oldest = pending.find((c) => !this.#throttle.trusted(c.address)) ?? pending[0]!;
      this.#hellos.warn(
        oldest.address,
        `${MAX_PENDING} connections are waiting for their hello: the oldest, from ${oldest.peer}, closed`,
        "pending",
      );
      this.pending.delete(oldest);
      drop(oldest);
      oldest.socket.destroy();
    }
    return true;
  }

  /** The greeting: a fresh nonce the hello's HMAC must cover, so a hello heard elsewhere is useless here. */
  challenge(conn: Conn): void {
    conn.nonce = randomBytes(32).toString("hex");
    reply(conn, { t: "challenge", v: PROTOCOL_VERSION, nonce: conn.nonce });
  }

  /** A connection has `ms` to say hello; aborting the returned controller (at close) stops the wait. */
  deadline(conn: Conn, ms: number): AbortController {
    const hello = new AbortController();
    this.#o.clock.sleep(ms, hello.signal).then(
      () => {
        if (conn.authed || conn.socket.destroyed) return;
        this.failed(conn, `a connection from ${conn.peer} sent no hello within ${ms} ms: closed`, {
          error: "hello_timeout",
          message: "answer the challenge with a hello first",
        });
      },
      () => {},
    );
    return hello;
  }

  /** A connection's first message: true when it is a correct hello (the connection is in); else it is closed. */
  hello(conn: Conn, m: PluginMessage): m is Hello {
    if (m.t !== "hello") {
      this.failed(conn, `a connection from ${conn.peer} spoke before its hello: closed`, {
        error: "hello_first",
        message: "answer the challenge with a hello first",
      });
      return false;
    }
    if (m.v !== PROTOCOL_VERSION) {
      const update = m.v < PROTOCOL_VERSION ? "update the plugin" : "update hub-agent";
      this.failed(
        conn,
        `the plugin at ${conn.peer} speaks protocol version ${m.v}; this hub-agent speaks ${PROTOCOL_VERSION}: ${update}: closed`,
        {
          error: "version",
          message: `this hub-agent speaks protocol version ${PROTOCOL_VERSION}, in which the token never crosses the wire: ${update} (docs/plugin-protocol.md §4.1)`,
        },
      );
      return false;
    }
    // Both are 32 bytes (the parser checked the hex), so the comparison takes one time whatever the mac.
    if (!timingSafeEqual(Buffer.from(m.mac, "hex"), mac(this.#token, "plugin", conn.nonce, m.nonce))) {
      const err = new TransportError(
        "auth",
        `the plugin at ${conn.peer} presented a wrong token: copy game.rcon.password into the plugin's settings`,
        { written: false },
      );
      // The link keeps it for later callers and rejects those waiting (their handlers run after this turn).
      this.#o.onWrongToken(err);
      this.failed(conn, err.message, { error: "auth", message: "wrong token" });
      return false;
    }
    conn.authed = true;
    this.#throttle.succeeded(conn.address);
    this.pending.delete(conn);
    return true;
  }

  /** The welcome to a correct hello: hub-agent's own proof that it knows the token, which the plugin checks. */
  welcome(conn: Conn, m: Hello): Record<string, unknown> {
    return { t: "welcome", v: PROTOCOL_VERSION, mac: mac(this.#token, "agent", conn.nonce, m.nonce).toString("hex") };
  }

  /** A hello that failed: logged (counted past the first of its address this minute), answered, closed. */
  failed(conn: Conn, line: string, answer: { error: string; message: string }): void {
    const { count, waitMs, lockedOut } = this.#throttle.failed(conn.address);
    this.#hellos.warn(conn.address, `${line} (${count} failed in a row from ${conn.address})`, "failed");
    // A lockout is rare (every address's failures share a budget), and the operator must learn why the plugin waits.
    if (lockedOut && count === this.#throttle.limits.lockoutAfter)
      this.#log.warn(
        `${count} failed hellos in a row from ${conn.address}: its connections are refused for ${seconds(waitMs)} ` +
          `(a restart of hub-agent lifts it)`,
      );
    reply(conn, { t: "error", ...answer });
    drop(conn);
  }

  /** Closes a connection without reading it, telling the peer why and when to try again. */
  #refuse(socket: net.Socket, address: string, no: Exclude<Admission, { ok: true }>): void {
    const wait = seconds(no.retryMs);
    const why = {
      delayed: `its last hello failed: the next is read in ${wait}`,
      locked_out: `too many of its hellos failed: refused for ${wait}`,
      pending: `${this.#throttle.limits.pendingPerAddress} of its connections are waiting for their hello`,
      budget: `too many hellos failed lately, from several addresses: a new address waits ${wait}`,
    }[no.why];
    this.#hellos.warn(address, `refused a connection from ${address} before reading it: ${why}`, "refused");
    socket.on("error", () => {});
    socket.end(encode({ t: "error", error: "throttled", message: `${address}: ${why}` }));
    setTimeout(() => socket.destroy(), 1000).unref?.();
  }

  close(): void {
    this.#hellos.close();
  }
}

/**
 * HMAC-SHA256(token, side + agent's nonce + plugin's nonce). Each side's name keeps one side's proof from being
 * replayed as the other's; both nonces make each proof good for this connection only.
 */
export function mac(token: string, side: "plugin" | "agent", agentNonce: string, pluginNonce: string): Buffer {
  return createHmac("sha256", token)
    .update(side + agentNonce + pluginNonce, "utf8")
    .digest();
}

function seconds(ms: number): string {
  const s = Math.max(1, Math.ceil(ms / 1000));
  return s >= 120 ? `${Math.round(s / 60)} min` : `${s} s`;
}
