/**
 * A queue's entries by key (a player's game id, their service user id), so that one player's entries are found
 * without reading the queue: for each key of an entry, an empty marker file `index/<queue>/<hash of the key>/<id>`.
 *
 * The index may hold more than the queue, never less. A marker is written before its entry, and removed after it;
 * readers read each marked entry and check that it still has the key, so a marker whose entry is gone (a crash
 * between the two removals) or that belongs to another key of the same hash is skipped. An entry without a marker can
 * only come from a version without the index, or from a power cut that took a marker and not its entry: the whole
 * queue is indexed before the index is first used (`built` records that), and again by `verify`, which `run` calls
 * at every start; it also deletes markers left without an entry.
 *
 * `built` holds the id of the boot it was written in (Linux: /proc/sys/kernel/random/boot_id), and counts only in
 * that boot. A power cut always ends the boot whose unflushed writes it takes, and nothing short of it (a killed
 * process) loses a write, so while `built` is this boot's, markers are written without a flush: the first use of the
 * index in a new boot indexes the queue again. Without a boot id (other systems), `built` counts whatever it holds
 * and every marker is flushed before its entry is written (docs/reliability.md, "Why each fsync").
 */
import { mkdir, open, readFile, readdir, rmdir, stat, unlink } from "../fsio.ts";
import { join } from "node:path";
import { atomicWrite, fsyncCreated, fsyncDir, isMissing } from "./driver.ts";

/** Written once the whole queue has been indexed (segment names are hex, so it cannot be one). */
export const BUILT = "built";

let boot: Promise<string> | undefined;
/** This boot's id; "" where there is none to read. */
export const bootId = (): Promise<string> =>
  (boot ??= readFile("/proc/sys/kernel/random/boot_id", "utf8").then(
    (id) => id.trim(),
    () => "",
  ));

/** A marker without its entry younger than this may be an entry being written: verify leaves it. */
const STALE_MARKER_MS = 5 * 60_000;

/** A key's folder name: the first 32 hex digits of its SHA-256 (any key is a safe name; a collision is filtered). */
export async function segment(key: string): Promise<string> {
  // Bun's own hash where there is one: WebCrypto's first digest (and TextEncoder's first use) cost more of a
  // command's start. The same digest either way (test/store/keyindex.test.ts).
  if ("Bun" in globalThis) return Bun.SHA256.hash(key, "hex").slice(0, 32);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key)));
  // A plain loop: Array.from with a mapping function cost 0.2 ms of a command's start (its first run).
  let hex = "";
  for (let i = 0; i < 16; i++) hex += digest[i]!.toString(16).padStart(2, "0");
  return hex;
}

export interface KeyIndex {
  /** Marks `id` under each key, durably, before the entry is written. */
  add(keys: readonly string[], id: string): Promise<void>;
  /** Removes the markers of `id` (after its entry was removed); a folder left empty goes too. */
  remove(keys: readonly string[], id: string): Promise<void>;
  /** The ids marked under `key`, sorted (some may have no entry, or not have the key: the caller checks). */
  ids(key: string): Promise<string[]>;
  /** Whether the whole queue was indexed (by this version) in this boot, or ever where there are no boot ids. */
  built(): Promise<boolean>;
  /** Records that the index is complete (the queue is empty, or `verify` went through it). */
  markBuilt(): Promise<void>;
  /**
   * Makes the index agree with `entries` (every entry of the queue with its keys, as listed): adds missing markers
   * for entries that still exist (`exists`: one removed since the listing needs none), deletes markers of no entry
   * older than STALE_MARKER_MS, then records that the index is built. Returns what it changed.
   */
  verify(
    entries: { id: string; keys: readonly string[] }[],
    exists: (id: string) => Promise<boolean>,
    now?: number,
  ): Promise<{ added: number; removed: number }>;
}

/**
 * The index of the queue whose markers live under `root`. `fail` turns a file-system error into what the store
 * reports (a StoreWriteError naming the path and the fix).
 */
export function createKeyIndex(
  root: string,
  fsync: boolean,
  fail: (e: unknown, path: string) => unknown = (e) => e,
): KeyIndex {
  const at: Place = { root, fsync, current: false };
  /** A failure of the file system as the store reports it (the path and the fix). */
  const guard =
    <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> =>
      fn(...args).catch((e: unknown) => {
        throw fail(e, (e as NodeJS.ErrnoException)?.path ?? root);
      });

  return {
    add: guard((keys: readonly string[], id: string) => addMarkers(at, keys, id)),
    remove: guard((keys: readonly string[], id: string) => removeMarkers(at, keys, id)),
    ids: (key) => markedIds(at, key),
    built: () => isBuilt(at),
    markBuilt: guard(() => markBuilt(at)),
    verify: guard(
      (
        entries: { id: string; keys: readonly string[] }[],
        exists: (id: string) => Promise<boolean>,
        now = Date.now(),
      ) => verifyMarkers(at, entries, exists, now),
    ),
  };
}

/** Where an index lives, and whether its writes are made durable. */
interface Place {
  root: string;
  fsync: boolean;
  /** `built` is this boot's: a marker lost to a power cut is found again, so markers need no flush. */
  current: boolean;
}

async function isBuilt(at: Place): Promise<boolean> {
  let recorded: string;
  try {
    recorded = (await readFile(join(at.root, BUILT), "utf8")).trim();
  } catch {
    return false;
  }
  const id = await bootId();
  if (!id) return true;
  at.current = recorded === id;
  return at.current;
}

const folder = async (at: Place, key: string) => join(at.root, await segment(key));

/** Creates the marker; a folder created on the way is made durable in its parent. */
async function mark(at: Place, dir: string, id: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await (await open(join(dir, id), "w", 0o600)).close();
      return;
    } catch (e) {
      // The folder is missing, or was removed as empty by a remover in between: create it and try again.
      if (!isMissing(e) || attempt > 10) throw e;
      const first = await mkdir(dir, { recursive: true, mode: 0o700 });
      if (at.fsync) await fsyncCreated(dir, first as string | undefined);
    }
  }
}

/**
 * Records that the index is complete, in this boot. Not flushed: a power cut that takes it only has the queue indexed
 * again, and one that keeps it ends its boot (where there are no boot ids, every marker was flushed before it).
 */
async function markBuilt(at: Place): Promise<void> {
  await mkdir(at.root, { recursive: true, mode: 0o700 });
  const id = await bootId();
  await atomicWrite(join(at.root, BUILT), id, false);
  at.current = !!id;
}

async function addMarkers(at: Place, keys: readonly string[], id: string): Promise<void> {
  const dirs = await Promise.all(keys.map((key) => folder(at, key)));
  const flush = at.fsync && !at.current;
  for (const dir of dirs) await mark({ ...at, fsync: flush }, dir, id);
  if (flush) for (const dir of dirs) await fsyncDir(dir);
}

async function removeMarkers(at: Place, keys: readonly string[], id: string): Promise<void> {
  for (const dir of await Promise.all(keys.map((key) => folder(at, key)))) {
    await unlink(join(dir, id)).catch((e) => {
      if (!isMissing(e)) throw e;
    });
    await rmdir(dir).catch(() => {}); // not empty (another entry of the key), or gone: either is fine
  }
}

async function markedIds(at: Place, key: string): Promise<string[]> {
  try {
    return (await readdir(await folder(at, key))).sort();
  } catch (e) {
    if (isMissing(e)) return [];
    throw e;
  }
}

/** KeyIndex.verify: the markers the entries want, the stale ones deleted, the missing ones added, then built. */
async function verifyMarkers(
  at: Place,
  entries: { id: string; keys: readonly string[] }[],
  exists: (id: string) => Promise<boolean>,
  now: number,
): Promise<{ added: number; removed: number }> {
  const want = await wantedMarkers(at, entries);
  const removed = await pruneMarkers(at, want, now);
  const added = await addMissingMarkers(at, want, exists);
  await markBuilt(at);
  return { added, removed };
}

/** folder → the ids that should be marked in it. */
async function wantedMarkers(
  at: Place,
  entries: { id: string; keys: readonly string[] }[],
): Promise<Map<string, Set<string>>> {
  const want = new Map<string, Set<string>>();
  for (const e of entries)
    for (const key of e.keys) {
      const dir = await folder(at, key);
      let ids = want.get(dir);
      if (!ids) want.set(dir, (ids = new Set()));
      ids.add(e.id);
    }
  return want;
}

/**
 * Walks the markers on disk: each wanted one is taken out of `want` (what remains is missing), each of no entry older
 * than STALE_MARKER_MS is deleted, and a folder nothing is wanted in goes if empty. Returns how many it deleted.
 */
async function pruneMarkers(at: Place, want: Map<string, Set<string>>, now: number): Promise<number> {
  let removed = 0;
  let names: string[] = [];
  try {
    names = await readdir(at.root);
  } catch (e) {
    if (!isMissing(e)) throw e;
  }
  for (const name of names) {
    if (name === BUILT) continue;
    const dir = join(at.root, name);
    let ids: string[];
    try {
      ids = await readdir(dir);
    } catch {
      continue; // not a folder, or gone
    }
    const expected = want.get(dir);
    for (const id of ids) {
      if (expected?.has(id)) {
        expected.delete(id);
        continue;
      }
      const info = await stat(join(dir, id)).catch(() => undefined);
      if (info && now - info.mtimeMs > STALE_MARKER_MS) {
        await unlink(join(dir, id)).catch(() => {});
        removed++;
      }
    }
    if (!expected?.size) await rmdir(dir).catch(() => {});
  }
  return removed;
}

/** Marks the entries `want` still lists that exist; returns how many it marked. */
async function addMissingMarkers(
  at: Place,
  want: Map<string, Set<string>>,
  exists: (id: string) => Promise<boolean>,
): Promise<number> {
  let added = 0;
  for (const [dir, ids] of want) {
    let marked = 0;
    for (const id of ids) {
      if (!(await exists(id))) continue; // settled while we looked: its markers went with it
      await mark(at, dir, id);
      marked++;
    }
    if (at.fsync && marked) await fsyncDir(dir);
    added += marked;
  }
  return added;
}
