import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { buildCommand as compileCommand } from "../../packaging/build.ts";
import { main, rootHelp } from "../../cli/main.ts";
import { runCli } from "../../cli/runner.ts";
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

/**
 * What the build reads: the sources, the lock file, the build's own flags, and the bun that compiles. The compiled
 * binary is kept under this hash, so the test files of one run (`--parallel` runs them in several processes, each
 * with its own modules) compile it once between them, and a change to any of these compiles it again.
 */
function buildKey(): string {
  const hash = new Bun.CryptoHasher("sha256").update(`${Bun.revision}\0${buildCommand("cli/main.ts", "").join(" ")}`);
  const files = ["package.json", "package-lock.json", "tsconfig.json"];
  for (const dir of ["cli", "lib", "lang", "packaging/bytecode"])
    for (const f of readdirSync(join(root, dir), { recursive: true, withFileTypes: true }))
      if (f.isFile()) files.push(relative(root, join(f.parentPath, f.name)));
  for (const f of files.sort()) hash.update(`\0${f}\0`).update(readFileSync(join(root, f)));
  return hash.digest("hex").slice(0, 16);
}

/** Compiles the real single executable once per test run (see buildKey), as `npm run build` does. */
export function binary(): Promise<string> {
  built ??= (async () => {
    const dir = join(tmpdir(), `hub-bin-${buildKey()}`);
    const out = join(dir, "hub-agent");
    if (existsSync(out)) return out;
    // Compiled in a directory of its own (the binary and its source maps), then renamed: a process running tests
    // next to this one never finds half a build, and when two compiled at once, the first one's build is kept.
    const partial = mkdtempSync(`${dir}-build-`);
    const p = Bun.spawn(buildCommand("cli/main.ts", join(partial, "hub-agent")), {
      cwd: root,
      stdout: "ignore",
      stderr: "pipe",
    });
    if ((await p.exited) !== 0) throw new Error(`build failed: ${await new Response(p.stderr).text()}`);
    try {
      renameSync(partial, dir);
    } catch (e) {
      if (!existsSync(out)) throw e;
      rmSync(partial, { recursive: true, force: true });
    }
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

/** A clean environment (plus the test's) and a new directory unless the test names one: as a user's shell would. */
const cleanEnv = (opts: HubOptions) => ({ PATH: process.env.PATH ?? "", ...opts.env });
const cwdOf = (opts: HubOptions) => opts.cwd ?? mkdtempSync(join(tmpdir(), "hub-cwd-"));

/** The compiled CLI with a clean environment (plus `env`), no stdin, in `cwd` (a new directory by default). */
async function start(args: string[], opts: HubOptions) {
  return spawn([await binary(), ...args], {
    cwd: cwdOf(opts),
    env: cleanEnv(opts),
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

/**
 * Runs the CLI to its end inside the tests' process, as the compiled binary would run it: the same command table
 * (cli/main.ts) and runner, a clean environment (plus `env`), `cwd`, its stdout and stderr captured (stderr is not a
 * terminal), its exit code returned. What needs a process of its own (signals, kills, the exit code as the shell
 * sees it, the compiled build, start-up) uses `hubBinary`.
 */
export async function hub(args: string[], opts: HubOptions = {}): Promise<Run> {
  let stdout = "";
  let stderr = "";
  const code = await runCli(main, args, rootHelp, {
    env: cleanEnv(opts),
    cwd: cwdOf(opts),
    stdout: (text) => void (stdout += `${text}\n`),
    stderr: (text) => void (stderr += `${text}\n`),
    stderrIsTty: () => false,
  });
  return { code, stdout, stderr };
}

/** Runs the compiled CLI to its end (see `start`). */
export async function hubBinary(args: string[], opts: HubOptions = {}): Promise<Run> {
  const p = await start(args, opts);
  const [stdout, stderr, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  return { code, stdout, stderr };
}
