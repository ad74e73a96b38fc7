/**
 * Cross-process exclusive lock: a lock file holding pid, time and a token, created complete in one step
 * (a hard link of a written temp file, which fails when the lock exists).
 * A lock is stale when its pid is dead or its file has not been touched for STALE_MS (the holder
 * touches it while it runs, so only a hung or foreign-host holder ages out). Same-host only: pids
 * from another machine or PID namespace cannot be checked and fall back to the age rule.
 * A lock file without a readable pid (empty after a power loss, or written by something else) was never a
 * holder's: it is broken once UNREADABLE_STALE_MS old. The pieces are shared with the instance lock (instance.ts).
 */
import { link, mkdir, open, readOwnFile, stat, unlink, utimes, writeFile } from "../fsio.ts";
import { dirname } from "node:path";
import { TMP_MARK } from "./driver.ts";
import { serialByKey } from "../serial.ts";

export const STALE_MS = 60_000;
/** Locks appear complete, so an unreadable one is nobody's; the grace only covers a writer of another kind. */
export const UNREADABLE_STALE_MS = 2_000;
const HEARTBEAT_MS = 15_000;
/** Breaking a stale lock holds a second lock for microseconds; one older than this was left by a crash. */
const BREAKER_STALE_MS = 10_000;
const DEFAULT_TIMEOUT_MS = 10_000;

export class LockTimeoutError extends Error {
  override name = "LockTimeoutError";
}

export interface LockInfo {
  text: string;
  /** The parsed content, undefined when the file is empty or not a JSON object. */
  fields?: Record<string, unknown>;
  pid?: number;
  mtimeMs: number;
}

export const code = (e: unknown) => (e as NodeJS.ErrnoException).code;

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return code(e) === "EPERM"; // exists but belongs to another user
  }
}

/** The lock file's content and age; undefined when there is none. */
export async function readLock(path: string): Promise<LockInfo | undefined> {
  try {
    const [bytes, info] = await Promise.all([readOwnFile(path), stat(path)]);
    const text = bytes.toString("utf8");
    let fields: Record<string, unknown> | undefined;
    try {
      const parsed: unknown = JSON.parse(text);
      if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed))
        fields = parsed as Record<string, unknown>;
    } catch {
      // empty or partial: judged by age only, never taken for a live holder
    }
    const pid = typeof fields?.pid === "number" ? fields.pid : undefined;
    return { text, fields, pid, mtimeMs: info.mtimeMs };
  } catch (e) {
    if (code(e) === "ENOENT") return undefined;
    throw e;
  }
}

function isStale(lock: LockInfo, now: number): boolean {
  if (now - lock.mtimeMs > (lock.pid === undefined ? UNREADABLE_STALE_MS : STALE_MS)) return true;
  return lock.pid !== undefined && lock.pid !== process.pid && !pidAlive(lock.pid);
}

/**
 * Removes a stale lock without racing other breakers: under a short-lived `.break` lock, the lock
 * file is re-read and deleted only if it is still the stale one we saw (not a fresh lock that
 * another process created after a different breaker removed the old one).
 */
export async function breakStale(path: string, seen: LockInfo): Promise<void> {
  const breaker = `${path}.break`;
  let fh;
  try {
    fh = await open(breaker, "wx", 0o600);
  } catch (e) {
    if (code(e) !== "EEXIST") throw e;
    const info = await stat(breaker).catch(() => undefined);
    if (info && Date.now() - info.mtimeMs > BREAKER_STALE_MS) await unlink(breaker).catch(() => {});
    return;
  }
  try {
    const now = await readLock(path);
    if (now && now.text === seen.text && now.mtimeMs === seen.mtimeMs) await unlink(path).catch(() => {});
  } finally {
    await fh.close();
    await unlink(breaker).catch(() => {});
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Creates the lock file with `body` in one step: a private temp file hard-linked to the lock path, which fails
 * when the lock exists. A holder killed while taking it cannot leave an empty lock. false: the lock exists.
 */
export async function createLockFile(path: string, body: string): Promise<boolean> {
  const tmp = `${path}${TMP_MARK}${process.pid}-${crypto.randomUUID()}`;
  for (;;) {
    try {
      await writeFile(tmp, body, { mode: 0o600, flag: "wx" });
      try {
        await link(tmp, path);
      } finally {
        await unlink(tmp).catch(() => {});
      }
      return true;
    } catch (e) {
      if (code(e) === "EEXIST") return false;
      if (code(e) !== "ENOENT") throw e;
      await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    }
  }
}

/** Deletes the lock file only if it is still ours: if ours was broken as stale, it now belongs to someone else. */
export async function removeOwnLock(path: string, body: string): Promise<void> {
  const now = await readLock(path).catch(() => undefined);
  if (now?.text === body) await unlink(path).catch(() => {});
}

/** Takes the lock file, waiting with jittered backoff; returns the release function. */
async function acquire(path: string, timeoutMs: number): Promise<() => Promise<void>> {
  const token = crypto.randomUUID();
  const body = JSON.stringify({ pid: process.pid, at: Date.now(), token });
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 0; ; attempt++) {
    if (await createLockFile(path, body)) break;
    const held = await readLock(path);
    if (!held) continue; // released between our open and read
    if (isStale(held, Date.now())) {
      await breakStale(path, held);
      continue;
    }
    if (Date.now() >= deadline) throw new LockTimeoutError(`lock ${path} still held by pid ${held.pid ?? "?"}`);
    // Jittered, growing backoff: 1–4 ms at first, up to 25–50 ms under long contention.
    const cap = Math.min(50, 4 * 2 ** Math.min(attempt, 4));
    await sleep(cap / 2 + Math.random() * (cap / 2));
  }

  // Touch the lock while held so a long critical section is not mistaken for a hung one.
  const heartbeat = setInterval(() => {
    const t = new Date();
    utimes(path, t, t).catch(() => {});
  }, HEARTBEAT_MS);
  (heartbeat as { unref?: () => void }).unref?.();

  return async () => {
    clearInterval(heartbeat);
    await removeOwnLock(path, body);
  };
}

/** withLock for one lock directory: serialised in-process per name, then across processes by the lock file. */
export function createLocker(dir: string) {
  const inProcess = serialByKey();
  return function withLock<R>(name: string, fn: () => Promise<R>, opts?: { timeoutMs?: number }): Promise<R> {
    const path = `${dir}/${name}.lock`;
    const start = performance.now();
    return inProcess(name, async () => {
      const timeoutMs = opts?.timeoutMs ?? DEFAULT_TIMEOUT_MS;
      const release = await acquire(path, Math.max(0, timeoutMs - (performance.now() - start)));
      try {
        return await fn();
      } finally {
        await release();
      }
    });
  };
}
