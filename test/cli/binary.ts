import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildCommand as compileCommand } from "../../packaging/build.ts";
import { spawn } from "../support/procs.ts";

const root = join(import.meta.dir, "..", "..");
let built: Promise<string> | undefined;

/**
 * The compile of packaging/build.ts (what `npm run build` and the release run) with another entry point and output
 * file, so the tests and the benches compile exactly what ships (one list of flags, not three).
 */
export function buildCommand(entry: string, outfile: string): string[] {
  return compileCommand({ entry, outfile });
}

/** Compiles the real single executable once per test run, as `npm run build` does. */
export function binary(): Promise<string> {
  built ??= (async () => {
    const out = join(mkdtempSync(join(tmpdir(), "hub-bin-")), "hub-agent");
    const p = Bun.spawn(buildCommand("cli/main.ts", out), { cwd: root, stdout: "ignore", stderr: "pipe" });
    if ((await p.exited) !== 0) throw new Error(`build failed: ${await new Response(p.stderr).text()}`);
    return out;
  })();
  return built;
}

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

type HubOptions = { env?: Record<string, string>; cwd?: string };

/** The compiled CLI with a clean environment (plus `env`), no stdin, in `cwd` (a new directory by default). */
async function start(args: string[], opts: HubOptions) {
  return spawn([await binary(), ...args], {
    cwd: opts.cwd ?? mkdtempSync(join(tmpdir(), "hub-cwd-")),
    env: { PATH: process.env.PATH ?? "", ...opts.env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
}

/** A stream's text as it arrives: `text()` is what came so far, `done` all of it once the stream ends. */
export function collect(stream: ReadableStream<Uint8Array>): { text: () => string; done: Promise<string> } {
  let text = "";
  const done = (async () => {
    const decoder = new TextDecoder();
    for await (const bytes of stream) text += decoder.decode(bytes, { stream: true });
    return text;
  })();
  return { text: () => text, done };
}

/** Starts the compiled CLI as `hub` does and leaves it running; its output is read as it arrives. */
export async function hubInBackground(args: string[], opts: HubOptions = {}) {
  const proc = await start(args, opts);
  return { proc, stdout: collect(proc.stdout), stderr: collect(proc.stderr) };
}

/** Runs the compiled CLI to its end (see `start`). */
export async function hub(args: string[], opts: HubOptions = {}): Promise<Run> {
  const p = await start(args, opts);
  const [stdout, stderr, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  return { code, stdout, stderr };
}
