/** A cached value with the time it was saved, in one file (`cache/<name>`), replaced atomically. */
import * as v from "valibot";
import type { Clock } from "../clock.ts";
import { type Records, schemaCheck } from "./records.ts";

export interface Cache<T> {
  get(): Promise<{ savedAt: number; data: T } | undefined>;
  set(data: T, savedAt?: number): Promise<void>;
}

/**
 * How old a value saved at `savedAt` (wall clock) is at `now`. A time in the future means the clock was set back
 * since, or the file was written by a machine with a wrong clock: its age is unknown, so it counts as stale
 * (Infinity) rather than as fresh as can be.
 */
export function cacheAge(savedAt: number, now: number): number {
  return savedAt <= now ? now - savedAt : Number.POSITIVE_INFINITY;
}

export function createCache<T>(name: string, schema: v.GenericSchema<T>, records: Records, clock: Clock): Cache<T> {
  const key = `cache:${name}`;
  const check = schemaCheck(v.object({ v: v.literal(1), savedAt: v.number(), data: schema }));
  return {
    async get() {
      const record = await records.read(key, check);
      return record && { savedAt: record.savedAt, data: record.data as T };
    },
    set: (data, savedAt = clock.now()) => records.write(key, { v: 1, savedAt, data }, check),
  };
}
