/**
 * The transport under every endpoint: one request's attempts — our own retries with backoff (GETs only; a retry
 * waits at the 429 gates: gates.ts, docs/service-api.md §1.5: the endpoint that was refused waits; a second
 * endpoint refused meanwhile makes every request wait), and what each attempt tells the metrics. One attempt — the
 * fetch call with its own timeout, a cap on the body size and on the bodies in memory at once (body.ts), lenient
 * body parsing and valibot validation — is attempt.ts; the URL is url.ts.
 */
import { type Clock, systemClock } from "../clock.ts";
import { type Logger, silentLogger } from "../log.ts";
import { type AttemptContext, attemptOnce, baseHeaders } from "./attempt.ts";
import { type ApiResult, DEFAULT_MAX_RESPONSE_BYTES, describeError, redact } from "./errors.ts";
import { createGates } from "./gates.ts";
import { type Method, type RequestEvent, type RequestSpec, fail, outcomeOf } from "./request.ts";
import { buildQuery, joinUrl } from "./url.ts";

export interface ApiOptions {
  /** Base URL including its path, e.g. https://api.vyhub.app/<instance>/v1. */
  url: string;
  /** Sent as `Authorization: Bearer <key>`; never logged, never in an error. */
  key: string;
  /** Per attempt (default 10 000). */
  timeoutMs?: number;
  /** GET retries of network errors and 5xx (default 2). Writes are never retried: the durable queues own that. */
  retries?: number;
  clock?: Clock;
  logger?: Logger;
  userAgent?: string;
  /** Base of the exponential GET backoff (default 500 ms; doubled per attempt, capped at 8 s, with jitter). */
  backoffMs?: number;
  /** While a 429 gate is closed, a GET waits through it when at most this long remains (default 5 s). */
  maxGateWaitMs?: number;
  /** Largest response body read (default DEFAULT_MAX_RESPONSE_BYTES); a longer one is an InvalidResponse. */
  maxResponseBytes?: number;
  /** Told of every attempt's outcome (the metrics registry of `run`, lib/monitor/metrics.ts); must not throw. */
  onRequest?: (e: RequestEvent) => void;
}

export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_RETRIES = 2;

export interface Transport {
  request<T>(spec: RequestSpec<T>): Promise<ApiResult<T>>;
  /** How long (ms) the service's 429s hold some request back still: 0 when every gate is open. */
  closedForMs(): number;
  /** The service answered none of the attempts since `since`: `error` is the latest; undefined otherwise. */
  unreachable(): Unreachable | undefined;
}

/** Times are the clock's monotonic(): "how long ago" must not follow a wall clock set back or forward. */
export interface Unreachable {
  since: number;
  /** When the latest attempt found none: with no request since, what is known may be old. */
  last: number;
  error: string;
}

export function createTransport(opts: ApiOptions): Transport {
  const clock = opts.clock ?? systemClock;
  const retries = Math.max(0, opts.retries ?? DEFAULT_RETRIES);
  const backoffMs = opts.backoffMs ?? 500;
  const ctx: AttemptContext = {
    clock,
    logger: opts.logger ?? silentLogger,
    timeoutMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    maxGateWaitMs: opts.maxGateWaitMs ?? 5_000,
    maxBytes: opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
    headers: baseHeaders(opts.key, opts.userAgent),
    gates: createGates(clock),
    clean: (text) => redact(text, opts.key),
    reported: new Set(),
  };

  async function request<T>(spec: RequestSpec<T>): Promise<ApiResult<T>> {
    const endpoint = `${spec.method} ${spec.path}`;
    const url = joinUrl(opts.url, spec.path) + buildQuery(spec.query);
    const maxAttempts = spec.method === "GET" ? retries + 1 : 1;
    const route = spec.route ?? spec.path;
    const scope = `${spec.method} ${route}`;
    for (let attempt = 1; ; attempt++) {
      const wait = ctx.gates.until(scope) - clock.monotonic();
      if (wait > 0) {
        if (spec.method !== "GET" || wait > ctx.maxGateWaitMs) {
          const closed = fail<T>({
            kind: "RateLimited",
            status: 429,
            endpoint,
            message: "rate limit gate closed",
            retryAfterMs: wait,
          });
          observe(spec.method, route, scope, closed, true, "gate_closed");
          return closed;
        }
        await clock.sleep(wait);
      }
      const startedAt = clock.monotonic();
      const { result, retry } = await attemptOnce(ctx, spec, endpoint, url, scope);
      heard(result, startedAt);
      const final = !retry || attempt >= maxAttempts;
      observe(spec.method, route, scope, result, final);
      if (final) return result;
      // A 429 already set the gate; the next loop waits through it (or gives up if it is long).
      if (result.ok || result.error.kind !== "RateLimited") {
        const base = Math.min(backoffMs * 2 ** (attempt - 1), 8_000);
        await clock.sleep(base / 2 + Math.random() * (base / 2));
      }
    }
  }

  // Whether the service answers at all, as the latest attempt to start found it (one sent earlier may end later).
  let down: Unreachable | undefined;
  let heardFrom = -Infinity;
  function heard(result: ApiResult<unknown>, startedAt: number) {
    if (startedAt < heardFrom) return;
    heardFrom = startedAt;
    if (result.ok || result.error.kind !== "Network") down = undefined;
    else {
      const now = clock.monotonic();
      down = { since: down?.since ?? now, last: now, error: describeError(result.error) };
    }
  }

  function observe(
    method: Method,
    route: string,
    scope: string,
    result: ApiResult<unknown>,
    final: boolean,
    outcome = outcomeOf(result),
  ) {
    if (!opts.onRequest) return;
    const error = result.ok ? undefined : describeError(result.error);
    const gateMs = outcome === "rate_limited" ? Math.max(0, ctx.gates.until(scope) - clock.monotonic()) : undefined;
    opts.onRequest({ method, route, outcome, final, ...(error ? { error } : {}), ...(gateMs ? { gateMs } : {}) });
  }

  return { request, closedForMs: () => Math.max(0, ctx.gates.latest() - clock.monotonic()), unreachable: () => down };
}
