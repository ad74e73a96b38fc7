/**
 * A game-server plugin for tests, speaking the plugin protocol as docs/plugin-protocol.md tells plugin authors to:
 * it connects to hub-agent, answers the challenge with an HMAC of its token, checks hub-agent's proof in the
 * welcome (a listener that can't give it is dropped), answers every `req` with one `res` (exec through `handler`:
 * `hang` is never answered), answers `ping` with `pong`, and reconnects with a short backoff whenever the connection
 * ends (a refused token included). Tests push events and raw lines through it.
 */
import { createHmac, randomBytes } from "node:crypto";
import * as net from "node:net";

/** HMAC-SHA256(token, side + hub-agent's nonce + the plugin's nonce), hex (docs/plugin-protocol.md §4.1). */
export function proof(token: string, side: "plugin" | "agent", agentNonce: string, pluginNonce: string): string {
  return createHmac("sha256", token)
    .update(side + agentNonce + pluginNonce)
    .digest("hex");
}

/** The hello line a plugin with `token` answers a challenge's `nonce` with; `nonce` (the plugin's) is fresh. */
export function helloLine(agentNonce: string, token: string, nonce = randomBytes(32).toString("hex")): string {
  return `${JSON.stringify({ t: "hello", v: 2, nonce, mac: proof(token, "plugin", agentNonce, nonce) })}\n`;
}

export interface FakePluginOptions {
  host?: string;
  port: number;
  token: string;
  /** What `exec` prints; a rejected promise is an `"ok": false` reply. */
  handler?: (command: string) => string | Promise<string>;
  /** What `players` lists. */
  players?: () => { id: string; name: string; slot?: string }[];
  /** Reconnect delay (default 20 ms). */
  backoffMs?: number;
}

export interface ReceivedRequest {
  id: number;
  op: string;
  [key: string]: unknown;
}

export class FakePlugin {
  /** Every request received, in order. */
  requests: ReceivedRequest[] = [];
  /** Every message hub-agent sent (welcome, errors, pings…). */
  messages: Record<string, unknown>[] = [];
  #socket?: net.Socket;
  #closed = false;
  #welcomed = false;
  #waiters = new Set<() => void>();
  /** Requests received but answered only when the test says (`hold`). */
  #held = new Set<string>();

  private constructor(private o: FakePluginOptions) {}

  static start(o: FakePluginOptions): FakePlugin {
    const p = new FakePlugin(o);
    p.#connect();
    return p;
  }

  /** Resolves once hub-agent has welcomed this plugin on its current connection. */
  async connected(): Promise<void> {
    while (!this.#welcomed) await this.#change();
  }

  /** Resolves once a request matching `match` has arrived. */
  async request(match: (r: ReceivedRequest) => boolean): Promise<ReceivedRequest> {
    for (;;) {
      const found = this.requests.find(match);
      if (found) return found;
      await this.#change();
    }
  }

  async received(command: string): Promise<void> {
    await this.request((r) => r.op === "exec" && r.cmd === command);
  }

  /** Resolves once hub-agent has sent a message matching `match`. */
  async message(match: (m: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
    for (;;) {
      const found = this.messages.find(match);
      if (found) return found;
      await this.#change();
    }
  }

  /** Sends an event: `event("player_connect", { p: { id, name } })`. */
  event(e: string, fields: Record<string, unknown>): void {
    this.send({ t: "event", e, ...fields });
  }

  send(message: Record<string, unknown>): void {
    this.raw(`${JSON.stringify(message)}\n`);
  }

  raw(text: string | Uint8Array): void {
    this.#socket?.write(text);
  }

  /** The game server restarts: the connection drops (unanswered requests stay so), then the plugin comes back. */
  async restart(): Promise<void> {
    this.#socket?.destroy();
    await this.connected();
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#socket?.destroy();
  }

  #connect(): void {
    if (this.#closed) return;
    this.#welcomed = false;
    const socket = net.connect({ host: this.o.host ?? "127.0.0.1", port: this.o.port });
    this.#socket = socket;
    let partial = "";
    const nonces = { agent: "", plugin: randomBytes(32).toString("hex") };
    socket.setEncoding("utf8");
    socket.on("data", (text: string) => {
      const lines = (partial + text).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) if (line.trim()) this.#message(socket, nonces, JSON.parse(line));
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      if (this.#socket === socket) this.#welcomed = false;
      this.#notify();
      if (this.#socket === socket) setTimeout(() => this.#connect(), this.o.backoffMs ?? 20);
    });
  }

  #message(socket: net.Socket, nonces: { agent: string; plugin: string }, m: Record<string, unknown>): void {
    this.messages.push(m);
    if (m.t === "challenge" && !nonces.agent) {
      nonces.agent = String(m.nonce);
      const hello = JSON.parse(helloLine(nonces.agent, this.o.token, nonces.plugin));
      this.send({ ...hello, game: "test", software: "fake-plugin" });
    }
    if (m.t === "welcome") {
      if (!nonces.agent || m.mac !== proof(this.o.token, "agent", nonces.agent, nonces.plugin)) socket.destroy();
      else this.#welcomed = true;
    }
    if (m.t === "ping") this.send({ t: "pong" });
    if (m.t === "req" && this.#welcomed) {
      const req = m as ReceivedRequest;
      this.requests.push(req);
      void this.#answer(socket, req);
    }
    this.#notify();
  }

  async #answer(socket: net.Socket, req: ReceivedRequest): Promise<void> {
    const res = (body: Record<string, unknown>) => {
      if (this.#socket === socket && !socket.destroyed)
        socket.write(`${JSON.stringify({ t: "res", id: req.id, ...body })}\n`);
    };
    try {
      switch (req.op) {
        case "exec": {
          const cmd = String(req.cmd);
          if (cmd === "hang" || this.#held.has(cmd)) return;
          return res({ ok: true, r: { output: await (this.o.handler ?? ((c) => c))(cmd) } });
        }
        case "players":
          return res({ ok: true, r: { players: this.o.players?.() ?? [], max: 20 } });
        case "kick":
        case "message":
        case "group":
          return res({ ok: true, r: null });
        default:
          return res({ ok: false, err: `unknown op ${req.op}` });
      }
    } catch (e) {
      res({ ok: false, err: e instanceof Error ? e.message : String(e) });
    }
  }

  #change(): Promise<void> {
    return new Promise((resolve) => this.#waiters.add(resolve));
  }

  #notify(): void {
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const w of waiters) w();
  }
}
