import * as v from "valibot";
import { awaitsReport } from "./rewards/executed-entry.ts";
import { type QueueEntry, type Store, idTime, isUncertain } from "./store/index.ts";

/**
 * The durable queues `run` drains and one-shot commands fill (docs/client-interface.md rules 10, 11, 12, 14), and
 * reward_failed: rewards the game refused, backing off or given up (lib/rewards/failures.ts); nothing to send.
 */
export const QUEUE_NAMES = ["ban", "unban", "warning", "reward_executed", "reward_failed"] as const;
export type QueueName = (typeof QUEUE_NAMES)[number];

export interface QueueItem {
  id: string;
  age_s: number;
  attempts: number;
  last_error: string | null;
  /** When the last send was tried (ISO), null before the first. */
  last_attempt_at: string | null;
  /** When the first send was tried (ISO), null before it (sanction entries only). */
  first_attempt_at: string | null;
  /** A request may have reached the service without its answer: looked up there before it is sent again. */
  uncertain: boolean;
  /** The last such lookup: when (ISO) and what it found ("not found", "failed", …); null before the first. */
  last_lookup: { at: string; result: string } | null;
  /** The entry itself (the queue's own format: who, what, by whom). */
  data: unknown;
}

export interface QueueSummary {
  queue: QueueName;
  entries: number;
  /** Entries `run` still sends to the service; the others wait for the operator or the game. */
  waiting: number;
  /** Age of the oldest entry in seconds, null when empty. */
  oldest_age_s: number | null;
  /** The oldest entries (all of them, or as many as asked for). */
  items: QueueItem[];
  /** Entries not in `items`. */
  more: number;
}

const anyQueue = (store: Store, queue: QueueName) => store.queue(queue, v.unknown());

/** Whether a request of this entry may have reached the service (a sanction's lost answer); rewards never are. */
export function entryUncertain(queue: QueueName, entry: { attempts: number; uncertain?: boolean }): boolean {
  return !queue.startsWith("reward_") && isUncertain(entry);
}

/**
 * Does `run` send this entry to the service? Not a reward report VyHub refused or already took (kept for the
 * operator), nor a reward the game refused.
 */
export const sends = (queue: QueueName, data: unknown) =>
  queue === "reward_failed" ? false : queue !== "reward_executed" || awaitsReport(data);

const isoOrNull = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());

/**
 * What `queue status` shows: every queue, even empty ones, so an operator sees what exists. With `limit`, only the
 * oldest `limit` entries of a sanction queue are read (the rest counted by name), so a backlog of 10,000 costs what
 * 20 do; the reward queues, which stay short, are read whole (whether a report still waits is in the entry).
 */
export async function queueStatus(store: Store, now: number, opts: { limit?: number } = {}): Promise<QueueSummary[]> {
  const { limit } = opts;
  return Promise.all(
    QUEUE_NAMES.map(async (queue) => {
      const q = anyQueue(store, queue);
      const whole = limit === undefined || queue.startsWith("reward_");
      const ids = whole ? [] : await q.ids();
      const entries = whole
        ? await q.list()
        : (await Promise.all(ids.slice(0, limit).map((id) => q.get(id)))).filter((e) => e !== undefined);
      const count = whole ? entries.length : ids.length;
      const shown = limit === undefined ? entries : entries.slice(0, limit);
      const age = (t: number) => Math.max(0, Math.round((now - t) / 1000));
      const oldest = whole ? entries[0]?.createdAt : ids[0] && idTime(ids[0]);
      return {
        queue,
        entries: count,
        waiting: whole ? entries.filter((e) => sends(queue, e.data)).length : count,
        oldest_age_s: oldest ? age(oldest) : null,
        more: count - shown.length,
        items: shown.map((e) => ({
          id: e.id,
          age_s: age(e.createdAt),
          attempts: e.attempts,
          last_error: e.lastError ?? null,
          last_attempt_at: isoOrNull(e.lastAttemptAt),
          first_attempt_at: isoOrNull(e.firstAttemptAt),
          uncertain: entryUncertain(queue, e),
          last_lookup:
            e.lastLookupAt === undefined
              ? null
              : { at: isoOrNull(e.lastLookupAt) as string, result: e.lastLookup ?? "" },
          data: e.data,
        })),
      };
    }),
  );
}

/** Shortest part of an id `queue retry`/`drop` accept: the random half of an id is unique long before that. */
export const MIN_ID_PART = 8;

export type FoundEntry =
  | { ok: true; queue: QueueName; entry: QueueEntry<unknown> }
  | { ok: false; reason: "none" | "ambiguous"; matches: { queue: QueueName; id: string }[] };

/**
 * The entry with this id, in whichever queue, or the only one whose id contains `idPart` (≥ MIN_ID_PART chars). A
 * whole id is read directly; a part is matched against the entries' names, and only the match is read.
 */
export async function findEntry(store: Store, idPart: string): Promise<FoundEntry> {
  const want = idPart.trim().toLowerCase();
  for (const queue of QUEUE_NAMES) {
    const entry = await anyQueue(store, queue).get(want);
    if (entry) return { ok: true, queue, entry };
  }
  const matches: { queue: QueueName; id: string }[] = [];
  if (want.length >= MIN_ID_PART)
    for (const queue of QUEUE_NAMES)
      for (const id of await anyQueue(store, queue).ids()) if (id.includes(want)) matches.push({ queue, id });
  if (matches.length === 1) {
    const { queue, id } = matches[0] as (typeof matches)[number];
    const entry = await anyQueue(store, queue).get(id);
    if (entry) return { ok: true, queue, entry };
    return { ok: false, reason: "none", matches: [] }; // unreadable (quarantined), or gone meanwhile
  }
  return { ok: false, reason: matches.length ? "ambiguous" : "none", matches };
}
