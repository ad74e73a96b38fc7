/** The client's error values and their rendering for operators (docs/service-api.md §1.5–1.6). */
import { isRecord } from "../is-record.ts";

export type ApiError =
  | { kind: "NotFound"; status: 404; endpoint: string; message: string; code?: string }
  | { kind: "RateLimited"; status: 429; endpoint: string; message: string; retryAfterMs: number }
  /** Other 4xx, including 401, 403 and 422. */
  | { kind: "ClientError"; status: number; endpoint: string; message: string; code?: string }
  /** 5xx and any other non-2xx. */
  | { kind: "ServerError"; status: number; endpoint: string; message: string }
  /** Refused, DNS, reset, the per-attempt timeout, or TLS (`tls`: the certificate or the handshake). */
  | { kind: "Network"; endpoint: string; message: string; timeout: boolean; tls?: boolean }
  /** A 2xx whose body is not JSON, or does not match the schema at `field`. */
  /** `status` is the HTTP status the unreadable body came with. */
  | { kind: "InvalidResponse"; endpoint: string; field: string; message: string; status?: number };

export type ApiResult<T> =
  /** `skipped`: how many unreadable list items were left out of `value` (lenient.ts); absent when none. */
  { ok: true; status: number; value: T; headers: Headers; skipped?: number } | { ok: false; error: ApiError };

/**
 * Default cap on a response body (api.max_response_bytes): 16 MiB holds a ban list of some 20,000 active bans; a
 * broken proxy's endless answer must not exhaust memory. Here (no imports) so the config schema can name it.
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

/** Longest message we keep from a response body; gateways can send whole pages. */
export const MAX_MESSAGE_LENGTH = 300;

export function truncate(text: string, max = MAX_MESSAGE_LENGTH): string {
  const oneLine = text.replace(/\s+/g, " ").trim();
  return oneLine.length > max ? `${oneLine.slice(0, max - 1)}…` : oneLine;
}

/**
 * Reads an error body leniently: `detail` may be a validation array, an application error object
 * `{code, msg, detail}`, or a string. HTML (gateway error pages) is never echoed.
 */
export function parseErrorBody(text: string, statusText = ""): { message: string; code?: string } {
  if (/<html|<!doctype html/i.test(text)) return { message: "HTML error page" };
  const trimmed = text.trim();
  if (!trimmed) return { message: statusText || "empty body" };
  let body: unknown;
  try {
    body = JSON.parse(trimmed);
  } catch {
    return { message: truncate(trimmed) };
  }
  const detail = isRecord(body) && "detail" in body ? body.detail : body;
  if (typeof detail === "string") return { message: truncate(detail) };
  if (Array.isArray(detail)) return { message: truncate(detail.map(renderValidationError).join("; ")) };
  if (isRecord(detail)) {
    const code = typeof detail.code === "string" ? detail.code : undefined;
    const msg = typeof detail.msg === "string" ? detail.msg : typeof detail.message === "string" ? detail.message : "";
    return { message: truncate(msg || code || JSON.stringify(detail)), ...(code ? { code } : {}) };
  }
  return { message: truncate(trimmed) };
}

function renderValidationError(e: unknown): string {
  if (!isRecord(e)) return String(e);
  const loc = Array.isArray(e.loc) ? e.loc.join(".") : "";
  const msg = typeof e.msg === "string" ? e.msg : "invalid";
  return loc ? `${loc}: ${msg}` : msg;
}

/** One line for operators, e.g. `POST /ban/: 422 body.user_id: field required`. */
export function describeError(e: ApiError): string {
  switch (e.kind) {
    case "NotFound":
    case "ClientError":
      return `${e.endpoint}: ${e.status} ${e.message}${e.code && !e.message.includes(e.code) ? ` (${e.code})` : ""}`;
    case "ServerError":
      return `${e.endpoint}: ${e.status} ${e.message}`;
    case "RateLimited":
      return `${e.endpoint}: 429 rate limited, retry in ${Math.ceil(e.retryAfterMs / 1000)} s`;
    case "Network":
      return `${e.endpoint}: ${e.timeout ? "timed out" : e.tls ? "TLS error" : "network error"}: ${e.message}`;
    case "InvalidResponse":
      return `${e.endpoint}: invalid response at ${e.field}: ${e.message}`;
  }
}

/** Replaces every occurrence of `secret` so a key can never leak through a message. */
export function redact(text: string, secret: string): string {
  return secret ? text.split(secret).join("***") : text;
}

/**
 * The service understood the request and refused it (4xx): retrying cannot help, so the durable queues drop the
 * item (docs/service-api.md §1.5). Not a refusal of the item: 429 (rate limit), 401 (the key was rotated or
 * mistyped: every queued item would be dropped at once) and 408 (a timeout); network errors, 5xx and invalid
 * responses are transient too.
 */
export function isRejected(e: ApiError): boolean {
  return e.kind === "NotFound" || (e.kind === "ClientError" && e.status !== 401 && e.status !== 408);
}

/**
 * A write the service took (2xx) whose answer we could not read (an empty body, a changed model, a proxy page).
 * It was delivered: sending it again would create a second ban or warning (docs/pitfalls.md, pitfall 14).
 */
export function isAcceptedWrite(e: ApiError): boolean {
  return e.kind === "InvalidResponse" && e.status !== undefined && e.status >= 200 && e.status < 300;
}
