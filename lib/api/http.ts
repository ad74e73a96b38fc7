/**
 * The transport under every endpoint: URL building, one ofetch call per attempt with its own timeout,
 * our own retries (ofetch's `timeout` + `retry` reuse an aborted signal in 1.5.1), the 429 gates (docs/service-api.md
 * §1.5: the endpoint that was refused waits; a second endpoint refused meanwhile makes every request wait),
 * a cap on the body size and on the bodies in memory at once (body.ts), lenient body parsing and valibot validation.
 */
import { ofetch } from "ofetch";
import * as v from "valibot";
import { type Clock, systemClock } from "../clock.ts";
import { type Logger, silentLogger } from "../log.ts";
import {
  type ApiError,
  type ApiResult,
  DEFAULT_MAX_RESPONSE_BYTES,
  describeError,
  parseErrorBody,
  redact,
  truncate,
} from "./errors.ts";
import { ACCEPT_ENCODING, ERROR_BODY_BYTES, FETCH_OPTIONS, readBody } from "./body.ts";
import { collectSkipped } from "./lenient.ts";
import { describeNetworkError } from "./network.ts";

export type Method = "GET" | "POST" | "PATCH" | "DELETE";
export type QueryValue = string | number | boolean | null | undefined | readonly (string | number | boolean)[];
export type Query = Record<string, QueryValue>;

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

export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_RETRIES = 2;
export const DEFAULT_RETRY_AFTER_MS = 60_000;
/** A broken or hostile Retry-After must not silence the agent for days. */
export const MAX_RETRY_AFTER_MS = 3_600_000;

/** Joins by string: strip trailing slashes from the base, then append the canonical path. */
export function joinUrl(base: string, path: string): string {
  return base.replace(/\/+$/, "") + (path.startsWith("/") ? path : `/${path}`);
}

/** Encodes one path segment (identifiers are user-controlled strings). */
export function seg(id: string): string {
  return encodeURIComponent(id);
}

/**
 * A path with each interpolated id encoded (`seg`), and its route with each id as `{id}`:
 * at`/server/${id}` → { path: "/server/541d…", route: "/server/{id}" }.
 */
export function at(strings: TemplateStringsArray, ...ids: string[]): { path: string; route: string } {
  return {
    path: strings.reduce((out, s, i) => out + s + (i < ids.length ? seg(ids[i] as string) : ""), ""),
    route: strings.join("{id}"),
  };
}

/** Arrays become repeated keys, booleans "true"/"false"; null and undefined are left out. */
export function buildQuery(query: Query | undefined): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value === null || value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) params.append(key, String(item));
  }
  const s = params.toString();
  return s ? `?${s}` : "";
}

/**
 * Retry-After as delay-seconds or an HTTP date; absent, unreadable, negative or a date already past → the default
 * (a past date is a skewed clock, not permission to hammer the service). `now` is wall-clock time.
 */
export function parseRetryAfter(header: string | null, now: number, fallbackMs = DEFAULT_RETRY_AFTER_MS): number {
  const raw = header?.trim();
  if (!raw) return fallbackMs;
  let ms: number;
  if (/^\d+(\.\d+)?$/.test(raw)) ms = Number(raw) * 1000;
  else {
    // Date.parse reads "-5" as a year: a number that is not delay-seconds is unreadable, never a date.
    const at = /^[+-]?[\d.]+$/.test(raw) ? NaN : Date.parse(raw);
    if (Number.isNaN(at) || at <= now) return fallbackMs;
    ms = at - now;
  }
  return Math.min(Math.ceil(ms), MAX_RETRY_AFTER_MS);
}

export interface Transport {
  request<T>(spec: RequestSpec<T>): Promise<ApiResult<T>>;
}

type Attempt<T> = { result: ApiResult<T>; retry: boolean };

export function createTransport(opts: ApiOptions): Transport {
  const clock = opts.clock ?? systemClock;
  const logger = opts.logger ?? silentLogger;
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const retries = Math.max(0, opts.retries ?? DEFAULT_RETRIES);
  const backoffMs = opts.backoffMs ?? 500;
  const maxGateWaitMs = opts.maxGateWaitMs ?? 5_000;
  const maxBytes = opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const headers: Record<string, string> = {
    authorization: `Bearer ${opts.key}`,
    accept: "application/json",
    "accept-encoding": ACCEPT_ENCODING,
    "user-agent": opts.userAgent ?? "hub-agent",
  };
  /**
   * Monotonic times before which no request may reach the service (a wall clock set back must not stretch a wait):
   * per endpoint (`METHOD route`), set by its own 429, and for all of them, set by a 429 that came while another
   * endpoint's gate was closed. VyHub does not say whether a limit is per endpoint or per key: the first 429 pauses
   * what was refused; a second endpoint refused within that time shows the limit is the key's.
   */
  const gates = new Map<string, number>();
  let allUntil = -Infinity;
  const gateOf = (scope: string) => Math.max(allUntil, gates.get(scope) ?? -Infinity);
  function closeGate(scope: string, ms: number) {
    const now = clock.monotonic();
    const keyWide = [...gates].some(([other, until]) => other !== scope && until > now);
    gates.set(scope, Math.max(gates.get(scope) ?? -Infinity, now + ms));
    if (keyWide) allUntil = Math.max(allUntil, now + ms);
  }

  const clean = (text: string) => redact(text, opts.key);
  /** Unreadable list items already reported: the same bad ban would otherwise be logged at every refresh. */
  const reported = new Set<string>();

  async function request<T>(spec: RequestSpec<T>): Promise<ApiResult<T>> {
    const endpoint = `${spec.method} ${spec.path}`;
    const url = joinUrl(opts.url, spec.path) + buildQuery(spec.query);
    const maxAttempts = spec.method === "GET" ? retries + 1 : 1;
    const route = spec.route ?? spec.path;
    const scope = `${spec.method} ${route}`;
    for (let attempt = 1; ; attempt++) {
      const wait = gateOf(scope) - clock.monotonic();
      if (wait > 0) {
        if (spec.method !== "GET" || wait > maxGateWaitMs) {
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
      const { result, retry } = await attemptOnce(spec, endpoint, url, scope);
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

  async function attemptOnce<T>(
    spec: RequestSpec<T>,
    endpoint: string,
    url: string,
    scope: string,
  ): Promise<Attempt<T>> {
    const started = performance.now();
    const signal = AbortSignal.timeout(timeoutMs);
    let status = 0;
    let text = "";
    let responseHeaders: Headers;
    let statusText = "";
    let tooLarge = false;
    let refused: string | undefined;
    try {
      const response = await ofetch.raw<ReadableStream<Uint8Array> | undefined, "stream">(url, {
        method: spec.method,
        headers: spec.body === undefined ? headers : { ...headers, "content-type": "application/json; charset=utf-8" },
        body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
        responseType: "stream",
        retry: 0,
        ignoreResponseError: true,
        signal,
        ...FETCH_OPTIONS,
      });
      status = response.status;
      statusText = response.statusText;
      responseHeaders = response.headers;
      const answer = status >= 200 && status < 300;
      // An error's body only gives its message: read little of it.
      const body = await readBody(response._data ?? undefined, {
        maxBytes: answer ? maxBytes : Math.min(maxBytes, ERROR_BODY_BYTES),
        headers: response.headers,
        signal,
        keepHead: !answer,
      });
      text = body.text;
      tooLarge = body.tooLarge;
      refused = body.refused;
    } catch (err) {
      const timeout = signal.aborted || isTimeout(err);
      // A short cause in our words ("connection refused: …", "the TLS certificate is self-signed"), never the
      // request options nor the runtime's developer hints.
      const why = timeout ? undefined : describeNetworkError(err);
      const message = why ? truncate(why.message, 200) : `no response within ${timeoutMs} ms`;
      log(spec, "ERR", started, message);
      const tls = why?.cause === "tls" ? { tls: true } : {};
      // A certificate or a protocol mismatch will not mend itself within a retry's backoff.
      const result = fail<T>({ kind: "Network", endpoint, message: clean(message), timeout, ...tls });
      return { result, retry: !why || why.cause !== "tls" };
    }
    log(spec, status, started);

    if ((tooLarge || refused) && status >= 200 && status < 300) {
      return {
        result: fail({
          kind: "InvalidResponse",
          endpoint,
          field: "(body)",
          message: refused ?? `response larger than the ${maxBytes}-byte cap (api.max_response_bytes); not read`,
          status,
        }),
        retry: false,
      };
    }
    if (status >= 200 && status < 300) {
      if (!spec.schema) return { result: ok(status, undefined as T, responseHeaders), retry: false };
      return { result: validate(spec.schema, text, status, responseHeaders, endpoint), retry: false };
    }
    if (status === 429) {
      const retryAfterMs = parseRetryAfter(responseHeaders.get("retry-after"), clock.now());
      closeGate(scope, retryAfterMs);
      const { message } = parseErrorBody(text, statusText || "Too Many Requests");
      return {
        result: fail({ kind: "RateLimited", status: 429, endpoint, message: clean(message), retryAfterMs }),
        retry: retryAfterMs <= maxGateWaitMs,
      };
    }
    const { message: raw, code } = parseErrorBody(text, statusText);
    const message = clean(raw);
    if (status === 404)
      return { result: fail({ kind: "NotFound", status, endpoint, message, ...opt(code) }), retry: false };
    if (status >= 400 && status < 500) {
      return { result: fail({ kind: "ClientError", status, endpoint, message, ...opt(code) }), retry: false };
    }
    return { result: fail({ kind: "ServerError", status, endpoint, message }), retry: status >= 500 };
  }

  function validate<T>(
    schema: v.GenericSchema<unknown, T>,
    text: string,
    status: number,
    responseHeaders: Headers,
    endpoint: string,
  ): ApiResult<T> {
    let body: unknown;
    try {
      body = text.trim() === "" ? null : JSON.parse(text);
    } catch {
      const what = /<html/i.test(text) ? "HTML page" : "invalid JSON";
      return fail({
        kind: "InvalidResponse",
        endpoint,
        field: "(body)",
        message: `${what} in a ${status} response`,
        status,
      });
    }
    const { result: parsed, skipped } = collectSkipped(() => v.safeParse(schema, body));
    for (const item of skipped) {
      const what = `${endpoint} ${item.at}${item.id ? ` (id ${item.id})` : ""}: ${item.problem}`;
      if (reported.has(what)) continue;
      if (reported.size >= 1000) reported.clear(); // bounded; at worst a line is repeated
      reported.add(what);
      logger.warn(`skipped an unreadable item of a list answer, the rest is used: ${clean(truncate(what))}`, {
        endpoint,
        at: item.at,
        ...(item.id ? { id: item.id } : {}),
      });
    }
    if (parsed.success) return ok(status, parsed.output, responseHeaders);
    const issue = parsed.issues[0];
    const field = v.getDotPath(issue) ?? "(body)";
    const message = clean(truncate(`${field}: ${issue.message}`));
    return fail({ kind: "InvalidResponse", endpoint, field, message, status });
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
    const gateMs = outcome === "rate_limited" ? Math.max(0, gateOf(scope) - clock.monotonic()) : undefined;
    opts.onRequest({ method, route, outcome, final, ...(error ? { error } : {}), ...(gateMs ? { gateMs } : {}) });
  }

  function log(spec: RequestSpec<unknown>, status: number | "ERR", started: number, error?: string) {
    const ms = Math.round(performance.now() - started);
    // Path only: never the headers, the query or the base URL.
    logger.debug(`${spec.method} ${spec.path} ${status} ${ms}ms`, {
      method: spec.method,
      path: spec.path,
      status,
      ms,
      ...(error ? { error: clean(error) } : {}),
    });
  }

  return { request };
}

/** Payload Too Large, URI Too Long, Request Header Fields Too Large. */
const TOO_LARGE: ReadonlySet<number> = new Set([413, 414, 431]);

function outcomeOf(result: ApiResult<unknown>): RequestOutcome {
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

function ok<T>(status: number, value: T, headers: Headers): ApiResult<T> {
  return { ok: true, status, value, headers };
}
function fail<T>(error: ApiError): ApiResult<T> {
  return { ok: false, error };
}
function opt(code: string | undefined): { code?: string } {
  return code ? { code } : {};
}

function isTimeout(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const name = (e as { name?: unknown }).name;
    if (name === "TimeoutError") return true;
  }
  return false;
}
