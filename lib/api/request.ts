/**
 * The names the transport's parts and the metrics registry (lib/monitor/metrics.ts) share: what an endpoint asks
 * (RequestSpec), how one attempt ended (RequestEvent, outcomeOf), and the two shapes of a result (ok, fail). Apart
 * from http.ts so one attempt (attempt.ts) and the metrics use them without the transport.
 */
import type * as v from "valibot";
import type { ApiError, ApiResult } from "./errors.ts";
import type { Query } from "./url.ts";

export type Method = "GET" | "POST" | "PATCH" | "DELETE";

/**
 * How one attempt ended, for metrics: "gate_closed" never left this process (the 429 gate was closed), "network" and
 * "timeout" got no answer, "key_refused" is a 401, "too_large" a 413, 414 or 431 (the request was larger than the
 * service or a proxy in front of it takes), "client_error" any other 4xx but 404.
 */
export type RequestOutcome =
  | "ok"
  | "not_found"
  | "client_error"
  | "too_large"
  | "key_refused"
  | "rate_limited"
  | "gate_closed"
  | "server_error"
  | "network"
  | "timeout"
  | "invalid";

export interface RequestEvent {
  method: Method;
  /** The endpoint with its ids as `{id}` (RequestSpec.route): one label per endpoint, not per player. */
  route: string;
  outcome: RequestOutcome;
  /** The operator's line for a failure (describeError). */
  error?: string;
  /** Whether this attempt's result is what the caller gets (false: a GET is tried again). */
  final: boolean;
  /** After a 429: how long its gate stays closed, in ms. */
  gateMs?: number;
}

export interface RequestSpec<T> {
  method: Method;
  /** Canonical path from docs/service-api.md §1.4, ids already encoded (see `seg` and `at`). */
  path: string;
  /** The path with its ids as `{id}`, for metrics (default: the path). */
  route?: string;
  query?: Query;
  body?: unknown;
  /** null: the contract types the response `any`, so the body is ignored. */
  schema: v.GenericSchema<unknown, T> | null;
}

/** Payload Too Large, URI Too Long, Request Header Fields Too Large. */
const TOO_LARGE: ReadonlySet<number> = new Set([413, 414, 431]);

export function outcomeOf(result: ApiResult<unknown>): RequestOutcome {
  if (result.ok) return "ok";
  const e = result.error;
  switch (e.kind) {
    case "NotFound":
      return "not_found";
    case "RateLimited":
      return "rate_limited";
    case "ClientError":
      if (e.status === 401) return "key_refused";
      return TOO_LARGE.has(e.status) ? "too_large" : "client_error";
    case "ServerError":
      return "server_error";
    case "Network":
      return e.timeout ? "timeout" : "network";
    case "InvalidResponse":
      return "invalid";
  }
}

export function ok<T>(status: number, value: T, headers: Headers, skipped = 0): ApiResult<T> {
  return { ok: true, status, value, headers, ...(skipped ? { skipped } : {}) };
}
export function fail<T>(error: ApiError): ApiResult<T> {
  return { ok: false, error };
}
