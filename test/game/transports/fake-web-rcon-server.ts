/**
 * A Rust WebRCON server for tests (docs/game-consoles.md §2.6), on Bun.serve: the password is the URL path (a
 * wrong one is refused at the upgrade with 401), a request `{Identifier, Message, Name}` gets its reply with the
 * same Identifier, and `broadcast`/`chat` send what every client sees with Identifier 0.
 */
import type { Server, ServerWebSocket } from "bun";

export interface FakeWebRconOptions {
  password?: string;
  handler?: (command: string) => string | Promise<string>;
}

export class FakeWebRconServer {
  readonly host = "127.0.0.1";
  port = 0;
  commands: string[] = [];
  connections = 0;
  #server?: Server<undefined>;
  #sockets = new Set<ServerWebSocket<undefined>>();
  #waiters: (() => void)[] = [];

  private constructor(private o: FakeWebRconOptions) {}

  static async start(o: FakeWebRconOptions = {}): Promise<FakeWebRconServer> {
    const s = new FakeWebRconServer(o);
    s.#listen();
    return s;
  }

  async received(command: string): Promise<void> {
    while (!this.commands.includes(command)) await new Promise<void>((resolve) => this.#waiters.push(resolve));
  }

  /** A console line, as Rust broadcasts every one. */
  broadcast(message: string, type = "Generic"): void {
    for (const ws of this.#sockets)
      ws.send(JSON.stringify({ Identifier: 0, Message: message, Type: type, Stacktrace: "" }));
  }

  /** A chat message: `Type: "Chat"`, its Message a JSON object of its own. */
  chat(userId: string, username: string, message: string): void {
    const json = JSON.stringify({
      Channel: 0,
      Message: message,
      UserId: userId,
      Username: username,
      Color: "#5af",
      Time: 0,
    });
    this.broadcast(json, "Chat");
  }

  /** Drops every connection (a command being answered gets no reply) and listens again on the same port. */
  async restart(): Promise<void> {
    await this.close();
    this.#listen();
  }

  async close(): Promise<void> {
    for (const ws of this.#sockets) ws.close();
    this.#sockets.clear();
    await this.#server?.stop(true);
    this.#server = undefined;
  }

  #listen(): void {
    const password = this.o.password ?? "secret";
    this.#server = Bun.serve<undefined, never>({
      hostname: this.host,
      port: this.port,
      fetch: (req, server) => {
        if (decodeURIComponent(new URL(req.url).pathname.slice(1)) !== password)
          return new Response("Unauthorized", { status: 401 });
        return server.upgrade(req) ? undefined : new Response("Upgrade Required", { status: 426 });
      },
      websocket: {
        open: (ws) => {
          this.connections++;
          this.#sockets.add(ws);
        },
        close: (ws) => void this.#sockets.delete(ws),
        message: async (ws, raw) => {
          const req = JSON.parse(String(raw)) as { Identifier: number; Message: string };
          this.commands.push(req.Message);
          for (const w of this.#waiters.splice(0)) w();
          const reply = await (this.o.handler ?? ((c: string) => c))(req.Message);
          if (this.#sockets.has(ws))
            ws.send(JSON.stringify({ Identifier: req.Identifier, Message: reply, Type: "Generic", Stacktrace: "" }));
        },
      },
    });
    this.port = this.#server.port ?? 0;
  }
}
