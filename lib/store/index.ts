/**
 * The agent's durable store: unstorage over an atomic filesystem driver, with typed, validated
 * queues, caches and counters on top, and a cross-process lock. Shared by the long-lived `run`
 * process and one-shot CLI commands, so every write is atomic and every read is validated.
 *
 * Layout under `dir`: queue/<name>/<id>, cache/<name>, counters/<name>/<key>, locks/<name>.lock,
 * corrupt/… (quarantined files). Every record is JSON with a format version `v`.
 */
import { mkdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { createStorage } from "unstorage";
import type { GenericSchema } from "valibot";
import { type Clock, systemClock } from "../clock.ts";
import { type Logger, silentLogger } from "../log.ts";
import { type Cache, createCache } from "./cache.ts";
import { type Counters, createCounters } from "./counters.ts";
import atomicFs, { cleanStaleTemp } from "./driver.ts";
import { createLocker } from "./lock.ts";
import { type Queue, createQueue } from "./queue.ts";
import { type QuarantineRecord, createRecords } from "./records.ts";
import { checkName } from "./types.ts";

export type { Cache } from "./cache.ts";
export type { Counters } from "./counters.ts";
export { LockTimeoutError } from "./lock.ts";
export type { Queue, QueueEntry } from "./queue.ts";
export type { QuarantineRecord } from "./records.ts";

export interface StoreOptions {
  dir: string;
  logger?: Logger;
  /** Timestamps of entries, caches and quarantined files. Lock waits and staleness use real time. */
  clock?: Clock;
  /** fsync files and directories on write (default true): survives power loss, not only crashes. */
  fsync?: boolean;
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
}

/** Temp files older than this were left by a writer that died mid-write. */
const STALE_TEMP_MS = 5 * 60_000;

export async function openStore(opts: StoreOptions): Promise<Store> {
  const dir = resolve(opts.dir);
  const logger = (opts.logger ?? silentLogger).withTag("store");
  const clock = opts.clock ?? systemClock;
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const cleaned = await cleanStaleTemp(dir, STALE_TEMP_MS);
  if (cleaned) logger.info("removed stale temp files left by interrupted writes", { count: cleaned });

  const storage = createStorage({ driver: atomicFs({ base: dir, fsync: opts.fsync }) });
  const records = createRecords(storage, dir, logger, clock);
  const locker = createLocker(join(dir, "locks"));
  const withLock: Store["withLock"] = async (name, fn, lockOpts) => locker(checkName("lock", name), fn, lockOpts);

  return {
    dir,
    queue: (name, schema) => createQueue(checkName("queue", name), schema, records, storage, withLock, clock),
    cache: (name, schema) => createCache(checkName("cache", name), schema, records, clock),
    counters: (name) => createCounters(checkName("counters", name), records, storage, withLock),
    withLock,
    quarantined: () => [...records.quarantined],
  };
}
