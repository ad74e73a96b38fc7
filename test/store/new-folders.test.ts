/**
 * A write into folders it had to create flushes each folder holding a new one (lib/store/driver.ts atomicWrite): on a
 * file system that does not order metadata (XFS, btrfs), a new folder's entry reaches the disk only when its parent
 * is flushed, and the first entry of a fresh store's queue would be lost with its folder. strace sees the flushes.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawn } from "../support/procs.ts";

const strace = Bun.which("strace");
const canTrace =
  strace !== null && (await spawn(["strace", "-qq", "-o", "/dev/null", "true"], { stdout: "ignore" }).exited) === 0;
if (!canTrace) console.warn("SKIPPED: the new-folders flush test needs strace and ptrace (apt-get install strace)");

const root = mkdtempSync(join(tmpdir(), "hub-new-folders-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The folders (and files) `atomicWrite(file)` flushes, in a process of its own, as strace names them. */
async function flushed(file: string, fsync = true): Promise<string[]> {
  const driver = join(import.meta.dir, "../../lib/store/driver.ts");
  const script = `import { atomicWrite } from ${JSON.stringify(driver)}; await atomicWrite(${JSON.stringify(file)}, "{}", ${fsync});`;
  const log = join(root, `trace-${Math.random().toString(36).slice(2)}`);
  const p = spawn(
    [strace as string, "-f", "-qq", "-y", "-e", "trace=fsync,fdatasync", "-o", log, process.execPath, "-e", script],
    {
      stdout: "ignore",
      stderr: "pipe",
    },
  );
  expect(await p.exited).toBe(0);
  const text = await Bun.file(log).text();
  return [...text.matchAll(/f(?:data)?sync\(\d+<([^>]+)>\)/g)].map((m) => m[1]!.replace(/\.tmp-.*$/, "")); // the file is flushed under its temp name
}

test.skipIf(!canTrace)(
  "a write that creates folders flushes each folder holding a new one; an existing folder only its own",
  async () => {
    const store = join(root, "store");
    mkdirSync(store);
    const first = join(store, "queue", "ban", "001");
    expect(await flushed(first)).toEqual([first, join(store, "queue", "ban"), join(store, "queue"), store]);
    // The folders exist now: the entry and its folder only.
    const second = join(store, "queue", "ban", "002");
    expect(await flushed(second)).toEqual([second, join(store, "queue", "ban")]);
    // A write that need not survive a power cut flushes nothing.
    expect(await flushed(join(store, "box", "note", "x"), false)).toEqual([]);
  },
);
