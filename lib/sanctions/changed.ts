/**
 * A durable "the sanctions changed" marker, so a running `run` learns at once what a one-shot CLI process (ban,
 * unban, warn, queue retry) queued or delivered, instead of kicking from a stale ban list until the next
 * `intervals.bans` refresh (a CLI unban would otherwise keep the player kicked).
 *
 * The CLI writes the store cache "sanctions_changed" (a fresh id each time) after its delivery round; `run`'s bans
 * feature remembers the id it last acted on, compares on every queue round (one small file read) and, where the
 * platform allows, watches the store's cache directory to react immediately.
 */
import type { FSWatcher } from "node:fs";
import { mkdir } from "../fsio.ts";
import { join } from "node:path";
import * as v from "valibot";
import type { Logger } from "../log.ts";
import type { Store } from "../store/index.ts";

export const CHANGED_CACHE = "sanctions_changed";

const ChangedSchema = v.object({
  /** New on every write: two writes within one clock tick still differ. */
  id: v.string(),
  /** The process that wrote it, for the log. */
  pid: v.number(),
  /** What it queued or delivered: "ban", "unban", "warning". */
  kinds: v.array(v.string()),
});
export type SanctionsChanged = v.InferOutput<typeof ChangedSchema>;

/**
 * Not flushed (docs/reliability.md, "Why each fsync"): the `run` it wakes is stopped by the power cut that could take
 * it, and starts from the service's ban list and its queues.
 */
export function sanctionsChangedCache(store: Store) {
  return store.cache(CHANGED_CACHE, ChangedSchema, { durable: false });
}

/** Called by one-shot processes after their delivery round. */
export function markSanctionsChanged(store: Store, kinds: string[]): Promise<void> {
  return sanctionsChangedCache(store).set({ id: crypto.randomUUID(), pid: process.pid, kinds });
}

/**
 * Tells apart markers already acted on from new ones: `changed()` reads the marker and returns it when it differs
 * from the last one seen. The baseline is the marker at creation (the ban list is fetched at startup anyway).
 */
export function changeTracker(store: Store): { changed(): Promise<SanctionsChanged | undefined> } {
  const cache = sanctionsChangedCache(store);
  let seen: Promise<string | undefined> = cache.get().then(
    (m) => m?.data.id,
    () => undefined,
  );
  return {
    async changed() {
      const last = await seen;
      const now = await cache.get();
      if (!now || now.data.id === last) return undefined;
      seen = Promise.resolve(now.data.id);
      return now.data;
    },
  };
}

/**
 * Calls `onChange` when the marker file is (re)written, via fs.watch on the store's cache directory (layout in
 * lib/store/index.ts). Returns a closer; when watching isn't possible (no inotify watches left, an unsupported
 * filesystem) it logs why and returns a no-op, and the queue rounds still notice the change.
 */
export async function watchSanctionsChanged(store: Store, onChange: () => void, logger: Logger): Promise<() => void> {
  const dir = join(store.dir, "cache");
  const { watch } = await import("node:fs"); // only `run` watches: one-shot commands skip node:fs
  let watcher: FSWatcher;
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    // A write is a temp file renamed over the marker: the rename names the marker (null on some platforms).
    watcher = watch(dir, { persistent: false }, (_event, file) => {
      if (file === null || file === CHANGED_CACHE) onChange();
    });
  } catch (e) {
    logger.info(`not watching ${dir} (${(e as Error).message}); sanction changes are noticed every queue round`);
    return () => {};
  }
  watcher.on("error", (e) => {
    logger.info(`stopped watching ${dir} (${e.message}); sanction changes are noticed every queue round`);
    watcher.close();
  });
  return () => watcher.close();
}
