/** A cached value with the time it was saved, in one file (`cache/<name>`), replaced atomically. */
import { readdir, stat, utimes } from "../fsio.ts";
import { join } from "node:path";
import * as v from "valibot";
import type { Clock } from "../clock.ts";
import { isMissing, keyToPath, type MadeFile, TMP_MARK } from "./driver.ts";
import { type Records, schemaCheck } from "./records.ts";
import { serialByKey } from "../serial.ts";

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
 * stops): written unflushed, and read as missing, not quarantined, when a power cut left it torn. `sameKept`, for a
 * large value fetched again and again mostly unchanged (the ban list: 60 MB at 80,000 bans, every minute): a value
 * equal to the one this process last wrote there, the file untouched since, is not written again; the file's time is
 * set to now instead, so that its age (`status`) says when it was last confirmed.
 */
export interface CacheOptions {
  durable?: boolean;
  sameKept?: boolean;
}

/**
 * What this process last wrote to each cache with `sameKept` (by path): the value's hash and the file it made; the
 * writes of one cache in turn, so that the file a write looks at afterwards is its own.
 */
export interface WrittenCaches {
  marks: Map<string, { hash: string; ino: number; size: number; mtimeMs: number }>;
  inTurn: ReturnType<typeof serialByKey>;
}

export const writtenCaches = (): WrittenCaches => ({ marks: new Map(), inTurn: serialByKey() });

/** A fast hash of a cache's serialised value (Bun's wyhash; SHA-256 elsewhere, as under Deno). */
async function valueHash(text: string): Promise<string> {
  if ("Bun" in globalThis) return Bun.hash(text).toString(36);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

export function createCache<T>(
  name: string,
  schema: v.GenericSchema<T>,
  records: Records,
  clock: Clock,
  opts: CacheOptions & { dir?: string; written?: WrittenCaches } = {},
): Cache<T> {
  const key = `cache:${name}`;
  const check = schemaCheck(v.object({ v: v.literal(1), savedAt: v.number(), data: schema }));
  const durable = opts.durable !== false;
  const { dir, written } = opts;
  const path = dir && keyToPath(dir, key);
  /** The value serialised once: hashed, and written as the record `{v, savedAt, data}` JSON.stringify would make. */
  const setSame = async (data: T, savedAt: number, write: { checked?: boolean }, at: string, w: WrittenCaches) => {
    const text = JSON.stringify(data);
    const hash = await valueHash(text);
    const last = w.marks.get(at);
    const file = await stat(at).catch(() => undefined);
    w.marks.delete(at);
    if (last?.hash === hash && file?.ino === last.ino && file.size === last.size && file.mtimeMs === last.mtimeMs) {
      const now = new Date(clock.now());
      // Where the time can't be set (a read-only disk), the write below meets the refusal and reports it.
      const touched = await utimes(at, now, now).then(
        () => stat(at),
        () => undefined,
      );
      if (touched) return void w.marks.set(at, { ...last, mtimeMs: touched.mtimeMs });
    }
    const record = `{"v":1,"savedAt":${JSON.stringify(savedAt)},"data":${text}}`;
    // The file as written, not a stat of the path after: another process's rename may land in between.
    let made: MadeFile | undefined;
    await records.writeText(key, record, check, { ...write, fsync: durable, made: (f) => (made = f) });
    if (made) w.marks.set(at, { hash, ino: made.ino, size: made.size, mtimeMs: made.mtimeMs });
  };
  return {
    async get() {
      const record = await records.read(key, check, { quarantine: durable });
      return record && { savedAt: record.savedAt, data: record.data as T };
    },
    set: (data, savedAt = clock.now(), setOpts) =>
      opts.sameKept && written && path
        ? written.inTurn(path, () => setSame(data, savedAt, setOpts ?? {}, path, written))
        : records.write(key, { v: 1, savedAt, data }, check, { ...setOpts, fsync: durable }),
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
