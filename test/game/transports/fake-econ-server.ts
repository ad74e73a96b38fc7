/**
 * An econ server for tests, as the real ones behave (checked against teeworlds-server 0.7.5 and DDNet-Server 16.4):
 * the `Enter password:` prompt, `Wrong password N/3.`, then every console line followed by two NULs.
 * - `teeworlds` (default): lines are `[hh:mm:ss][category]: text`; a command is echoed as
 *   `[server]: cid=0 cmd='…'` and `echo x` prints `[Console]: x`.
 * - `ddnet`: lines are `yyyy-mm-dd hh:mm:ss I category: text`; the login is followed by the last line the console
 *   printed before it (DDNet sends one), commands are not echoed, and `echo x` prints `console: x`.
 * `;` separates commands outside quotes. `hang` stops the server reading (a stuck server). A line longer than
 * 1,398 bytes drops the connection, as both servers do ("too weak connection (out of buffer)": their econ reads
 * into a 1,400-byte buffer that must hold a whole line and its line break); the unread rest makes it a reset.
 */
import * as net from "node:net";

export type EconDialect = "teeworlds" | "ddnet";

/** The longest line both servers' econ reads (measured on teeworlds-server 0.7.5 and DDNet-Server 16.4). */
const MAX_LINE_BYTES = 1398;

export interface FakeEconOptions {
  password?: string;
  dialect?: EconDialect;
  /** The console lines a command prints, as [category, text] pairs (default: echo only); the console waits for them. */
  handler?: (command: string) => [string, string][] | Promise<[string, string][]>;
}

export class FakeEconServer {
  readonly host = "127.0.0.1";
  port = 0;
  commands: string[] = [];
  #server?: net.Server;
  #sockets = new Set<net.Socket>();
  #waiters: (() => void)[] = [];

  private constructor(private o: FakeEconOptions) {}

  static async start(o: FakeEconOptions = {}): Promise<FakeEconServer> {
    const s = new FakeEconServer(o);
    await s.#listen();
    return s;
  }

  async received(command: string): Promise<void> {
    while (!this.commands.includes(command)) await new Promise<void>((resolve) => this.#waiters.push(resolve));
  }

  /** The clients connected now. */
  get connections(): number {
    return this.#sockets.size;
  }

  /** Every connection reset at once, the listener kept (a server whose network dropped its connections). */
  reset(): void {
    for (const s of this.#sockets) s.resetAndDestroy();
  }

  /** A console line every authenticated client sees (a join, a chat line). */
  broadcast(category: string, text: string): void {
    for (const s of this.#sockets)
      if ((s as net.Socket & { authed?: boolean }).authed) s.write(this.#line(category, text));
  }

  #line(category: string, text: string): string {
    const now = new Date().toISOString();
    return this.o.dialect === "ddnet"
      ? `${now.slice(0, 10)} ${now.slice(11, 19)} I ${category}: ${text}\n\0\0`
      : `[${now.slice(11, 19)}][${category}]: ${text}\n\0\0`;
  }

  async restart(): Promise<void> {
    await this.close();
    await this.#listen();
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    this.#sockets.clear();
    const server = this.#server;
    this.#server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  #listen(): Promise<void> {
    const server = (this.#server = net.createServer((s) => this.#accept(s)));
    return new Promise((resolve) =>
      server.listen(this.port, this.host, () => {
        this.port = (server.address() as net.AddressInfo).port;
        resolve();
      }),
    );
  }

  #accept(socket: net.Socket & { authed?: boolean }): void {
    this.#sockets.add(socket);
    socket.on("close", () => this.#sockets.delete(socket));
    socket.on("error", () => {});
    socket.write("Enter password:\n\0\0");
    const ddnet = this.o.dialect === "ddnet";
    let wrong = 0;
    let buf = "";
    let stuck = false;
    let dropping = false;
    // The server's one thread: a line is read once the one before it is done.
    let busy = Promise.resolve();
    socket.on("data", (chunk) => {
      if (stuck || dropping) return;
      buf += chunk.toString("utf8");
      const lines = buf.split("\n");
      buf = lines.pop() ?? "";
      // The lines before an overlong one are read; then the connection drops.
      const overlong = [...lines, buf].findIndex((l) => Buffer.byteLength(l) > MAX_LINE_BYTES);
      if (overlong >= 0) dropping = true;
      const complete = overlong >= 0 ? lines.slice(0, overlong) : lines;
      busy = busy
        .then(() => read(complete))
        .catch(() => {})
        .then(() => void (overlong >= 0 && socket.resetAndDestroy()));
    });
    const read = async (lines: string[]) => {
      for (const input of lines) {
        if (stuck) return;
        if (!socket.authed) {
          if (input === (this.o.password ?? "secret")) {
            socket.authed = true;
            socket.write("Authentication successful. External console access granted.\n\0\0");
            if (ddnet) socket.write(this.#line("server", "version 16.4 on linux amd64"));
            socket.write(this.#line("econ", "cid=0 authed"));
          } else {
            socket.write(`Wrong password ${++wrong}/3.\n\0\0`);
            if (wrong >= 3) socket.destroy();
          }
          continue;
        }
        if (!ddnet) socket.write(this.#line("server", `cid=0 cmd='${input}'`));
        for (const command of splitCommands(input)) {
          this.commands.push(command);
          for (const w of this.#waiters.splice(0)) w();
          if (command === "hang") {
            stuck = true;
            return;
          }
          const echo = /^echo (.*)$/.exec(command);
          const out = echo
            ? [[ddnet ? "console" : "Console", unquote(echo[1]!)] as [string, string]]
            : ((await this.o.handler?.(command)) ?? []);
          for (const [category, text] of out) if (!socket.destroyed) socket.write(this.#line(category, text));
        }
      }
    };
  }
}

/** Commands of one line: `;` outside double quotes separates them. */
function splitCommands(input: string): string[] {
  const out: string[] = [];
  let current = "";
  let quoted = false;
  for (let i = 0; i < input.length; i++) {
    const c = input[i]!;
    if (c === "\\" && quoted) {
      current += c + (input[++i] ?? "");
      continue;
    }
    if (c === '"') quoted = !quoted;
    if (c === ";" && !quoted) {
      out.push(current.trim());
      current = "";
    } else current += c;
  }
  out.push(current.trim());
  return out.filter(Boolean);
}

const unquote = (s: string) => (s.startsWith('"') && s.endsWith('"') ? s.slice(1, -1).replace(/\\(.)/g, "$1") : s);
