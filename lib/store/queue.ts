/**
 * A durable queue: one file per entry (`queue/<name>/<id>`), so producers in other processes only
 * ever create files and never read-modify-write a shared one. update and remove take the queue's
 * lock so an update cannot resurrect an entry another process has just removed.
 */
import * as v from "valibot";
import type { Clock } from "../clock.ts";
import { type Check, type Records, schemaCheck } from "./records.ts";
import type { WithLock } from "./types.ts";

export interface QueueEntry<T> {
  id: string;
  createdAt: number;
  attempts: number;
  lastAttemptAt?: number;
  lastError?: string;
  /** When a write was first sent (recorded before sending, like every attempt). */
  firstAttemptAt?: number;
  /** A request may have reached the service (its answer was lost): look it up there before sending it again. */
  uncertain?: boolean;
  /** When the service was last asked whether it already has this entry, and what it said. */
  lastLookupAt?: number;
  lastLookup?: string;
  data: T;
}

/** The optional envelope fields: `update` drops them when patched to undefined, as they read back from the file. */
const OPTIONAL = ["lastAttemptAt", "lastError", "firstAttemptAt", "uncertain", "lastLookupAt", "lastLookup"] as const;

export interface Queue<T> {
  /** Appends an entry; its id sorts by creation time. */
  add(data: T): Promise<QueueEntry<T>>;
  /** All valid entries, oldest first. Invalid ones are quarantined and left out. */
  list(): Promise<QueueEntry<T>[]>;
  get(id: string): Promise<QueueEntry<T> | undefined>;
  /**
   * undefined when the entry is gone (e.g. removed by another process), or when `onlyIf` says the entry as it is now
   * (read under the queue's lock) must not be changed.
   */
  update(
    id: string,
    patch: Partial<Omit<QueueEntry<T>, "id" | "createdAt">>,
    onlyIf?: (current: QueueEntry<T>) => boolean,
  ): Promise<QueueEntry<T> | undefined>;
  /** false when the entry was already gone. */
  remove(id: string): Promise<boolean>;
  /** Number of entry files, without reading them (list() may quarantine some). */
  size(): Promise<number>;
}

/**
 * Whether a request of this entry may have reached the service. Entries written before the flag existed have only
 * an attempt count: any attempt on record may have been a write whose answer was lost, so it is looked up first.
 */
export function isUncertain(entry: { attempts: number; uncertain?: boolean }): boolean {
  return entry.uncertain ?? entry.attempts > 0;
}

export const ID_RE = /^\d{15}-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Ids are `<ms, zero-padded to 15>-<uuid>`; within one process they strictly increase, even within one ms. */
let lastIdMs = 0;
export function newId(now: number): string {
  lastIdMs = Math.max(Math.floor(now), lastIdMs + 1);
  return `${String(lastIdMs).padStart(15, "0")}-${crypto.randomUUID()}`;
}

const count = v.pipe(v.number(), v.integer(), v.minValue(0));

/** Parallel reads, bounded so a long queue cannot exhaust file descriptors. */
async function mapLimit<A, B>(items: A[], limit: number, fn: (item: A) => Promise<B>): Promise<B[]> {
  const out: B[] = [];
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as A);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

export function createQueue<T>(
  name: string,
  schema: v.GenericSchema<T>,
  records: Records,
  storage: { getKeys(base: string): Promise<string[]> },
  withLock: WithLock,
  clock: Clock,
): Queue<T> {
  const prefix = `queue:${name}`;
  const envelope = v.object({
    v: v.literal(1),
    id: v.string(),
    createdAt: count,
    attempts: count,
    lastAttemptAt: v.optional(count),
    lastError: v.optional(v.string()),
    firstAttemptAt: v.optional(count),
    uncertain: v.optional(v.boolean()),
    lastLookupAt: v.optional(count),
    lastLookup: v.optional(v.string()),
    data: schema,
  });
  const checkFor = (id: string): Check<QueueEntry<T>> =>
    schemaCheck(envelope, (e) => (e.id === id ? undefined : `id ${JSON.stringify(e.id)} does not match its file`));
  const strip = ({ v: _v, ...entry }: v.InferOutput<typeof envelope>): QueueEntry<T> => entry;
  const read = async (id: string) => {
    const e = await records.read(`${prefix}:${id}`, checkFor(id));
    return e && strip(e as v.InferOutput<typeof envelope>);
  };
  const write = (entry: QueueEntry<T>) =>
    records.write(`${prefix}:${entry.id}`, { v: 1, ...entry }, checkFor(entry.id));
  const ids = async () => (await storage.getKeys(prefix)).map((k) => k.slice(prefix.length + 1)).sort();
  const lockName = `queue-${name}`;

  return {
    async add(data) {
      const now = clock.now();
      const entry: QueueEntry<T> = { id: newId(now), createdAt: now, attempts: 0, data };
      await write(entry);
      return entry;
    },
    async list() {
      const entries = await mapLimit(await ids(), 16, read);
      return entries.filter((e): e is QueueEntry<T> => e !== undefined);
    },
    get: (id) => (ID_RE.test(id) ? read(id) : Promise.resolve(undefined)),
    update(id, patch, onlyIf) {
      if (!ID_RE.test(id)) return Promise.resolve(undefined);
      return withLock(lockName, async () => {
        const current = await read(id);
        if (!current || (onlyIf && !onlyIf(current))) return undefined;
        const next: QueueEntry<T> = { ...current, ...patch, id, createdAt: current.createdAt };
        // `{ lastError: undefined }` clears the field, as it will read back from the file.
        for (const key of OPTIONAL) if (next[key] === undefined) delete next[key];
        await write(next);
        return next;
      });
    },
    remove(id) {
      if (!ID_RE.test(id)) return Promise.resolve(false);
      return withLock(lockName, () => records.remove(`${prefix}:${id}`));
    },
    async size() {
      return (await ids()).length;
    },
  };
}
