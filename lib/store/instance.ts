/**
 * One `run` per storage directory. Two agents on one store both execute `once` rewards and report status (each
 * with its own memory of what it did), so `run` holds `<storage.dir>/instance.lock` for its whole life. The file
 * holds pid, host name, start time and the process's identity (its start in /proc/<pid>/stat and the boot id),
 * and is created complete in one step with the store lock's pieces (lock.ts).
 *
 * Who holds it: a holder on another host cannot be checked, so it is refused with the way to remove it. On this
 * host, a dead pid, a pid now used by another process (another start time) or a previous boot means the holder is
 * gone: its lock is broken at once (a `run` killed with SIGKILL does not delay the next). An empty or unreadable
 * file never names a holder: it is broken once UNREADABLE_STALE_MS old.
 */
import { readFile } from "../fsio.ts";
import { teardownsByKey } from "../serial.ts";
import { join } from "node:path";
import { checkFormat, StoreFormatError } from "./format.ts";
import {
  breakStale,
  code,
  createLockFile,
  pidAlive,
  readLock,
  removeOwnLock,
  sleep,
  UNREADABLE_STALE_MS,
  type LockInfo,
} from "./lock.ts";

/** This host's name, where a lock is read or taken: node:os is not loaded by a command that finds no lock. */
const hostname = async (): Promise<string> => (await import("node:os")).hostname();

export const INSTANCE_LOCK = "instance.lock";

export interface InstanceHolder {
  pid: number;
  host: string;
  /** When the holder took the lock (ms since the epoch). */
  since: number;
  /** Field 22 of /proc/<pid>/stat (clock ticks after boot): tells a reused pid from the holder. */
  start?: string;
  boot?: string;
}

/** Another `run` holds the storage directory (or one on another host may). */
export class InstanceBusyError extends Error {
  override name = "InstanceBusyError";
  constructor(
    readonly path: string,
    readonly holder: InstanceHolder,
    readonly foreign: boolean,
  ) {
    const since = new Date(holder.since).toISOString();
    super(
      foreign
        ? `another hub-agent run may hold this storage directory: pid ${holder.pid} on host ${holder.host} since ${since}; hub-agent cannot check a process on another host: if none runs there, remove ${path}`
        : `another hub-agent run holds this storage directory: pid ${holder.pid} on host ${holder.host} since ${since} (${path}); stop it first, or give this one its own storage.dir`,
    );
  }
}

/** The lock file cannot be created or read (a directory in its place, a read-only directory, …). */
export class InstanceLockError extends Error {
  override name = "InstanceLockError";
  constructor(
    message: string,
    /** The errno value when the file system refused (ENOSPC, EROFS, …). */
    readonly code?: string,
  ) {
    super(message);
  }
}

export interface Instance {
  path: string;
  /** The holder whose lock was broken on the way in (it had died), for the log. */
  tookOverFrom?: InstanceHolder;
  release(): Promise<void>;
}

/** Field 22 of /proc/<pid>/stat; undefined where there is no /proc (or the process is gone). */
async function processStart(pid: number): Promise<string | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8");
    // "pid (comm) state ppid …": comm may hold spaces and parentheses, so count from after the last ")".
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

async function bootId(): Promise<string | undefined> {
  return (await readFile("/proc/sys/kernel/random/boot_id", "utf8").catch(() => ""))?.trim() || undefined;
}

function holderOf(lock: LockInfo): InstanceHolder | undefined {
  const f = lock.fields;
  if (!f || typeof f.pid !== "number" || typeof f.host !== "string" || typeof f.since !== "number") return undefined;
  const opt = (v: unknown) => (typeof v === "string" ? v : undefined);
  return { pid: f.pid, host: f.host, since: f.since, start: opt(f.start), boot: opt(f.boot) };
}

export type Verdict = "live" | "foreign" | "gone" | "unreadable";

async function judge(holder: InstanceHolder | undefined, self: { host: string; boot?: string }): Promise<Verdict> {
  if (!holder) return "unreadable";
  if (holder.host !== self.host) return "foreign";
  if (holder.boot && self.boot && holder.boot !== self.boot) return "gone";
  if (!pidAlive(holder.pid)) return "gone";
  const start = await processStart(holder.pid);
  if (holder.start && start && holder.start !== start) return "gone"; // the pid was reused
  return "live";
}

const REASONS: Record<string, string> = {
  EISDIR: "it is a directory",
  ENOTDIR: "a part of the path is a file, not a directory",
  ENOENT: "a part of the path leads nowhere (a link to a missing directory, a disk not mounted)",
  EACCES: "permission denied",
  EPERM: "permission denied",
  EROFS: "the file system is read-only",
  EEXIST: "storage.dir is a file, or a link to nowhere (a disk not mounted?)",
};
const reason = (e: unknown) => REASONS[code(e) ?? ""] ?? (e as Error).message;

/**
 * Who holds the storage directory's instance lock, and whether that run is alive (`hub-agent status`): "live", "gone"
 * (a dead pid, a reused one, a previous boot), "foreign" (another host: cannot be checked), "unreadable" (an empty or
 * torn file), or no holder.
 */
export async function instanceHolder(
  dir: string,
): Promise<{ verdict: Verdict; holder: InstanceHolder } | { verdict: "unreadable" | "none" }> {
  const held = await readLock(join(dir, INSTANCE_LOCK));
  if (!held) return { verdict: "none" };
  const holder = holderOf(held);
  const verdict = await judge(holder, { host: await hostname(), boot: await bootId() });
  return holder && verdict !== "unreadable" ? { verdict, holder } : { verdict: "unreadable" };
}

/**
 * This process's own lock removals still under way, by path: a stop waits for one only briefly (lib/shutdown.ts
 * FINAL_STEP_MS), so a new hold of the same lock in this process (a host restarting a server) waits for it here.
 */
const releasing = teardownsByKey();

function lockError(e: unknown, dir: string, path: string): InstanceLockError {
  const fix =
    code(e) === "EISDIR"
      ? "remove that directory: hub-agent creates the file itself"
      : `make ${dir} a directory this user can write (storage.dir)`;
  return new InstanceLockError(`cannot take the instance lock ${path}: ${reason(e)}; ${fix}`, code(e));
}

/**
 * Throws InstanceBusyError when `held` names a live holder (or one on another host); otherwise returns the holder,
 * which is gone, or undefined for an unreadable file.
 */
async function refuseLive(
  path: string,
  held: LockInfo,
  self: { host: string; boot?: string },
): Promise<InstanceHolder | undefined> {
  const holder = holderOf(held);
  const verdict = await judge(holder, self);
  if (verdict === "live" || verdict === "foreign") throw new InstanceBusyError(path, holder!, verdict === "foreign");
  return verdict === "gone" ? holder : undefined;
}

/** Takes the storage directory's instance lock, or throws InstanceBusyError naming the holder. */
export async function holdInstance(dir: string): Promise<Instance> {
  // A store a newer build made is not used: not even its lock is taken. Other failures are the lock's to report.
  await checkFormat(dir).catch((e) => {
    if (e instanceof StoreFormatError) throw e;
  });
  const path = join(dir, INSTANCE_LOCK);
  await releasing.settled(path);
  const self = { host: await hostname(), boot: await bootId() };
  const me: InstanceHolder = {
    pid: process.pid,
    host: self.host,
    since: Date.now(),
    start: await processStart(process.pid),
    boot: self.boot,
  };
  const body = JSON.stringify(me);
  let tookOverFrom: InstanceHolder | undefined;
  for (let attempt = 0; ; attempt++) {
    let held: LockInfo | undefined;
    try {
      // Looked at before anything is written: a full or read-only disk refuses the write, and must not hide a
      // live holder (a second `run` would then serve beside it, without the lock).
      held = await readLock(path);
      if (!held && (await createLockFile(path, body))) break;
      held ??= await readLock(path);
    } catch (e) {
      // One that appeared meanwhile is still refused, whatever the disk said.
      const now = await readLock(path).catch(() => undefined);
      if (now) await refuseLive(path, now, self);
      throw lockError(e, dir, path);
    }
    if (!held) continue; // released between our attempt and the read
    const gone = await refuseLive(path, held, self);
    if (!gone && Date.now() - held.mtimeMs <= UNREADABLE_STALE_MS) {
      await sleep(100);
      continue;
    }
    // A disk that refuses the breaker's file (read-only, full) is the disk's failure, as for the lock itself.
    await breakStale(path, held).catch((e: unknown) => {
      throw lockError(e, dir, path);
    });
    if (gone) tookOverFrom = gone;
    if (attempt > 100) throw new InstanceLockError(`cannot take the instance lock ${path}: it keeps changing`);
    if (attempt > 0) await sleep(10 + Math.random() * 20); // another breaker is at work
  }
  return { path, tookOverFrom, release: () => releasing.track(path, removeOwnLock(path, body)) };
}
