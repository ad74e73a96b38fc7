import * as v from "valibot";
import type { Store } from "./store/index.ts";

/** The durable queues `run` drains and one-shot commands fill (client-interface.md rules 10, 11, 12, 14). */
export const QUEUE_NAMES = ["ban", "unban", "warning", "reward_executed"] as const;
export type QueueName = (typeof QUEUE_NAMES)[number];

export interface QueueSummary {
  queue: QueueName;
  entries: number;
  /** Age of the oldest entry in seconds, null when empty. */
  oldest_age_s: number | null;
  items: { id: string; age_s: number; attempts: number; last_error: string | null }[];
}

/** What `queue status` shows: every queue, even empty ones, so an operator sees what exists. */
export async function queueStatus(store: Store, now: number): Promise<QueueSummary[]> {
  return Promise.all(
    QUEUE_NAMES.map(async (queue) => {
      const entries = await store.queue(queue, v.unknown()).list();
      const age = (t: number) => Math.max(0, Math.round((now - t) / 1000));
      return {
        queue,
        entries: entries.length,
        oldest_age_s: entries[0] ? age(entries[0].createdAt) : null,
        items: entries.map((e) => ({
          id: e.id,
          age_s: age(e.createdAt),
          attempts: e.attempts,
          last_error: e.lastError ?? null,
        })),
      };
    }),
  );
}
