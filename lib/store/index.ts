/**
 * The agent's durable store: unstorage over an atomic filesystem driver, with typed, validated
 * queues, caches and counters on top, and a cross-process lock. Shared by the long-lived `run`
 * process and one-shot CLI commands, so every write is atomic and every read is validated.
 *
 * Layout under `dir`: queue/<name>/<id>, cache/<name>, counters/<name>/<key>, locks/<name>.lock,
 * corrupt/… (quarantined files). Every record is JSON with a format version `v`.
 */
import { mkdir } from "../fsio.ts";
import { join, resolve } from "node:path";
import { createStorage } from "unstorage";
import type { GenericSchema } from "valibot";
import { type Clock, systemClock } from "../clock.ts";
import { type Logger, silentLogger } from "../log.ts";
import { type Cache, createCache, listCaches } from "./cache.ts";
import { type Counters, createCounters } from "./counters.ts";
import atomicFs, { cleanStaleTemp } from "./driver.ts";
import { StoreWriteError, storeWriteError } from "./errors.ts";
import { createLocker } from "./lock.ts";
import { type Queue, createQueue } from "./queue.ts";
import { type CorruptFile, type QuarantineRecord, createRecords, listCorrupt } from "./records.ts";
import { checkName } from "./types.ts";

export type { Cache } from "./cache.ts";
export { StoreWriteError, describeFsError } from "./errors.ts";
export type { Counters } from "./counters.ts";
export { LockTimeoutError } from "./lock.ts";
export { type Queue, type QueueEntry, isUncertain } from "./queue.ts";
export type { CorruptFile, QuarantineRecord } from "./records.ts";

export interface StoreOptions {
  dir: string;
  logger?: Logger;
  /** Timestamps of entries, caches and quarantined files. Lock waits and staleness use real time. */
  clock?: Clock;
  /** fsync files and directories on write (default true): survives power loss, not only crashes. */
  fsync?: boolean;
  /**
   * Log write failures (full disk, read-only store, permissions) once per change of state, failing → recovered
   * (`run`). One-shot commands leave it off: their failure is their error line.
   */
  reportWriteErrors?: boolean;
}

export interface Store {
  dir: string;
  /** A durable queue: one key per entry, so producers in other processes never read-modify-write a shared file. */
  queue<T>(name: string, schema: GenericSchema<T>): Queue<T>;
  /** A cached value with the time it was saved (server record, ban list, attribute definition). */
  cache<T>(name: string, schema: GenericSchema<T>): Cache<T>;
  /** Named numeric counters (e.g. playtime seconds per user). */
  counters(name: string): Counters;
  /**
   * Cross-process exclusive lock for the few operations that change several keys at once. Not
   * re-entrant: calling withLock for the same name inside fn deadlocks until the timeout (default 10 s).
   */
  withLock<R>(name: string, fn: () => Promise<R>, opts?: { timeoutMs?: number }): Promise<R>;
  /** Entries moved to <dir>/corrupt/ so far (by this process), for reporting. */
  quarantined(): QuarantineRecord[];
  /** Every file in <dir>/corrupt/ (moved there by any process), newest first. */
  corrupt(): Promise<CorruptFile[]>;
  /** Every cache and when it was last written. */
  caches(): Promise<{ name: string; writtenAt: number }[]>;
}

/** Temp files older than this were left by a writer that died mid-write. */
const STALE_TEMP_MS = 5 * 60_000;

export async function openStore(opts: StoreOptions): Promise<Store> {
  const dir = resolve(opts.dir);
  const logger = (opts.logger ?? silentLogger).withTag("store");
  const clock = opts.clock ?? systemClock;
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (e) {
    throw storeWriteError(e, dir, dir);
  }
  const cleaned = await cleanStaleTemp(dir, STALE_TEMP_MS);
  if (cleaned) logger.info("removed stale temp files left by interrupted writes", { count: cleaned });

  const onWrite = writeHealth(dir, logger, !!opts.reportWriteErrors);
  const storage = createStorage({ driver: atomicFs({ base: dir, fsync: opts.fsync, onWrite }) });
  const records = createRecords(storage, dir, logger, clock);
  const locker = createLocker(join(dir, "locks"));
  const withLock: Store["withLock"] = async (name, fn, lockOpts) => {
    try {
      return await locker(checkName("lock", name), fn, lockOpts);
    } catch (e) {
      // A lock file the disk refuses is a store write failure like any other: one line, reported once.
      const err = storeWriteError(e, (e as NodeJS.ErrnoException).path ?? join(dir, "locks", `${name}.lock`), dir);
      if (err !== e && err instanceof StoreWriteError) onWrite(err);
      throw err;
    }
  };

  return {
    dir,
    queue: (name, schema) => createQueue(checkName("queue", name), schema, records, storage, withLock, clock),
    cache: (name, schema) => createCache(checkName("cache", name), schema, records, clock),
    counters: (name) => createCounters(checkName("counters", name), records, storage, withLock),
    withLock,
    quarantined: () => [...records.quarantined],
    corrupt: () => listCorrupt(dir),
    caches: () => listCaches(dir),
  };
}

/**
 * The store's write state for `run`: the first failure is logged, a different failure is logged, and the first
 * success after failures is logged; everything in between is quiet (a full disk must not log every second).
 */
function writeHealth(dir: string, logger: Logger, report: boolean): (error?: StoreWriteError) => void {
  let failing: string | undefined;
  return (error) => {
    if (!error) {
      if (failing !== undefined && report) logger.info(`the store ${dir} is writable again`);
      failing = undefined;
      return;
    }
    if (!report) return;
    if (failing !== error.message)
      logger.error(`${error.message}; enforcing what the store holds (cached bans, queues), trying every write again`);
    failing = error.message;
    error.reported = true;
  };
}

/**
 * For a cache `run` can do without (server record, ban list, player list): a write the disk refused is not the
 * caller's failure. It works from what it fetched; the store has logged the failure. Other errors still throw.
 */
export async function cacheWrite(write: Promise<void>): Promise<void> {
  try {
    await write;
  } catch (e) {
    if (!(e instanceof StoreWriteError)) throw e;
  }
}
