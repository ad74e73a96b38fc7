import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { spawn } from "../support/procs.ts";

const root = join(import.meta.dir, "..", "..");
let built: Promise<string> | undefined;

/**
 * The `bun build` argv of package.json's build script with another entry point and output file, so the tests and
 * the bench compile exactly what ships (one list of flags, not three).
 */
export function buildCommand(entry: string, outfile: string): string[] {
  const words = (pkg.scripts.build as string).split(/\s+/);
  const argv = words.map((w, i) => (w === "cli/main.ts" ? entry : words[i - 1] === "--outfile" ? outfile : w));
  return [process.execPath, ...argv.slice(1)]; // "bun" → the running bun
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

/** Runs the compiled CLI with a clean environment (plus `env`), no stdin, in `cwd`. */
export async function hub(args: string[], opts: { env?: Record<string, string>; cwd?: string } = {}): Promise<Run> {
  const p = spawn([await binary(), ...args], {
    cwd: opts.cwd ?? mkdtempSync(join(tmpdir(), "hub-cwd-")),
    env: { PATH: process.env.PATH ?? "", ...opts.env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  return { code, stdout, stderr };
}
