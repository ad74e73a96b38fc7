import * as v from "valibot";
import { awaitsReport } from "./rewards/executed-entry.ts";
import { type QueueEntry, type Store, isUncertain } from "./store/index.ts";

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
  items: QueueItem[];
}

const anyQueue = (store: Store, queue: QueueName) => store.queue(queue, v.unknown());

/**
 * Does `run` send this entry to the service? Not a reward report VyHub refused or already took (kept for the
 * operator), nor a reward the game refused.
 */
/** Whether a request of this entry may have reached the service (a sanction's lost answer); rewards never are. */
export function entryUncertain(queue: QueueName, entry: { attempts: number; uncertain?: boolean }): boolean {
  return !queue.startsWith("reward_") && isUncertain(entry);
}

const sends = (queue: QueueName, data: unknown) =>
  queue === "reward_failed" ? false : queue !== "reward_executed" || awaitsReport(data);

const isoOrNull = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());

/** What `queue status` shows: every queue, even empty ones, so an operator sees what exists. */
export async function queueStatus(store: Store, now: number): Promise<QueueSummary[]> {
  return Promise.all(
    QUEUE_NAMES.map(async (queue) => {
      const entries = await anyQueue(store, queue).list();
      const age = (t: number) => Math.max(0, Math.round((now - t) / 1000));
      return {
        queue,
        entries: entries.length,
        waiting: entries.filter((e) => sends(queue, e.data)).length,
        oldest_age_s: entries[0] ? age(entries[0].createdAt) : null,
        items: entries.map((e) => ({
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

/** The entry with this id, in whichever queue, or the only one whose id contains `idPart` (≥ MIN_ID_PART chars). */
export async function findEntry(store: Store, idPart: string): Promise<FoundEntry> {
  const want = idPart.trim().toLowerCase();
  const matches: { queue: QueueName; entry: QueueEntry<unknown> }[] = [];
  for (const queue of QUEUE_NAMES) {
    for (const entry of await anyQueue(store, queue).list()) {
      if (entry.id === want) return { ok: true, queue, entry };
      if (want.length >= MIN_ID_PART && entry.id.includes(want)) matches.push({ queue, entry });
    }
  }
  if (matches.length === 1) return { ok: true, ...(matches[0] as (typeof matches)[number]) };
  return {
    ok: false,
    reason: matches.length ? "ambiguous" : "none",
    matches: matches.map((m) => ({ queue: m.queue, id: m.entry.id })),
  };
}
