/**
 * Real game clients for the end-to-end tests: Debian's OpenArena and Nexuiz clients, each on its own virtual display
 * (Xvfb, software GL), a real human player beside the servers' bots. A test reads what the player sees from the
 * client's own console output and types console commands (`say …`, `reconnect`) into it. Every process is started
 * through ./procs.ts (scope "file"), so a failing test still stops the clients and their displays.
 */
import { existsSync } from "node:fs";
import { spawn } from "./procs.ts";
import { until } from "./until.ts";

export const XVFB = "/usr/bin/Xvfb";

/** Why a real-client test can't run here, or undefined when it can. */
export function clientMissing(client: string, packageName: string): string | undefined {
  const missing = [client, XVFB].filter((p) => !existsSync(p));
  if (missing.length === 0) return undefined;
  return (
    `needs ${missing.join(" and ")} (Debian packages ${packageName}, xvfb and libgl1-mesa-dri; .ci/run installs them ` +
    "as root)"
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

/**
 * A running game client: `lines` is its console output (stdout and stderr), `type` writes a console command to its
 * stdin (where the client reads one), `stop` ends it.
 */
export class GameClient {
  readonly lines: string[] = [];
  readonly #proc: ReturnType<typeof spawnClient>;

  constructor(command: string[], env: Record<string, string>) {
    this.#proc = spawnClient(command, env);
    for (const stream of [this.#proc.stdout, this.#proc.stderr]) void this.#read(stream);
  }

  async #read(stream: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let rest = "";
    for await (const chunk of stream) {
      const parts = (rest + decoder.decode(chunk, { stream: true })).split("\n");
      rest = parts.pop() ?? "";
      this.lines.push(...parts.map((l) => l.replace(/\r$/, "")));
    }
    if (rest) this.lines.push(rest);
  }

  get exitCode(): number | null {
    return this.#proc.exitCode;
  }

  /** A console command, as typed at the client's console. */
  type(command: string): void {
    this.#proc.stdin.write(`${command}\n`);
    void this.#proc.stdin.flush();
  }

  /** How many console lines hold `text`. */
  count(text: string): number {
    return this.lines.filter((l) => l.includes(text)).length;
  }

  /** Waits until `n` console lines hold `text` (a software-GL client is slow: minutes, not seconds). */
  async sees(text: string, what: string, opts: { n?: number; timeoutMs?: number } = {}): Promise<void> {
    await until(() => this.count(text) >= (opts.n ?? 1), what, {
      timeoutMs: opts.timeoutMs ?? 90_000,
      everyMs: 100,
      abort: () => (this.exitCode !== null ? `the client exited with ${this.exitCode}` : undefined),
      diagnostics: () => `the client's last lines:\n${this.lines.slice(-15).join("\n")}`,
    });
  }

  async stop(): Promise<void> {
    this.#proc.kill("SIGTERM");
    await this.#proc.exited;
  }
}

function spawnClient(command: string[], env: Record<string, string>) {
  return spawn(command, { env, stdin: "pipe", stdout: "pipe", stderr: "pipe", scope: "file" });
}

export const OPENARENA_CLIENT = process.env.HUB_OPENARENA_CLIENT ?? "/usr/games/openarena";

/**
 * Debian's OpenArena client joining `host:port` as `name`: its console on stdin (`ttycon 0`), no sound, the smallest
 * window and frame rate a software renderer keeps up with, no downloads.
 */
export function openarenaClient(o: { display: string; home: string; host: string; port: number; name: string }) {
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
      ...set("fs_homepath", o.home),
      ...set("name", o.name),
      "+connect",
      `${host}:${o.port}`,
    ],
    clientEnv(o.display, o.home),
  );
}
