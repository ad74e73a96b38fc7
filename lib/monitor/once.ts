/**
 * What `run --once --json` prints: one object saying what each job of the round did, what the round delivered and
 * what is left in each queue, and how the service answered. The exit code is added by the command (cli/).
 */
import type { QueueSummary } from "../queues.ts";
import type { Metrics } from "./metrics.ts";

export interface OnceSummary {
  /** Where the server record came from: the service, the cache, or nowhere (nothing could run). */
  server_record: "api" | "cache" | null;
  /** Each job of the round in order: whether it ran (a stop can come first), without a failure, or its error. */
  jobs: { name: string; ran: boolean; ok: boolean; error: string | null }[];
  /** The jobs that ran and failed, in order: what makes the round `failed` or `unreachable` (a non-zero exit). */
  failed_jobs: string[];
  /** Per queue: entries before the round, delivered or settled during it, left after it (waiting to be sent). */
  queues: { queue: string; before: number; delivered: number; left: number; waiting: number }[];
  service: { reachable: boolean | null; key_accepted: boolean | null; last_error: string | null };
}

export function onceSummary(o: {
  source: "api" | "cache" | undefined;
  metrics: Metrics;
  /** Jobs in the order they ran. */
  jobNames: string[];
  before: QueueSummary[];
  after: QueueSummary[];
}): OnceSummary {
  const { metrics } = o;
  const jobs = o.jobNames.map((name) => {
    const j = metrics.jobs.get(name);
    const ran = !!j && j.runs > 0;
    const failed = ran && (j?.failures ?? 0) > 0;
    return { name, ran, ok: ran && !failed, error: failed ? (j?.lastError ?? null) : null };
  });
  const queues = o.after.map((q) => {
    const before = o.before.find((b) => b.queue === q.queue)?.entries ?? 0;
    return {
      queue: q.queue,
      before,
      delivered: Math.max(0, before - q.entries),
      left: q.entries,
      waiting: q.waiting,
    };
  });
  const s = metrics.service;
  return {
    server_record: o.source ?? null,
    jobs,
    failed_jobs: jobs.filter((j) => j.ran && !j.ok).map((j) => j.name),
    queues,
    service: { reachable: s.reachable, key_accepted: s.keyAccepted, last_error: s.lastError?.message ?? null },
  };
}
