/**
 * What the queues of one store went through in this process, told as it happens, so that a reader who keeps
 * counts (the status page's, lib/monitor/queue-counts.ts) never reads a queue again to learn about its own
 * process's changes. Another process's changes are not told: `queueStamp` says that a queue's folder changed.
 */
import { readdir, stat } from "../fsio.ts";
import { join } from "node:path";
import { isMissing } from "./driver.ts";
import { ID_RE, type Queue, type QueueEntry } from "./queue.ts";

/** An entry written (`entry`) or removed (no `entry`) through this store. */
export interface QueueChange {
  queue: string;
  id: string;
  entry?: QueueEntry<unknown>;
}
export type QueueListener = (change: QueueChange) => void;

/** `queue` with every successful add, update and remove told to `listeners` (a listener that throws is ignored). */
export function watchedQueue<T>(name: string, queue: Queue<T>, listeners: ReadonlySet<QueueListener>): Queue<T> {
  const tell = (id: string, entry?: QueueEntry<T>) => {
    for (const listener of listeners) {
      try {
        listener({ queue: name, id, ...(entry ? { entry } : {}) });
      } catch {
        // A reader's bug must not fail a write that happened.
      }
    }
  };
  return {
    ...queue,
    async add(data, shown, after) {
      // Told once the entry is in place: with `shown`, before its flush (which may then fail, the entry staying).
      let told = false;
      const show = (e: QueueEntry<T>) => {
        told = true;
        tell(e.id, e);
        return shown?.(e);
      };
      const entry = await queue.add(data, shown && show, after);
      if (!told) tell(entry.id, entry);
      return entry;
    },
    async update(...args) {
      const entry = await queue.update(...args);
      if (entry) tell(entry.id, entry);
      return entry;
    },
    async remove(...args) {
      const removed = await queue.remove(...args);
      tell(args[0]);
      return removed;
    },
    async take(id) {
      const taken = await queue.take(id);
      tell(id);
      return taken;
    },
  };
}

/**
 * The ids of a queue's entries, oldest first, from its folder's names alone: a plain listing (no file types, no
 * key mapping) costs a third of Queue.list's way of finding them, and nothing is read.
 */
export async function queueIds(dir: string, name: string): Promise<string[]> {
  try {
    return (await readdir(join(dir, "queue", name))).filter((id) => ID_RE.test(id)).sort();
  } catch (e) {
    if (isMissing(e)) return [];
    throw e;
  }
}

/**
 * A queue folder's stamp: it changes whenever an entry is added, rewritten or removed there, by any process (each
 * is a rename or an unlink in the folder, which sets its modification time). `changedAt` is that time (wall
 * clock, ms): file systems keep it to a few milliseconds, so a stamp younger than that may not show a change made
 * just after it was read.
 */
export async function queueStamp(dir: string, name: string): Promise<{ stamp: string; changedAt: number }> {
  try {
    const s = await stat(join(dir, "queue", name), { bigint: true });
    return { stamp: `${s.ino}:${s.mtimeNs}`, changedAt: Number(s.mtimeMs) };
  } catch (e) {
    if (isMissing(e)) return { stamp: "none", changedAt: 0 };
    throw e;
  }
}
