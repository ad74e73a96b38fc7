/** A cached value with the time it was saved, in one file (`cache/<name>`), replaced atomically. */
import { readdir, stat } from "../fsio.ts";
import { join } from "node:path";
import * as v from "valibot";
import type { Clock } from "../clock.ts";
import { isMissing, TMP_MARK } from "./driver.ts";
import { type Records, schemaCheck } from "./records.ts";

export interface Cache<T> {
  get(): Promise<{ savedAt: number; data: T } | undefined>;
  /** `checked`: `data` is the output of the cache's own schema, not validated again (records.ts, WriteOptions). */
  set(data: T, savedAt?: number, opts?: { checked?: boolean }): Promise<void>;
}

/**
 * How old a value saved at `savedAt` (wall clock) is at `now`. A time in the future means the clock was set back
 * since, or the file was written by a machine with a wrong clock: its age is unknown, so it counts as stale
 * (Infinity) rather than as fresh as can be.
 */
export function cacheAge(savedAt: number, now: number): number {
  return savedAt <= now ? now - savedAt : Number.POSITIVE_INFINITY;
}

/**
 * `durable: false`, for a cache whose loss to a power cut costs nothing (a signal to a process the same power cut
 * stops): written unflushed, and read as missing, not quarantined, when a power cut left it torn.
 */
export interface CacheOptions {
  durable?: boolean;
}

export function createCache<T>(
  name: string,
  schema: v.GenericSchema<T>,
  records: Records,
  clock: Clock,
  opts: CacheOptions = {},
): Cache<T> {
  const key = `cache:${name}`;
  const check = schemaCheck(v.object({ v: v.literal(1), savedAt: v.number(), data: schema }));
  const durable = opts.durable !== false;
  return {
    async get() {
      const record = await records.read(key, check, { quarantine: durable });
      return record && { savedAt: record.savedAt, data: record.data as T };
    },
    set: (data, savedAt = clock.now(), opts) =>
      records.write(key, { v: 1, savedAt, data }, check, { ...opts, fsync: durable }),
  };
}

/**
 * Every cache of the store and when it was last written: the file's modification time, so that a large cache (the
 * ban list) is not read to learn its age.
 */
export async function listCaches(dir: string): Promise<{ name: string; writtenAt: number }[]> {
  let names: string[];
  try {
    names = await readdir(join(dir, "cache"));
  } catch (e) {
    if (isMissing(e)) return [];
    throw e;
  }
  const found = await Promise.all(
    names
      .filter((name) => !name.includes(TMP_MARK))
      .sort()
      .map(async (name) => {
        const info = await stat(join(dir, "cache", name)).catch(() => undefined);
        return info?.isFile() ? [{ name, writtenAt: info.mtimeMs }] : [];
      }),
  );
  return found.flat();
}
