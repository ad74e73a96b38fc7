/**
 * `npm run release`'s output for the tests, built once per test run (each target compiled once, about 10 s each)
 * and shared by the files that need it: release.test.ts and install-walk.test.ts.
 */
import { afterAll } from "bun:test";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Target } from "../../packaging/build.ts";
import type { Sandbox } from "../../lib/sandbox/index.ts";
import { runToEnd } from "../support/procs.ts";

const root = join(import.meta.dir, "..", "..");

/** Run natively (x64), under qemu-user (arm64), or checked by their ELF needs (musl: Debian has no musl libstdc++). */
export const TESTED_TARGETS: Target[] = ["linux-x64", "linux-arm64", "linux-x64-musl", "linux-arm64-musl"];

/**
 * Temporary directories: the archives and their unpacked copies take about 1 GB a run. A file's own are removed after
 * its tests (`useScratch`); the shared release output is left for the next file and removed by the next run, which
 * removes every one whose test process (or test run) has ended (bun test emits no "exit" to clean up in).
 */
const SCRATCH = /^hub-pkg-(\d+)-/;
for (const name of readdirSync(tmpdir())) {
  const pid = Number(SCRATCH.exec(name)?.[1]);
  if (pid && !alive(pid)) rmSync(join(tmpdir(), name), { recursive: true, force: true });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

const mkScratch = (prefix: string) => mkdtempSync(join(tmpdir(), `hub-pkg-${process.pid}-${prefix}`));

/** `scratch(prefix)`: a fresh temporary directory, removed after the calling file's tests. */
export function useScratch(): (prefix: string) => string {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  return (prefix) => {
    const dir = mkScratch(prefix);
    dirs.push(dir);
    return dir;
  };
}

let made: Promise<string> | undefined;

/**
 * The directory `bun packaging/release.ts --out <dir> --targets …` (npm run release) wrote: built once per test run
 * (about 60 CPU seconds) for every file that needs it, also when `--parallel` runs them in separate processes.
 */
export function releaseOnce(): Promise<string> {
  made ??= onceThisRun("release", async (out) => {
    const argv = [process.execPath, "packaging/release.ts", "--out", out, "--targets", TESTED_TARGETS.join(",")];
    const { code, stdout, stderr } = await runToEnd(argv, { cwd: root });
    if (code !== 0) throw new Error(`npm run release failed (exit ${code}):\n${stdout}${stderr}`);
  });
  return made;
}

/**
 * This test run, as `<pid>-<start time>` of its process: `bun test --parallel`'s coordinator for its workers (they
 * have BUN_TEST_WORKER_ID), else this process. The start time tells a later run whose pid was reused from this one.
 */
function thisRun(): string {
  const pid = process.env.BUN_TEST_WORKER_ID ? process.ppid : process.pid;
  const started = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[19]; // field 22, starttime
  return `${pid}-${started}`;
}

/**
 * `make(dir)` once per test run, shared through a directory named after the run: the first file to ask makes it under
 * a lock (a directory, with its pid), the others wait for it; a maker that died leaves its lock to be taken over.
 */
async function onceThisRun(name: string, make: (dir: string) => Promise<void>): Promise<string> {
  const done = join(tmpdir(), `hub-pkg-${thisRun()}-${name}`);
  const lock = `${done}.lock`;
  for (;;) {
    if (existsSync(done)) return done;
    try {
      mkdirSync(lock);
    } catch {
      if (!makerAlive(lock)) rmSync(lock, { recursive: true, force: true });
      await Bun.sleep(200);
      continue;
    }
    try {
      writeFileSync(join(lock, "pid"), String(process.pid));
      const partial = mkScratch(`${name}-`);
      await make(partial);
      renameSync(partial, done);
      return done;
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
}

function makerAlive(lock: string): boolean {
  try {
    return alive(Number(readFileSync(join(lock, "pid"), "utf8")));
  } catch {
    return true; // its pid not written yet, or the lock gone since: look again
  }
}

/** How to run an unpacked archive's executable here: natively, under qemu-user, or not at all (and why). */
export function runner(target: Target): { prefix: string[] } | { skip: string } {
  if (target.endsWith("-musl"))
    return { skip: "Debian ships no musl libstdc++: the musl builds' ELF needs are checked instead" };
  if (target === `linux-${process.arch}`) return { prefix: [] };
  if (target === "linux-arm64") {
    const qemu = Bun.which("qemu-aarch64");
    const sysroot = "/usr/aarch64-linux-gnu";
    if (!qemu) return { skip: "qemu-aarch64 is missing (Debian package qemu-user; .ci/run installs it)" };
    if (!existsSync(`${sysroot}/lib/ld-linux-aarch64.so.1`))
      return { skip: `${sysroot} has no arm64 glibc (Debian package libc6-arm64-cross; .ci/run installs it)` };
    return { prefix: [qemu, "-L", sysroot] };
  }
  return { skip: `no way to run ${target} on ${process.arch}` };
}

/**
 * What the operator does after `init`: the file's four placeholders filled in, here with the in-memory service's
 * address, key and server, and the simulated game.
 */
export function fillIn(file: string, sb: Sandbox): void {
  const values = { url: sb.url, key: sb.key, server_id: sb.serverId, bridge: "sim" };
  let text = readFileSync(file, "utf8");
  for (const [key, value] of Object.entries(values)) {
    const placeholder = new RegExp(`^${key} = "[^"\\n]*<[^"\\n]*>[^"\\n]*"$`, "m");
    if (!placeholder.test(text)) throw new Error(`${file} has no placeholder for ${key}`);
    text = text.replace(placeholder, `${key} = ${JSON.stringify(value)}`);
  }
  writeFileSync(file, text);
}
