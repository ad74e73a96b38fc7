/**
 * When the service refuses the agent itself rather than one request: the API key (401 anywhere; 403 on the server's
 * own record, which any valid server key may read), the server id (the service's own 404 on that record: its error
 * body carries a code, `not_found`), or api.url's path (any other 404 there, such as routing's `{"detail": "Not
 * Found"}` or a gateway's page: nothing serves the API at that path). Nothing the queues or the jobs do can fix it, so it is named once with its fix, and while the key stays refused the service is asked again
 * with exponential backoff instead of by every job at every interval (docs/service-api.md §1.5).
 */
import type { Clock } from "../clock.ts";
import type { Api } from "./client.ts";
import { describeError, type ApiError, type ApiResult } from "./errors.ts";

/** The longest pause between two attempts while the service refuses the key or the server id. */
export const CREDENTIAL_BACKOFF_MAX_MS = 30 * 60_000;

export interface CredentialProblem {
  kind: "key_refused" | "unknown_server" | "wrong_path";
  error: ApiError;
}

/** The server's own record: GET (rule 1) and PATCH (the status heartbeat) of /server/<id>. */
const SERVER_RECORD = /^(GET|PATCH) \/server\/[^/]+$/;
const SERVER_RECORD_CALLS = new Set(["getServer", "patchServer"]);

export function credentialProblem(e: ApiError): CredentialProblem | undefined {
  if (e.kind === "ClientError" && e.status === 401) return { kind: "key_refused", error: e };
  if (!SERVER_RECORD.test(e.endpoint)) return undefined;
  if (e.kind === "ClientError" && e.status === 403) return { kind: "key_refused", error: e };
  if (e.kind === "NotFound") return { kind: e.code ? "unknown_server" : "wrong_path", error: e };
  return undefined;
}

export const CREDENTIAL_FIX: Record<CredentialProblem["kind"], string> = {
  key_refused:
    "put the server's current API key (the service's server settings) in api.key / HUB_API_KEY, or in the file of api.key_file",
  unknown_server: "copy the server id again from the service's server settings into api.server_id / HUB_API_SERVER_ID",
  wrong_path:
    "check the path of api.url / HUB_API_URL: https://api.vyhub.app/<instance>/v1 with your instance's name (`curl <api.url>/openapi.json` answers once it is right)",
};

/** One line: what the service refused, its answer, and the fix. */
export function describeCredentialProblem(p: CredentialProblem, serverId: string): string {
  const answer = describeError(p.error);
  const fix = CREDENTIAL_FIX[p.kind];
  switch (p.kind) {
    case "key_refused":
      return `API key refused by the service (${answer}): ${fix}`;
    case "unknown_server":
      return `the service knows no server ${serverId} (${answer}): ${fix}`;
    case "wrong_path":
      return `the service has no such path (${answer}, not the service's own not_found of an unknown server): ${fix}`;
  }
}

export interface GuardOptions {
  clock: Clock;
  /** The first wait after a refused key; doubled after each refusal up to `maxMs`. */
  baseMs: number;
  maxMs: number;
  /** Told when a problem appears (or changes kind) and when the service accepts the agent again (`undefined`). */
  onChange?: (problem: CredentialProblem | undefined, previous: CredentialProblem | undefined) => void;
}

export interface CredentialGuard {
  readonly api: Api;
  /** The problem the last answer showed, if any. */
  problem(): CredentialProblem | undefined;
  /** Milliseconds until a request is let through again (0 when the key is not refused or the wait is over). */
  waitMs(): number;
}

/**
 * `api` with every answer checked for a credential problem. While the key is refused, calls fail at once as a 401
 * (not sent: it proves nothing happened) until the backoff has passed; then one goes out, and its answer closes the
 * gate for twice as long or opens it.
 */
export function guardCredentials(api: Api, opts: GuardOptions): CredentialGuard {
  let current: CredentialProblem | undefined;
  let refusals = 0;
  let gateUntil = -Infinity;
  const wait = () => Math.max(0, gateUntil - opts.clock.monotonic());

  const observe = (res: ApiResult<unknown>, method: string) => {
    const found = res.ok ? undefined : credentialProblem(res.error);
    // Another failure (no answer, a 5xx, one request refused) says nothing about the key either way; and only the
    // server's record answering shows that the server id is known.
    if (!res.ok && !found) return;
    if (res.ok && current && current.kind !== "key_refused" && !SERVER_RECORD_CALLS.has(method)) return;
    const previous = current;
    current = found;
    if (found?.kind === "key_refused") {
      refusals++;
      gateUntil = opts.clock.monotonic() + Math.min(opts.baseMs * 2 ** (refusals - 1), opts.maxMs);
    } else {
      refusals = 0;
      gateUntil = -Infinity;
    }
    if (found?.kind !== previous?.kind) opts.onChange?.(found, previous);
  };

  const guarded = new Proxy(api, {
    get(target, prop, receiver) {
      const fn = Reflect.get(target, prop, receiver) as unknown;
      if (typeof fn !== "function") return fn;
      return async (...args: unknown[]) => {
        if (current?.kind === "key_refused" && wait() > 0) return { ok: false, error: heldBack(current.error) };
        const res = (await fn.apply(target, args)) as ApiResult<unknown>;
        observe(res, String(prop));
        return res;
      };
    },
  });
  return { api: guarded, problem: () => current, waitMs: wait };
}

/**
 * A call held back: a 401 whatever refused the key, since a 401 is what every caller keeps its work for (a queued
 * ban, a reward's report). The refusal itself may be a 403 on the server's record, which a ban's POST would take as
 * the service refusing that ban and drop it, never sent.
 */
function heldBack(refusal: ApiError): ApiError {
  return {
    kind: "ClientError",
    status: 401,
    endpoint: refusal.endpoint,
    message: `not sent while the API key is refused (${describeError(refusal)})`,
  };
}
