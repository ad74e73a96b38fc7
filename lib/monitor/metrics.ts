/**
 * The one place `run` counts what it did (docs/monitoring.md): requests by endpoint and outcome (fed by the HTTP
 * client's onRequest), the service's state as the last answers showed it, and every periodic job's runs (fed by
 * the scheduler as its JobObserver). `hub-agent status`, the status page and /metrics all read it through
 * lib/monitor/snapshot.ts; nothing re-derives these numbers.
 *
 * A job run fails when it throws, or when a request made inside it met a failure of the service (no answer, 5xx,
 * 429 or its closed gate, an unreadable answer, a refused key, a request too large for it): the features log such a
 * failure and carry on, so
 * the request is attributed to the run it was made in (AsyncLocalStorage follows the run's awaits). A 404 or another
 * refusal of one request (403, 422) is the service's answer about that item, not a failure of the job.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { RequestEvent, RequestOutcome } from "../api/request.ts";
import type { Clock } from "../clock.ts";
import type { JobObserver } from "../scheduler.ts";

const JOB_FAILS: ReadonlySet<RequestOutcome> = new Set([
  "network",
  "timeout",
  "server_error",
  "rate_limited",
  "gate_closed",
  "invalid",
  "key_refused",
  "too_large",
]);
/** No answer came from the service. */
const UNANSWERED: ReadonlySet<RequestOutcome> = new Set(["network", "timeout", "gate_closed"]);

export interface JobState {
  name: string;
  intervalMs?: number;
  runs: number;
  failures: number;
  running: number;
  lastRunAt?: number;
  lastSuccessAt?: number;
  lastErrorAt?: number;
  lastError?: string;
}

export interface ServiceState {
  /** null before the first request. */
  reachable: boolean | null;
  /** false after a 401 until an answer that needed the key; null before either. */
  keyAccepted: boolean | null;
  lastAnswerAt?: number;
  lastError?: { at: number; message: string };
  last429At?: number;
  /** Monotonic time until which the 429 gate is closed. */
  gateUntil: number;
}

export interface RequestCount {
  method: string;
  route: string;
  outcome: RequestOutcome;
  count: number;
}

interface RunScope {
  error?: string;
  open: boolean;
}

/** By code unit: routes and names are ASCII, and localeCompare would load the engine's collation data (~2 MB). */
const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export class Metrics implements JobObserver {
  readonly jobs = new Map<string, JobState>();
  readonly service: ServiceState = { reachable: null, keyAccepted: null, gateUntil: -Infinity };
  private counts = new Map<string, RequestCount>();
  private scope = new AsyncLocalStorage<RunScope>();

  constructor(private clock: Clock) {}

  /** The HTTP client's onRequest: one call per attempt. */
  readonly request = (e: RequestEvent): void => {
    const key = `${e.method} ${e.route} ${e.outcome}`;
    const c = this.counts.get(key) ?? { method: e.method, route: e.route, outcome: e.outcome, count: 0 };
    c.count++;
    this.counts.set(key, c);

    const now = this.clock.now();
    const s = this.service;
    if (e.outcome !== "gate_closed") s.reachable = !UNANSWERED.has(e.outcome);
    if (!UNANSWERED.has(e.outcome)) s.lastAnswerAt = now;
    if (e.outcome === "key_refused") s.keyAccepted = false;
    // Only an answer the key was checked for tells that it is accepted: not a 429 nor a 5xx.
    else if (
      e.outcome === "ok" ||
      e.outcome === "not_found" ||
      e.outcome === "client_error" ||
      e.outcome === "too_large"
    )
      s.keyAccepted = true;
    if (e.outcome === "rate_limited") {
      s.last429At = now;
      s.gateUntil = Math.max(s.gateUntil, this.clock.monotonic() + (e.gateMs ?? 0));
    }
    if (e.error && JOB_FAILS.has(e.outcome)) s.lastError = { at: now, message: e.error };

    const run = this.scope.getStore();
    if (run?.open && e.final && e.error && JOB_FAILS.has(e.outcome)) run.error ??= e.error;
  };

  /** Requests so far, by method, route and outcome. */
  requests(): RequestCount[] {
    return [...this.counts.values()].sort(
      (a, b) => compare(a.route, b.route) || compare(a.method, b.method) || compare(a.outcome, b.outcome),
    );
  }

  /** Milliseconds until the 429 gate opens, 0 when it is open. */
  gateMs(): number {
    return Math.max(0, this.service.gateUntil - this.clock.monotonic());
  }

  schedule(name: string, intervalMs: number): void {
    this.job(name).intervalMs = intervalMs;
  }

  async track<R>(name: string, run: () => Promise<R>): Promise<R> {
    const job = this.job(name);
    const scope: RunScope = { open: true };
    job.running++;
    job.lastRunAt = this.clock.now();
    let thrown: unknown;
    try {
      return await this.scope.run(scope, run);
    } catch (e) {
      thrown = e;
      throw e;
    } finally {
      scope.open = false;
      job.running--;
      job.runs++;
      const error = thrown === undefined ? scope.error : ((thrown as Error)?.message ?? String(thrown));
      if (error === undefined) job.lastSuccessAt = this.clock.now();
      else {
        job.failures++;
        job.lastErrorAt = this.clock.now();
        job.lastError = error;
      }
    }
  }

  private job(name: string): JobState {
    let job = this.jobs.get(name);
    if (!job) this.jobs.set(name, (job = { name, runs: 0, failures: 0, running: 0 }));
    return job;
  }
}
