/**
 * A durable queue: one file per entry (`queue/<name>/<id>`), so producers in other processes only
 * ever create files and never read-modify-write a shared one. update and remove take the entry's
 * lock (`locks/queue-<name>/<id>.lock`) so an update cannot resurrect an entry another process has just removed,
 * nor two updates of one entry lose either; updates of different entries go on side by side.
 */
import * as v from "valibot";
import type { Clock } from "../clock.ts";
import type { KeyIndex } from "./keyindex.ts";
import type { OnShown } from "./driver.ts";
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
  /**
   * Appends an entry; its id sorts by creation time, and after `after` (an id another process wrote, maybe with a
   * clock since set back). `shown`: called with the entry once it is in place and readable by other processes,
   * before it is flushed (a failed flush then throws marked `flushFailed`, store/errors.ts).
   */
  add(data: T, shown?: (entry: QueueEntry<T>) => void | Promise<void>, after?: string): Promise<QueueEntry<T>>;
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
  /**
   * false when the entry was already gone. `known`: the entry as the caller read it, whose keys (never changed by an
   * update) say which index markers go with it; without it the entry is read first.
   */
  remove(id: string, known?: QueueEntry<T>): Promise<boolean>;
  /**
   * Removes the entry and returns it as it was when removed (read under its lock, as `update` reads it); undefined
   * when it was already gone. An attempt recorded with `update` is either in what it returns, or finds it gone.
   */
  take(id: string): Promise<QueueEntry<T> | undefined>;
  /** Number of entry files, without reading them (list() may quarantine some). */
  size(): Promise<number>;
  /** The ids of the entries, oldest first, without reading them. */
  ids(): Promise<string[]>;
  /**
   * The entries with this key (QueueOptions.keys), oldest first, read through the index: as many reads as the key
   * has entries, whatever the length of the queue.
   */
  byKey(key: string): Promise<QueueEntry<T>[]>;
  /** Makes the index agree with the queue (QueueOptions.keys; KeyIndex.verify): `run` does it at every start. */
  verifyIndex(): Promise<{ added: number; removed: number }>;
}

export interface QueueOptions<T> {
  /** The keys an entry is found by (byKey); they must never change while the entry exists. */
  keys?: (data: T) => string[];
}

/**
 * Whether a request of this entry may have reached the service. Entries written before the flag existed have only
 * an attempt count: any attempt on record may have been a write whose answer was lost, so it is looked up first.
 */
export function isUncertain(entry: { attempts: number; uncertain?: boolean }): boolean {
  return entry.uncertain ?? entry.attempts > 0;
}

export const ID_RE = /^\d{15}-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Ids are `<ms, zero-padded to 15>-<uuid>`; within one process they strictly increase, even within one ms, and an id
 * made after `after` sorts after it.
 */
let lastIdMs = 0;
/**
 * When an entry was created, from its id (`<ms>-<uuid>`) without reading it: its createdAt, or later where an id had
 * to sort after another process's (newId).
 */
export const idTime = (id: string): number => Number(id.slice(0, id.indexOf("-")));

export function newId(now: number, after?: string): string {
  const floor = after ? idTime(after) : 0;
  lastIdMs = Math.max(Math.floor(now), lastIdMs + 1, floor + 1);
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
  withEntryLock: WithLock,
  clock: Clock,
  index?: { keys: (data: T) => string[]; markers: KeyIndex },
): Queue<T> {
  const files = entryFiles(name, schema, records, storage);
  const { read, write, ids, list } = files;
  const verifyIndex = async () => {
    if (!index) return { added: 0, removed: 0 };
    const entries = (await list()).map((e) => ({ id: e.id, keys: index.keys(e.data) }));
    return index.markers.verify(entries, async (id) => (await read(id)) !== undefined, clock.now());
  };
  /** The entry's file, then its index markers (`entry` names them); false when the file was already gone. */
  const removeFiles = async (id: string, entry: QueueEntry<T> | undefined) => {
    const removed = await files.remove(id);
    // After the entry: a crash in between leaves a marker without an entry, which readers skip.
    if (index && entry) await index.markers.remove(index.keys(entry.data), id);
    return removed;
  };
  const ensureBuilt = index ? indexOnFirstUse(name, index.markers, ids, withLock, verifyIndex) : async () => {};

  return {
    async add(data, shown, after) {
      const now = clock.now();
      const entry: QueueEntry<T> = { id: newId(now, after), createdAt: now, attempts: 0, data };
      if (index) {
        await ensureBuilt(true);
        await index.markers.add(index.keys(data), entry.id);
      }
      await write(entry, shown && (() => shown(entry)));
      return entry;
    },
    list,
    get: (id) => (ID_RE.test(id) ? read(id) : Promise.resolve(undefined)),
    update(id, patch, onlyIf) {
      if (!ID_RE.test(id)) return Promise.resolve(undefined);
      return withEntryLock(id, async () => {
        const current = await read(id);
        if (!current || (onlyIf && !onlyIf(current))) return undefined;
        const next = patched(current, patch);
        await write(next);
        return next;
      });
    },
    remove(id, known) {
      if (!ID_RE.test(id)) return Promise.resolve(false);
      return withEntryLock(id, async () => {
        return removeFiles(id, index ? (known ?? (await read(id))) : undefined);
      });
    },
    take(id) {
      if (!ID_RE.test(id)) return Promise.resolve(undefined);
      return withEntryLock(id, async () => {
        const entry = await read(id);
        return entry && (await removeFiles(id, entry)) ? entry : undefined;
      });
    },
    async size() {
      return (await ids()).length;
    },
    ids,
    async byKey(key) {
      if (!index) throw new Error(`store: queue ${name} has no index`);
      await ensureBuilt();
      const found = await Promise.all((await index.markers.ids(key)).filter((id) => ID_RE.test(id)).map(read));
      return found.filter((e): e is QueueEntry<T> => e !== undefined && index.keys(e.data).includes(key));
    },
    verifyIndex,
  };
}

/** The entry after `patch`, keeping its id and creation time. */
function patched<T>(current: QueueEntry<T>, patch: Partial<Omit<QueueEntry<T>, "id" | "createdAt">>): QueueEntry<T> {
  const next: QueueEntry<T> = { ...current, ...patch, id: current.id, createdAt: current.createdAt };
  // `{ lastError: undefined }` clears the field, as it will read back from the file.
  for (const key of OPTIONAL) if (next[key] === undefined) delete next[key];
  return next;
}

/** The file of one entry: its data in a versioned envelope. */
function entryEnvelope<T>(schema: v.GenericSchema<T>) {
  return v.object({
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
}

/** A queue's entry files (`queue:<name>:<id>`), checked against the envelope and their name at each read and write. */
function entryFiles<T>(
  name: string,
  schema: v.GenericSchema<T>,
  records: Records,
  storage: { getKeys(base: string): Promise<string[]> },
) {
  const prefix = `queue:${name}`;
  const envelope = entryEnvelope(schema);
  type Envelope = v.InferOutput<typeof envelope>;
  const checkFor = (id: string): Check<QueueEntry<T>> =>
    schemaCheck(envelope, (e) => (e.id === id ? undefined : `id ${JSON.stringify(e.id)} does not match its file`));
  const strip = ({ v: _v, ...entry }: Envelope): QueueEntry<T> => entry;
  const read = async (id: string) => {
    const e = await records.read(`${prefix}:${id}`, checkFor(id));
    return e && strip(e as Envelope);
  };
  const ids = async () => (await storage.getKeys(prefix)).map((k) => k.slice(prefix.length + 1)).sort();
  return {
    read,
    write: (entry: QueueEntry<T>, shown?: OnShown) =>
      records.write(`${prefix}:${entry.id}`, { v: 1, ...entry }, checkFor(entry.id), shown ? { shown } : {}),
    remove: (id: string) => records.remove(`${prefix}:${id}`),
    ids,
    async list() {
      const entries = await mapLimit(await ids(), 16, read);
      return entries.filter((e): e is QueueEntry<T> => e !== undefined);
    },
  };
}

/**
 * Indexes the whole queue once (this version's first use of it), under a lock so that one process does it. A queue
 * still empty when this version first adds to it needs nothing indexed: it is complete from the start. The returned
 * function is called before each use of the index (`adding`: before an add).
 */
function indexOnFirstUse(
  name: string,
  markers: KeyIndex,
  ids: () => Promise<string[]>,
  withLock: WithLock,
  verifyIndex: () => Promise<unknown>,
): (adding?: boolean) => Promise<void> {
  let built = false;
  return async (adding = false) => {
    if (built) return;
    if (await markers.built()) {
      built = true;
      return;
    }
    const empty = (await ids()).length === 0;
    if (adding) {
      if (empty) {
        await markers.markBuilt();
        built = true;
      }
      return; // otherwise the first lookup builds it
    }
    if (empty) return; // nothing to find, nothing to index: the first add marks it built
    await withLock(`index-${name}`, async () => {
      if (!(await markers.built())) await verifyIndex();
    });
    built = true;
  };
}
