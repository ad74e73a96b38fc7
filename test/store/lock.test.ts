/** The cross-process lock: stale locks (dead pid, or untouched for a minute) are broken; a live holder is waited for. */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LockTimeoutError, openStore } from "../../lib/store/index.ts";
import { spawn } from "../support/procs.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "store-lock-"));
  await mkdir(join(dir, "locks"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const lockFile = (name: string) => join(dir, "locks", `${name}.lock`);
const holder = (pid: number) => JSON.stringify({ pid, at: Date.now(), token: "someone-else" });

/** A pid that certainly belongs to no live process: a child that has already exited. */
async function deadPid(): Promise<number> {
  const child = spawn([process.execPath, "-e", ""], { stdout: "ignore" });
  await child.exited;
  return child.pid;
}

test("a lock left by a dead process is broken at once", async () => {
  const store = await openStore({ dir, fsync: false });
  await writeFile(lockFile("counters-hits"), holder(await deadPid()));
  expect(await store.counters("hits").add("k", 1)).toBe(1);
  await writeFile(lockFile("job"), holder(await deadPid()));
  expect(await store.withLock("job", async () => "ran", { timeoutMs: 5_000 })).toBe("ran");
  expect(await readdir(join(dir, "locks"))).toEqual([]);
});

test("a lock untouched for over a minute is broken even if its pid is alive", async () => {
  const store = await openStore({ dir, fsync: false });
  await writeFile(lockFile("job"), holder(process.ppid));
  const old = new Date(Date.now() - 2 * 60_000);
  await utimes(lockFile("job"), old, old);
  expect(await store.withLock("job", async () => "ran", { timeoutMs: 5_000 })).toBe("ran");
});

test("an empty lock file (holder died while creating it) is broken once it is old", async () => {
  const store = await openStore({ dir, fsync: false });
  await writeFile(lockFile("job"), "");
  const old = new Date(Date.now() - 2 * 60_000);
  await utimes(lockFile("job"), old, old);
  expect(await store.withLock("job", async () => "ran", { timeoutMs: 5_000 })).toBe("ran");
});

test("a fresh empty lock file is never taken for a live holder: broken after a short grace, not waited on for a minute", async () => {
  const store = await openStore({ dir, fsync: false });
  await writeFile(lockFile("job"), "");
  // Before: it counted as held until a minute old, and the caller gave up saying another process was busy.
  expect(await store.withLock("job", async () => "ran", { timeoutMs: 8_000 })).toBe("ran");
});

test("a fresh lock held by a live process is respected until the timeout, and left in place", async () => {
  const sleeper = spawn([process.execPath, "-e", "setTimeout(() => {}, 30000)"], { stdout: "ignore" });
  try {
    const store = await openStore({ dir, fsync: false });
    await writeFile(lockFile("job"), holder(sleeper.pid));
    let ran = false;
    const attempt = store.withLock("job", async () => (ran = true), { timeoutMs: 300 });
    await expect(attempt).rejects.toBeInstanceOf(LockTimeoutError);
    expect(ran).toBe(false);
    expect(await readdir(join(dir, "locks"))).toEqual(["job.lock"]);
  } finally {
    sleeper.kill();
    await sleeper.exited;
  }
});

test("withLock serialises callers in one process and releases after a throw", async () => {
  const store = await openStore({ dir, fsync: false });
  let inside = 0;
  let maxInside = 0;
  const job = async () => {
    inside++;
    maxInside = Math.max(maxInside, inside);
    await Bun.sleep(1);
    inside--;
  };
  await Promise.all(Array.from({ length: 20 }, () => store.withLock("job", job)));
  expect(maxInside).toBe(1);
  await expect(store.withLock("job", async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
  expect(await store.withLock("job", async () => "after")).toBe("after");
  expect(await readdir(join(dir, "locks"))).toEqual([]);
});
