/**
 * The agent's durable store: unstorage over an atomic filesystem driver, with typed, validated
 * queues, caches and counters on top, and a cross-process lock. Shared by the long-lived `run`
 * process and one-shot CLI commands, so every write is atomic and every read is validated.
 *
 * Layout under `dir`: queue/<name>/<id>, index/<queue>/<key hash>/<id> (keyindex.ts), box/<name>/<id>, cache/<name>,
 * counters/<name>/<key>, locks/<name>.lock, corrupt/… (quarantined files), format (the store's format and the
 * version that wrote it: format.ts). Every record is JSON with a format version `v`. Only its owner may use it
 * (secure.ts): folders 0700, files 0600.
 */
import { mkdir } from "../fsio.ts";
import { dirname, join, resolve } from "node:path";
import { createStorage } from "unstorage";
import type { GenericSchema } from "valibot";
import { type Clock, systemClock } from "../clock.ts";
import { type Logger, silentLogger } from "../log.ts";
import { type Box, createBox } from "./box.ts";
import { type Cache, type CacheOptions, createCache, writtenCaches, listCaches } from "./cache.ts";
import { type Counters, createCounters } from "./counters.ts";
import atomicFs, { cleanStaleTemp } from "./driver.ts";
import { StoreWriteError, storeDirError, storeWriteError } from "./errors.ts";
import { ensureFormat } from "./format.ts";
import { createKeyIndex } from "./keyindex.ts";
import { createLocker } from "./lock.ts";
import { type Queue, type QueueOptions, createQueue } from "./queue.ts";
import { type CorruptFile, type QuarantineRecord, createRecords, listCorrupt } from "./records.ts";
import { secureStore } from "./secure.ts";
import { checkName } from "./types.ts";
import { type QueueListener, queueIds, queueStamp, watchedQueue } from "./watch.ts";

export { type Box, NOTE_ID } from "./box.ts";
export type { Cache } from "./cache.ts";
export { StoreWriteError, describeFsError } from "./errors.ts";
export type { Counters } from "./counters.ts";
export { LockTimeoutError } from "./lock.ts";
export { type Queue, type QueueEntry, type QueueOptions, idTime, isUncertain } from "./queue.ts";
export { StoreUnsafeError } from "./secure.ts";
export { STORE_FORMAT, StoreFormatError } from "./format.ts";
export type { CorruptFile, QuarantineRecord } from "./records.ts";
export type { QueueChange, QueueListener } from "./watch.ts";

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
  /**
   * Delete temp files that writers killed mid-write left anywhere in the store (default true). It reads every
   * folder of the store, so one-shot commands turn it off (they must not cost more with a long queue); `run` does it.
   */
  sweep?: boolean;
}

export interface Store {
  dir: string;
  /** A durable queue: one key per entry, so producers in other processes never read-modify-write a shared file. */
  queue<T>(name: string, schema: GenericSchema<T>, opts?: QueueOptions<T>): Queue<T>;
  /** A cached value with the time it was saved (server record, ban list, attribute definition). */
  cache<T>(name: string, schema: GenericSchema<T>, opts?: CacheOptions): Cache<T>;
  /** Notes between processes (box/<name>/<id>): written atomically, not fsynced. */
  box<T>(name: string, schema: GenericSchema<T>): Box<T>;
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
  /** Tells `listener` of every entry added, rewritten or removed through this store; returns the unsubscribe. */
  watchQueues(listener: QueueListener): () => void;
  /** Changes whenever the queue's entries change, by any process (lib/store/watch.ts). */
  queueStamp(name: string): Promise<{ stamp: string; changedAt: number }>;
  /** The ids of the queue's entries, oldest first, without reading them (names that are no entry id left out). */
  queueIds(name: string): Promise<string[]>;
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
    throw storeDirError(e, dir);
  }
  const secured = await secureStore(dir);
  if (secured.corrected !== undefined)
    logger.warn(
      `the store ${dir} was open to other users (mode 0${secured.corrected.toString(8)}): corrected to 0700, its files to 0600`,
    );
  if (secured.warning) logger.warn(secured.warning);
  // Before anything is read, swept or written: a store a newer build made is refused (format.ts).
  await ensureFormat(dir);
  if (opts.sweep !== false) {
    // Not the index's key folders (index/<queue>/<key>/): their markers are never written through a temp file
    // (keyindex.ts), and a backlog of 50,000 players' bans would cost 50,000 folder listings at every start.
    const keyFolder = (folder: string) => dirname(dirname(folder)) === join(dir, "index");
    const cleaned = await cleanStaleTemp(dir, STALE_TEMP_MS, Date.now(), keyFolder);
    if (cleaned) logger.info("removed stale temp files left by interrupted writes", { count: cleaned });
  }

  const onWrite = writeHealth(dir, logger, !!opts.reportWriteErrors);
  const storage = createStorage({ driver: atomicFs({ base: dir, fsync: opts.fsync, onWrite }) });
  const records = createRecords(storage, dir, logger, clock);
  const written = writtenCaches();
  const listeners = new Set<QueueListener>();
  /** Locks in `sub` (under locks/); a lock file the disk refuses is a store write failure like any other. */
  const lockIn = (sub: string, check: (name: string) => string): Store["withLock"] => {
    const locker = createLocker(join(dir, sub));
    return async (name, fn, lockOpts) => {
      try {
        return await locker(check(name), fn, lockOpts);
      } catch (e) {
        // One line, reported once.
        const err = storeWriteError(e, (e as NodeJS.ErrnoException).path ?? join(dir, sub, `${name}.lock`), dir);
        if (err !== e && err instanceof StoreWriteError) onWrite(err);
        throw err;
      }
    };
  };
  const withLock = lockIn("locks", (name) => checkName("lock", name));

  return {
    dir,
    queue: (name, schema, queueOpts) => {
      const keys = queueOpts?.keys;
      const markers =
        keys &&
        createKeyIndex(join(dir, "index", checkName("queue", name)), opts.fsync !== false, (e, path) => {
          // Reported like the store's other writes: once per change of state in `run`, one line in a command.
          const err = storeWriteError(e, path, dir);
          if (err instanceof StoreWriteError) onWrite(err);
          return err;
        });
      // update and remove lock the entry (its id, checked by the queue), not the queue: sends to several players at
      // once each record their attempt without waiting for the others' fsyncs.
      const entryLock = lockIn(join("locks", `queue-${name}`), (id) => id);
      const queue = createQueue(
        checkName("queue", name),
        schema,
        records,
        storage,
        withLock,
        entryLock,
        clock,
        markers && { keys, markers },
      );
      return watchedQueue(name, queue, listeners);
    },
    cache: (name, schema, cacheOpts) =>
      createCache(checkName("cache", name), schema, records, clock, { ...cacheOpts, dir, written }),
    box: (name, schema) => createBox(checkName("box", name), schema, records, dir),
    counters: (name) => createCounters(checkName("counters", name), records, storage, withLock),
    withLock,
    quarantined: () => [...records.quarantined],
    corrupt: () => listCorrupt(dir),
    caches: () => listCaches(dir),
    watchQueues(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    queueStamp: (name) => queueStamp(dir, checkName("queue", name)),
    queueIds: (name) => queueIds(dir, checkName("queue", name)),
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
