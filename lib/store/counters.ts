/**
 * Named numeric counters, one file per counter key (`counters/<name>/<key>`). The file holds the
 * original key, so keys that are not safe as file names are stored under a hash of themselves.
 * add and remove run under the counter set's lock (in-process chain + lock file).
 */
import { createHash } from "node:crypto";
import * as v from "valibot";
import { type Records, schemaCheck } from "./records.ts";
import { NAME_RE, type WithLock } from "./types.ts";

export interface Counters {
  /** 0 when the counter does not exist. */
  get(key: string): Promise<number>;
  /** Adds delta (may be negative) and returns the new value. */
  add(key: string, delta: number): Promise<number>;
  all(): Promise<Record<string, number>>;
  remove(key: string): Promise<void>;
}

/** Plain keys are used as they are; anything else as `~<sha256>` (cannot collide: `~` is not plain). */
export const counterSegment = (key: string) =>
  NAME_RE.test(key) ? key : `~${createHash("sha256").update(key).digest("hex")}`;

const envelope = v.object({ v: v.literal(1), key: v.string(), value: v.pipe(v.number(), v.finite()) });

export function createCounters(
  name: string,
  records: Records,
  storage: { getKeys(base: string): Promise<string[]> },
  withLock: WithLock,
): Counters {
  const prefix = `counters:${name}`;
  const lockName = `counters-${name}`;
  const checkFor = (segment: string) =>
    schemaCheck(envelope, (r) => (counterSegment(r.key) === segment ? undefined : "key does not match its file"));
  const read = async (segment: string) => records.read(`${prefix}:${segment}`, checkFor(segment));

  return {
    async get(key) {
      return (await read(counterSegment(key)))?.value ?? 0;
    },
    add(key, delta) {
      if (!Number.isFinite(delta))
        return Promise.reject(new Error(`store: counter delta must be finite, got ${delta}`));
      const segment = counterSegment(key);
      return withLock(lockName, async () => {
        const value = ((await read(segment))?.value ?? 0) + delta;
        await records.write(`${prefix}:${segment}`, { v: 1, key, value }, checkFor(segment));
        return value;
      });
    },
    async all() {
      const out: Record<string, number> = Object.create(null); // a key named "__proto__" stays a key
      for (const k of (await storage.getKeys(prefix)).sort()) {
        const record = await read(k.slice(prefix.length + 1));
        if (record) out[record.key] = record.value;
      }
      return out;
    },
    async remove(key) {
      await withLock(lockName, () => records.remove(`${prefix}:${counterSegment(key)}`));
    },
  };
}
