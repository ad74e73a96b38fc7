/**
 * One attempt of a request: the fetch call with its own timeout, the body read within its cap (body.ts), and what
 * the answer means — a result, and whether a GET may try again. A 429 closes its gate here (gates.ts); an answer is
 * parsed leniently and validated, its unreadable list items reported once. Apart from http.ts, which owns what spans
 * attempts: retries, backoff, waits at the gates, metrics.
 */
import * as v from "valibot";
import type { Clock } from "../clock.ts";
import type { Logger } from "../log.ts";
import { ACCEPT_ENCODING, ERROR_BODY_BYTES, FETCH_OPTIONS, readBody } from "./body.ts";
import { type ApiResult, parseErrorBody, truncate } from "./errors.ts";
import type { RateGates } from "./gates.ts";
import { collectSkipped } from "./lenient.ts";
import { describeNetworkError } from "./network.ts";
import { type RequestSpec, fail, ok } from "./request.ts";
import { parseRetryAfter } from "./retry-after.ts";

/** What every attempt of one transport shares; createTransport (http.ts) builds it once. */
export interface AttemptContext {
  clock: Clock;
  logger: Logger;
  timeoutMs: number;
  maxGateWaitMs: number;
  maxBytes: number;
  headers: Record<string, string>;
  gates: RateGates;
  /** Removes the API key from a text (errors.ts redact). */
  clean: (text: string) => string;
  /** Unreadable list items already reported: the same bad ban would otherwise be logged at every refresh. */
  reported: Set<string>;
}

/** The request headers every attempt sends, with the API key. */
export function baseHeaders(key: string, userAgent: string | undefined): Record<string, string> {
  return {
    authorization: `Bearer ${key}`,
    accept: "application/json",
    "accept-encoding": ACCEPT_ENCODING,
    "user-agent": userAgent ?? "hub-agent",
  };
}

export type Attempt<T> = { result: ApiResult<T>; retry: boolean };

/** What came back: the status line, the headers and the body as far as its cap allowed. */
interface Exchange {
  status: number;
  statusText: string;
  headers: Headers;
  text: string;
  tooLarge: boolean;
  refused: string | undefined;
}

export async function attemptOnce<T>(
  ctx: AttemptContext,
  spec: RequestSpec<T>,
  endpoint: string,
  url: string,
  scope: string,
): Promise<Attempt<T>> {
  const started = performance.now();
  const signal = AbortSignal.timeout(ctx.timeoutMs);
  let exchange: Exchange;
  try {
    exchange = await send(ctx, spec, url, signal);
  } catch (err) {
    const timeout = signal.aborted || isTimeout(err);
    // A short cause in our words ("connection refused: …", "the TLS certificate is self-signed"), never the
    // request options nor the runtime's developer hints.
    const why = timeout ? undefined : describeNetworkError(err);
    const message = why ? truncate(why.message, 200) : `no response within ${ctx.timeoutMs} ms`;
    log(ctx, spec, "ERR", started, message);
    const tls = why?.cause === "tls" ? { tls: true } : {};
    const unsent = why?.unsent ? { unsent: true } : {};
    // A certificate or a protocol mismatch will not mend itself within a retry's backoff.
    const result = fail<T>({ kind: "Network", endpoint, message: ctx.clean(message), timeout, ...tls, ...unsent });
    return { result, retry: !why || why.cause !== "tls" };
  }
  log(ctx, spec, exchange.status, started);
  return settle(ctx, spec, exchange, endpoint, scope);
}

/**
 * The fetch call and the body read; throws what the network or the read threw. Plain fetch, no wrapper: the
 * retries, the URL, the query, the timeout and the capped read are ours, and an error status is an answer
 * (docs/libraries.md says why ofetch went).
 */
async function send(
  ctx: AttemptContext,
  spec: RequestSpec<unknown>,
  url: string,
  signal: AbortSignal,
): Promise<Exchange> {
  const response = await fetch(url, {
    method: spec.method,
    headers:
      spec.body === undefined ? ctx.headers : { ...ctx.headers, "content-type": "application/json; charset=utf-8" },
    body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
    signal,
    // A write is never sent again by following a redirect (a 307 would repeat it, a 301 turn it into a GET whose
    // answer reads as a delivery): its 3xx is an answer, and the durable queues decide what comes next.
    redirect: spec.method === "GET" ? "follow" : "manual",
    ...FETCH_OPTIONS,
  });
  const { status, statusText, headers } = response;
  const answer = status >= 200 && status < 300;
  // An error's body only gives its message: read little of it.
  const body = await readBody(response.body ?? undefined, {
    maxBytes: answer ? ctx.maxBytes : Math.min(ctx.maxBytes, ERROR_BODY_BYTES),
    headers: response.headers,
    signal,
    keepHead: !answer,
  });
  return { status, statusText, headers, text: body.text, tooLarge: body.tooLarge, refused: body.refused };
}

/** What an answer means: the result, and whether the attempt may be tried again. */
function settle<T>(
  ctx: AttemptContext,
  spec: RequestSpec<T>,
  { status, statusText, headers, text, tooLarge, refused }: Exchange,
  endpoint: string,
  scope: string,
): Attempt<T> {
  if ((tooLarge || refused) && status >= 200 && status < 300) {
    return {
      result: fail({
        kind: "InvalidResponse",
        endpoint,
        field: "(body)",
        message: refused ?? `response larger than the ${ctx.maxBytes}-byte cap (api.max_response_bytes); not read`,
        status,
      }),
      retry: false,
    };
  }
  if (status >= 200 && status < 300) {
    if (!spec.schema) return { result: ok(status, undefined as T, headers), retry: false };
    return { result: validate(ctx, spec.schema, text, status, headers, endpoint), retry: false };
  }
  if (status === 429) {
    // A date is read against the answer's own Date (the service's clock): ours an hour behind (a VM resumed before
    // its clock was synced) would otherwise close the gate for the longest wait, an hour, instead of seconds.
    const served = Date.parse(headers.get("date") ?? "");
    const retryAfterMs = parseRetryAfter(headers.get("retry-after"), Number.isNaN(served) ? ctx.clock.now() : served);
    ctx.gates.close(scope, retryAfterMs);
    const { message } = parseErrorBody(text, statusText || "Too Many Requests");
    return {
      result: fail({ kind: "RateLimited", status: 429, endpoint, message: ctx.clean(message), retryAfterMs }),
      retry: retryAfterMs <= ctx.maxGateWaitMs,
    };
  }
  const { message: raw, code } = parseErrorBody(text, statusText);
  // A write's redirect (not followed, send()): where it points tells the operator what api.url should be.
  const location = status >= 300 && status < 400 ? headers.get("location") : null;
  const message = ctx.clean(location ? `${raw}, to ${location}` : raw);
  if (status === 404)
    return { result: fail({ kind: "NotFound", status, endpoint, message, ...opt(code) }), retry: false };
  if (status >= 400 && status < 500) {
    return { result: fail({ kind: "ClientError", status, endpoint, message, ...opt(code) }), retry: false };
  }
  return { result: fail({ kind: "ServerError", status, endpoint, message }), retry: status >= 500 };
}

function validate<T>(
  ctx: AttemptContext,
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
    if (ctx.reported.has(what)) continue;
    if (ctx.reported.size >= 1000) ctx.reported.clear(); // bounded; at worst a line is repeated
    ctx.reported.add(what);
    ctx.logger.warn(`skipped an unreadable item of a list answer, the rest is used: ${ctx.clean(truncate(what))}`, {
      endpoint,
      at: item.at,
      ...(item.id ? { id: item.id } : {}),
    });
  }
  // How many were left out goes with the result: a caller asking whether something exists cannot use the rest.
  if (parsed.success) return ok(status, parsed.output, responseHeaders, skipped.length);
  const issue = parsed.issues[0];
  const field = v.getDotPath(issue) ?? "(body)";
  const message = ctx.clean(truncate(`${field}: ${issue.message}`));
  return fail({ kind: "InvalidResponse", endpoint, field, message, status });
}

function log(ctx: AttemptContext, spec: RequestSpec<unknown>, status: number | "ERR", started: number, error?: string) {
  const ms = Math.round(performance.now() - started);
  // Path only: never the headers, the query or the base URL.
  ctx.logger.debug(`${spec.method} ${spec.path} ${status} ${ms}ms`, {
    method: spec.method,
    path: spec.path,
    status,
    ms,
    ...(error ? { error: ctx.clean(error) } : {}),
  });
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
