/**
 * Real game clients for the end-to-end tests: Debian's OpenArena and Nexuiz clients, each on its own virtual display
 * (Xvfb, software GL), a real human player beside the servers' bots. A test reads what the player sees from the
 * client's own console output and types console commands (`say …`, `reconnect`) into it: OpenArena's client reads
 * them from its stdin, Nexuiz's from a key bound to a file of commands, pressed with xdotool. Every process is
 * started through ./procs.ts (scope "file"), so a failing test still stops the clients and their displays.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawn } from "./procs.ts";
import { until } from "./until.ts";

export const XVFB = "/usr/bin/Xvfb";
export const XDOTOOL = "/usr/bin/xdotool";

/** Why a real-client test can't run here (the client, Xvfb, `more` programs by their Debian package), or undefined. */
export function clientMissing(
  client: string,
  packageName: string,
  more: Record<string, string> = {},
): string | undefined {
  const needs = { [client]: packageName, ...more, [XVFB]: "xvfb" };
  const missing = Object.entries(needs).filter(([path]) => !existsSync(path));
  if (missing.length === 0) return undefined;
  return (
    `needs ${missing.map(([path]) => path).join(" and ")} (Debian packages ` +
    `${[...missing.map(([, pkg]) => pkg), "libgl1-mesa-dri"].join(", ")}; .ci/run installs them as root)`
  );
}

/** A virtual display of its own: Xvfb picks a free display number and says which (`-displayfd`). */
export async function startDisplay(): Promise<{ display: string; stop: () => Promise<void> }> {
  const xvfb = spawn([XVFB, "-displayfd", "1", "-screen", "0", "640x480x24", "-nolisten", "tcp"], {
    stdout: "pipe",
    stderr: "ignore",
    scope: "file",
  });
  const reader = xvfb.stdout.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`Xvfb exited (${await xvfb.exited}) before it named its display`);
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return {
    display: `:${text.trim()}`,
    stop: async () => {
      xvfb.kill("SIGTERM");
      await xvfb.exited;
    },
  };
}

/** What every client needs: the display, software GL, no sound device, its files under `home`. */
export function clientEnv(display: string, home: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "",
    HOME: home,
    DISPLAY: display,
    LIBGL_ALWAYS_SOFTWARE: "1",
    SDL_AUDIODRIVER: "dummy",
  };
}

/** A terminal colour code (DarkPlaces prints its colours so). */
const ANSI_COLOUR = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g");

/**
 * A running game client: `lines` is its console output (stdout and stderr, terminal colours removed), `type` runs a
 * console command in it (by default written to its stdin), `stop` ends it.
 */
export class GameClient {
  readonly lines: string[] = [];
  readonly #proc: ReturnType<typeof spawnClient>;
  readonly #typeVia: ((command: string, pid: number) => void) | undefined;

  constructor(command: string[], env: Record<string, string>, typeVia?: (command: string, pid: number) => void) {
    this.#proc = spawnClient(command, env);
    this.#typeVia = typeVia;
    for (const stream of [this.#proc.stdout, this.#proc.stderr]) void this.#read(stream);
  }

  async #read(stream: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let rest = "";
    for await (const chunk of stream) {
      const parts = (rest + decoder.decode(chunk, { stream: true })).split("\n");
      rest = parts.pop() ?? "";
      this.lines.push(...parts.map((l) => l.replace(/\r$/, "").replace(ANSI_COLOUR, "")));
    }
    if (rest) this.lines.push(rest);
  }

  get pid(): number {
    return this.#proc.pid;
  }

  get exitCode(): number | null {
    return this.#proc.exitCode;
  }

  /** A console command, as typed at the client's console. */
  type(command: string): void {
    if (this.#typeVia) return this.#typeVia(command, this.#proc.pid);
    this.#proc.stdin.write(`${command}\n`);
    void this.#proc.stdin.flush();
  }

  /** How many console lines hold `text`. */
  count(text: string): number {
    return this.lines.filter((l) => l.includes(text)).length;
  }

  /** Waits until `n` console lines hold `text` (a software-GL client is slow: minutes, not seconds). */
  async sees(
    text: string,
    what: string,
    opts: { n?: number; timeoutMs?: number; diagnostics?: () => string } = {},
  ): Promise<void> {
    await until(() => this.count(text) >= (opts.n ?? 1), what, {
      timeoutMs: opts.timeoutMs ?? 90_000,
      everyMs: 100,
      abort: () => (this.exitCode !== null ? `the client exited with ${this.exitCode}` : undefined),
      diagnostics: () =>
        `the client's last lines:\n${this.lines.slice(-15).join("\n")}${opts.diagnostics ? `\n${opts.diagnostics()}` : ""}`,
    });
  }

  /**
   * Types `command` every 2 s until a console line holds `seen`: a client that just entered the game may drop what
   * is typed before it is fully in (a `say` typed as OpenArena's client entered the game reached nobody).
   */
  async retype(command: string, seen: string, what: string, timeoutMs = 90_000): Promise<void> {
    let last = -Infinity;
    await until(
      () => {
        if (this.count(seen) > 0) return true;
        if (performance.now() - last >= 2000) {
          this.type(command);
          last = performance.now();
        }
        return false;
      },
      what,
      {
        timeoutMs,
        everyMs: 100,
        abort: () => (this.exitCode !== null ? `the client exited with ${this.exitCode}` : undefined),
      },
    );
  }

  /** Ends the client: SIGTERM, and SIGKILL 5 s later (an OpenArena client once ignored SIGTERM here). */
  async stop(): Promise<void> {
    this.#proc.kill("SIGTERM");
    const killed = await Promise.race([this.#proc.exited.then(() => true), Bun.sleep(5000).then(() => false)]);
    if (!killed) this.#proc.kill("SIGKILL");
    await this.#proc.exited;
  }
}

function spawnClient(command: string[], env: Record<string, string>) {
  return spawn(command, { env, stdin: "pipe", stdout: "pipe", stderr: "pipe", scope: "file" });
}

export const OPENARENA_CLIENT = process.env.HUB_OPENARENA_CLIENT ?? "/usr/games/openarena";

/**
 * Debian's OpenArena client joining `host:port` as `name`: its console on stdin (`ttycon 0`), no sound, the smallest
 * window and frame rate a software renderer keeps up with, no downloads, its own socket on loopback only.
 */
export function openarenaClient(o: {
  display: string;
  home: string;
  host: string;
  port: number;
  name: string;
  /** The client's own UDP port (ioq3 takes 27960, or the next free one, on every interface otherwise). */
  clientPort: number;
}) {
  const set = (name: string, value: string) => ["+set", name, value];
  const host = o.host.includes(":") ? `[${o.host}]` : o.host;
  return new GameClient(
    [
      OPENARENA_CLIENT,
      ...set("ttycon", "0"),
      ...set("s_initsound", "0"),
      ...set("r_mode", "0"), // 320x240
      ...set("r_fullscreen", "0"),
      ...set("r_picmip", "3"),
      ...set("com_maxfps", "20"),
      ...set("cl_allowDownload", "0"),
      ...set("net_ip", "127.0.0.1"),
      ...set("net_ip6", "::1"),
      ...set("net_port", String(o.clientPort)),
      ...set("net_port6", String(o.clientPort)),
      ...set("fs_homepath", o.home),
      ...set("name", o.name),
      "+connect",
      `${host}:${o.port}`,
    ],
    clientEnv(o.display, o.home),
  );
}

export const NEXUIZ_CLIENT = process.env.HUB_NEXUIZ_CLIENT ?? "/usr/games/nexuiz";

/** The X window of a client process (SDL names its pid on the window). */
function windowOf(pid: number, display: string): string {
  const found = Bun.spawnSync([XDOTOOL, "search", "--pid", String(pid)], { env: { DISPLAY: display } });
  const id = found.stdout.toString().trim().split("\n")[0];
  if (!id) throw new Error(`no window of the client (pid ${pid}) on ${display} yet`);
  return id;
}

/** Presses `keys` (xdotool names) in a client's window; `text` types characters. */
export function press(pid: number, display: string, o: { keys?: string[]; text?: string }): void {
  const window = windowOf(pid, display);
  const run = (args: string[]) => {
    const r = Bun.spawnSync([XDOTOOL, ...args], { env: { DISPLAY: display } });
    if (r.exitCode !== 0) throw new Error(`xdotool ${args.join(" ")} failed: ${r.stderr.toString()}`);
  };
  if (o.text) run(["type", "--window", window, "--delay", "30", o.text]);
  if (o.keys?.length) run(["key", "--window", window, ...o.keys]);
}

/**
 * Debian's Nexuiz client (DarkPlaces) joining `host:port` as `name`: no sound, a small window at 20 frames a second,
 * its own sockets on loopback only. DarkPlaces reads no commands from stdin outside a dedicated server, so `type`
 * writes the command into `data/hub-typed.cfg` and presses F9, bound to `exec hub-typed.cfg` by its autoexec.cfg;
 * a key bind is ignored while the console is down (after a kick), where `typeAtConsole` types instead.
 */
export function nexuizClient(o: { display: string; home: string; host: string; port: number; name: string }) {
  const data = join(o.home, ".nexuiz", "data");
  mkdirSync(data, { recursive: true });
  writeFileSync(join(data, "autoexec.cfg"), 'bind F9 "exec hub-typed.cfg"\n');
  const client = new GameClient(
    [
      NEXUIZ_CLIENT,
      "-nosound",
      "+vid_fullscreen",
      "0",
      "+vid_width",
      "320",
      "+vid_height",
      "240",
      "+cl_maxfps",
      "20",
      "+net_address",
      "127.0.0.1",
      "+net_address_ipv6",
      "::1",
      "+name",
      o.name,
      "+connect",
      `${o.host.includes(":") ? `[${o.host}]` : o.host}:${o.port}`,
    ],
    clientEnv(o.display, o.home),
    (command, pid) => {
      writeFileSync(join(data, "hub-typed.cfg"), `${command}\n`);
      press(pid, o.display, { keys: ["F9"] });
    },
  );
  return Object.assign(client, {
    /** Types a line at the console, which DarkPlaces keeps down while the client is disconnected. */
    typeAtConsole: (line: string) => press(client.pid, o.display, { text: line, keys: ["Return"] }),
  });
}
