/**
 * The queue depths of the status page and /metrics (docs/monitoring.md), kept as the queues change so that a
 * request costs the same with 10,000 queued entries as with none. The queues are read once (when the listener
 * starts, or at the first request); from then on:
 *
 * - this process's adds, updates and removes are told by the store (Store.watchQueues) and counted at once;
 * - another process's (`hub-agent ban`, `queue drop`) change the queue folder's stamp (Store.queueStamp): at most
 *   once per SYNC_MS a request looks at the stamps, and a queue whose stamp changed has its entry names listed
 *   again (no entry read); only entries not counted yet are read.
 *
 * What a listing cannot see is another process rewriting an entry this one has counted (a `queue retry` whose
 * attempt failed): its `uncertain` shows once this process writes the entry again (its next delivery round).
 */
import * as v from "valibot";
import type { Clock } from "../clock.ts";
import { entryUncertain, QUEUE_NAMES, type QueueName, sends } from "../queues.ts";
import type { QueueEntry, Store } from "../store/index.ts";
import type { QueueDepth } from "./status.ts";

/** How often a request may look at the stamps (and list a queue that changed). */
export const SYNC_MS = 1_000;
/** A stamp younger than this may hide a change made in the same tick of the file system's clock: not trusted. */
const SETTLE_MS = 1_000;
/** Entries read at once when a listing finds new ones (bounded: a long queue must not exhaust file descriptors). */
const READ_AT_ONCE = 16;

const SENDS = 1;
const UNCERTAIN = 2;

/** What one entry counts for. */
interface Facts {
  flags: number;
  createdAt: number;
}

const factsOf = (queue: QueueName, entry: QueueEntry<unknown>): Facts => ({
  flags: (sends(queue, entry.data) ? SENDS : 0) | (entryUncertain(queue, entry) ? UNCERTAIN : 0),
  createdAt: entry.createdAt,
});

/** First index in sorted `ids` whose id is not below `id`. */
function lowerBound(ids: string[], id: string): number {
  let lo = 0;
  let hi = ids.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((ids[mid] as string) < id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** One queue's entries as counted: each id with what it counts for, and the ids in order (oldest first). */
class Tally {
  private facts = new Map<string, Facts>();
  private order: string[] = [];
  waiting = 0;
  uncertain = 0;
  /** The stamp of the last listing; undefined before it, or when it was too young to trust. */
  stamp?: string;
  /** When it was last listed, or found unchanged (monotonic); -Infinity before the first listing. */
  syncedAt = -Infinity;

  get size(): number {
    return this.facts.size;
  }

  /** The oldest entry's creation time (ids sort by it, as `queue status` lists them). */
  get oldestAt(): number | undefined {
    const id = this.order[0];
    return id === undefined ? undefined : this.facts.get(id)?.createdAt;
  }

  /** An entry this process wrote (`entry`) or removed. */
  told(queue: QueueName, id: string, entry?: QueueEntry<unknown>): void {
    const old = this.facts.get(id);
    if (old) this.count(old, -1);
    if (entry) {
      const facts = factsOf(queue, entry);
      if (!old) this.order.splice(lowerBound(this.order, id), 0, id);
      this.facts.set(id, facts);
      this.count(facts, 1);
    } else if (old) {
      this.facts.delete(id);
      this.order.splice(lowerBound(this.order, id), 1);
    }
  }

  /**
   * Makes the count agree with a listing of the queue's folder (sorted ids), except for `touched`: ids this process
   * wrote or removed since the listing began, whose count is newer than the listing. Counted ids not listed are
   * dropped; returns the listed ids not counted yet, to be read.
   */
  reconcile(listed: string[], touched: ReadonlySet<string>): string[] {
    const order: string[] = [];
    const unread: string[] = [];
    const old = this.order;
    let i = 0;
    let j = 0;
    // Both are sorted: one walk, no lookup per id.
    while (i < old.length || j < listed.length) {
      const a = old[i];
      const b = listed[j];
      if (b === undefined || (a !== undefined && a < b)) {
        i++;
        if (touched.has(a as string)) order.push(a as string);
        else this.drop(a as string);
      } else if (a === undefined || b < a) {
        j++;
        if (!touched.has(b)) unread.push(b);
      } else {
        i++;
        j++;
        order.push(a);
      }
    }
    this.order = order;
    return unread;
  }

  /** Entries read after a listing (sorted), unless this process wrote or removed them meanwhile. */
  addRead(queue: QueueName, entries: QueueEntry<unknown>[], touched: ReadonlySet<string>): void {
    const added: string[] = [];
    for (const entry of entries) {
      if (touched.has(entry.id) || this.facts.has(entry.id)) continue;
      const facts = factsOf(queue, entry);
      this.facts.set(entry.id, facts);
      this.count(facts, 1);
      added.push(entry.id);
    }
    if (!added.length) return;
    // Merge the two sorted lists.
    const order: string[] = [];
    let i = 0;
    for (const id of added) {
      while (i < this.order.length && (this.order[i] as string) < id) order.push(this.order[i++] as string);
      order.push(id);
    }
    while (i < this.order.length) order.push(this.order[i++] as string);
    this.order = order;
  }

  private drop(id: string) {
    const old = this.facts.get(id);
    if (!old) return;
    this.facts.delete(id);
    this.count(old, -1);
  }

  private count({ flags }: Facts, by: number) {
    if (flags & SENDS) this.waiting += by;
    if (flags & UNCERTAIN) this.uncertain += by;
  }
}

export class QueueCounts {
  private tallies = new Map<QueueName, Tally>(QUEUE_NAMES.map((queue) => [queue, new Tally()]));
  private syncing = new Map<QueueName, Promise<void>>();
  /** Ids this process wrote or removed while their queue was being listed. */
  private logs = new Set<{ queue: QueueName; touched: Set<string> }>();
  private unwatch: () => void;

  constructor(
    private store: Store,
    private clock: Clock,
  ) {
    // Before the first listing, so that no change of this process falls between the listing and the counting.
    this.unwatch = store.watchQueues(({ queue, id, entry }) => {
      const t = this.tallies.get(queue as QueueName);
      if (!t) return; // not a queue that is shown
      t.told(queue as QueueName, id, entry);
      for (const log of this.logs) if (log.queue === queue) log.touched.add(id);
    });
  }

  /** Every queue's depth now, in QUEUE_NAMES order. */
  async depths(now: number): Promise<QueueDepth[]> {
    const tallies = await Promise.all(QUEUE_NAMES.map((queue) => this.current(queue)));
    return QUEUE_NAMES.map((queue, i) => {
      const t = tallies[i] as Tally;
      const oldest = t.oldestAt;
      return {
        queue,
        entries: t.size,
        waiting: t.waiting,
        uncertain: t.uncertain,
        oldest_age_s: oldest === undefined ? null : Math.max(0, Math.round((now - oldest) / 1000)),
      };
    });
  }

  /** Stops listening to the store. */
  close(): void {
    this.unwatch();
  }

  private async current(queue: QueueName): Promise<Tally> {
    const t = this.tallies.get(queue) as Tally;
    if (this.clock.monotonic() - t.syncedAt >= SYNC_MS && (await this.changed(queue, t))) await this.sync(queue);
    return t;
  }

  private async changed(queue: QueueName, t: Tally): Promise<boolean> {
    if (t.syncedAt === -Infinity) return true; // never listed
    const { stamp } = await this.store.queueStamp(queue);
    if (stamp !== t.stamp) return true;
    t.syncedAt = this.clock.monotonic(); // unchanged: look again in SYNC_MS
    return false;
  }

  /** Lists the queue's entries again (one listing at a time per queue; callers meanwhile wait for it). */
  private sync(queue: QueueName): Promise<void> {
    let running = this.syncing.get(queue);
    if (!running) {
      running = this.list(queue).finally(() => this.syncing.delete(queue));
      this.syncing.set(queue, running);
    }
    return running;
  }

  private async list(queue: QueueName): Promise<void> {
    const t = this.tallies.get(queue) as Tally;
    const log = { queue, touched: new Set<string>() };
    this.logs.add(log);
    try {
      // The stamp before the listing: a change after it gives another stamp, so the next look lists again.
      const { stamp, changedAt } = await this.store.queueStamp(queue);
      const unread = t.reconcile(await this.store.queueIds(queue), log.touched);
      const q = this.store.queue(queue, v.unknown());
      const read: QueueEntry<unknown>[] = [];
      for (let i = 0; i < unread.length; i += READ_AT_ONCE) {
        for (const entry of await Promise.all(unread.slice(i, i + READ_AT_ONCE).map((id) => q.get(id))))
          if (entry) read.push(entry);
      }
      t.addRead(queue, read, log.touched);
      // File times are wall-clock, like the stamp.
      t.stamp = Date.now() - changedAt >= SETTLE_MS ? stamp : undefined;
      t.syncedAt = this.clock.monotonic();
    } finally {
      this.logs.delete(log);
    }
  }
}
