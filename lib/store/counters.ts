/**
 * Named numeric counters, one file per counter key (`counters/<name>/<key>`). The file holds the
 * original key, so keys that are not safe as file names are stored under a hash of themselves.
 * add and remove run under the counter set's lock (in-process chain + lock file).
 */
import * as v from "valibot";
import { type Records, schemaCheck } from "./records.ts";
import { NAME_RE, type WithLock } from "./types.ts";

export interface Counters {
  /** 0 when the counter does not exist. */
  get(key: string): Promise<number>;
  /** Adds delta (may be negative) and returns the new value. */
  add(key: string, delta: number): Promise<number>;
  /**
   * add() for many keys under one hold of the lock, several files written at once: each is written as add() writes
   * it (atomic, durable), and thousands of them take a fraction of the time one after another would.
   */
  addMany(deltas: Iterable<readonly [key: string, delta: number]>): Promise<void>;
  all(): Promise<Record<string, number>>;
  remove(key: string): Promise<void>;
}

/**
 * Plain keys are used as they are; anything else as `~<sha256 hex>` (cannot collide: `~` is not
 * plain). WebCrypto rather than node:crypto, whose import alone costs ~7 ms of CLI startup.
 */
export async function counterSegment(key: string): Promise<string> {
  if (NAME_RE.test(key)) return key;
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key));
  return `~${Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** Counter files addMany writes at once (the disk syncs several in one go). */
const MANY_AT_ONCE = 8;

const envelope = v.object({ v: v.literal(1), key: v.string(), value: v.pipe(v.number(), v.finite()) });

export function createCounters(
  name: string,
  records: Records,
  storage: { getKeys(base: string): Promise<string[]> },
  withLock: WithLock,
): Counters {
  const prefix = `counters:${name}`;
  const lockName = `counters-${name}`;
  // The key stored inside must belong in this file (guards against files copied or renamed by hand).
  const check = (segment: string) =>
    schemaCheck(envelope, async (r) =>
      (await counterSegment(r.key)) === segment ? undefined : "key does not match its file",
    );
  const read = (segment: string) => records.read(`${prefix}:${segment}`, check(segment));

  return {
    async get(key) {
      return (await read(await counterSegment(key)))?.value ?? 0;
    },
    add(key, delta) {
      if (!Number.isFinite(delta))
        return Promise.reject(new Error(`store: counter delta must be finite, got ${delta}`));
      return withLock(lockName, async () => {
        const segment = await counterSegment(key);
        const value = ((await read(segment))?.value ?? 0) + delta;
        await records.write(`${prefix}:${segment}`, { v: 1, key, value }, check(segment));
        return value;
      });
    },
    addMany(deltas) {
      // One write per key: two writers of one file at once would lose a delta.
      const summed = new Map<string, number>();
      for (const [key, delta] of deltas) {
        if (!Number.isFinite(delta))
          return Promise.reject(new Error(`store: counter delta must be finite, got ${delta}`));
        summed.set(key, (summed.get(key) ?? 0) + delta);
      }
      const list = [...summed];
      return withLock(lockName, async () => {
        let next = 0;
        const worker = async () => {
          for (let i = next++; i < list.length; i = next++) {
            const [key, delta] = list[i] as readonly [string, number];
            const segment = await counterSegment(key);
            const value = ((await read(segment))?.value ?? 0) + delta;
            await records.write(`${prefix}:${segment}`, { v: 1, key, value }, check(segment));
          }
        };
        await Promise.all(Array.from({ length: Math.min(MANY_AT_ONCE, list.length) }, worker));
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
      const segment = await counterSegment(key);
      await withLock(lockName, () => records.remove(`${prefix}:${segment}`));
    },
  };
}
