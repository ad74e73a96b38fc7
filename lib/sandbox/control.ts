// Fault injection and the request log, for tests and demos: failures, latency, rate limits, outages.
import { json } from "./http.ts";

/** Which requests a control applies to; path is relative to the base path, e.g. "/ban/" or /^\/user\//. */
export interface RequestMatch {
  method?: string;
  path?: string | RegExp;
  /** And this holds for the request (its body, its path): a fault for one client's request among others alike. */
  where?: (request: RequestLogEntry) => boolean;
}

export interface RequestLogEntry {
  method: string;
  /** Relative to the base path, without the query. */
  path: string;
  /** URLSearchParams entries, repeated keys kept. */
  query: [string, string][];
  /** Parsed JSON; the raw text when it was not JSON; null without a body. */
  body: unknown;
  headers: Record<string, string>;
  /** Status answered; 0 while the request is still being handled. */
  status: number;
  /** Arrival time on the sandbox clock (epoch ms). */
  time: number;
}

export interface SandboxControl {
  /**
   * The next `times` matching requests are answered with this status and body instead: an object is sent as JSON;
   * a string is sent raw (as `text/html` when it starts with "<", else as `application/json`, so invalid JSON can be
   * simulated); no body gives the service's error shape. `headers` override.
   */
  failNext(match: RequestMatch, times: number, status: number, body?: unknown, headers?: Record<string, string>): void;
  /**
   * Delays every matching request by ms (match omitted = all). latency(0) clears. With `after`, the request is
   * handled at once and only its answer is delayed: the service did the work, the client may give up waiting.
   */
  latency(ms: number, match?: RequestMatch, opts?: { after?: boolean }): void;
  /**
   * Calls `fn` each time a matching request has been handled (its status is set, its effect is in the state), before
   * its answer is sent; a test can kill the client at exactly that moment. Returns a function that stops it.
   */
  onHandled(match: RequestMatch, fn: (entry: RequestLogEntry) => void): () => void;
  /** The next `times` matching requests get 429 with `Retry-After: seconds`. */
  rateLimit(times: number, retryAfterSeconds: number, match?: RequestMatch): void;
  /**
   * A standing rate limit, as a real service has one: at most `perSecond` matching requests in each second (fixed
   * one-second windows of real time); the others get 429 with `Retry-After` in whole seconds until the next window.
   * `limitRate(0)` (or reset) lifts it.
   */
  limitRate(perSecond: number, match?: RequestMatch): void;
  /** Stops listening (connections are refused) / listens again on the same port. */
  down(): Promise<void>;
  up(): Promise<void>;
  /** Every request received, oldest first. */
  requests(filter?: RequestMatch): RequestLogEntry[];
  clearRequests(): void;
  /** Drops every pending failNext, latency and rateLimit rule, the rate limit and every onHandled listener. */
  reset(): void;
}

interface Rule {
  match: RequestMatch;
  times: number;
  respond: () => Response;
}

export function matches(match: RequestMatch | undefined, request: RequestLogEntry): boolean {
  if (!match) return true;
  const { method, path } = request;
  if (match.method && match.method.toUpperCase() !== method.toUpperCase()) return false;
  if (match.where && !match.where(request)) return false;
  if (match.path === undefined) return true;
  return typeof match.path === "string" ? match.path === path : match.path.test(path);
}

const REASONS: Record<number, string> = {
  400: "Bad request.",
  401: "Invalid token.",
  403: "Forbidden.",
  404: "Not found.",
};

function failure(status: number, body: unknown, headers: Record<string, string>): Response {
  if (typeof body === "string") {
    const type = body.trimStart().startsWith("<") ? "text/html; charset=utf-8" : "application/json";
    return new Response(body, { status, headers: { "content-type": type, ...headers } });
  }
  if (body !== undefined) return json(status, body, headers);
  const msg = REASONS[status] ?? (status >= 500 ? "Internal server error." : "Request failed.");
  return json(status, { detail: { code: status >= 500 ? "internal_error" : "error", msg, detail: {} } }, headers);
}

/** The control panel; the handler calls `record` and `intercept`, the listener attaches `down`/`up`. */
export class ControlPanel implements SandboxControl {
  private rules: Rule[] = [];
  private delays: { ms: number; match?: RequestMatch; after: boolean }[] = [];
  private listeners = new Set<{ match: RequestMatch; fn: (entry: RequestLogEntry) => void }>();
  private log: RequestLogEntry[] = [];

  /** `logLimit`: keep only the newest that many requests (a long bench would otherwise keep every body). */
  constructor(private logLimit = Number.POSITIVE_INFINITY) {}
  private limit?: { perSecond: number; match?: RequestMatch; window: number; used: number };
  private lifecycle = { down: async () => {}, up: async () => {} };

  attach(lifecycle: { down(): Promise<void>; up(): Promise<void> }): void {
    this.lifecycle = lifecycle;
  }

  failNext(
    match: RequestMatch,
    times: number,
    status: number,
    body?: unknown,
    headers: Record<string, string> = {},
  ): void {
    this.rules.push({ match, times, respond: () => failure(status, body, headers) });
  }

  latency(ms: number, match?: RequestMatch, opts: { after?: boolean } = {}): void {
    if (ms <= 0) this.delays = [];
    else this.delays.push({ ms, match, after: opts.after ?? false });
  }

  onHandled(match: RequestMatch, fn: (entry: RequestLogEntry) => void): () => void {
    const listener = { match, fn };
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  rateLimit(times: number, retryAfterSeconds: number, match: RequestMatch = {}): void {
    const body = { detail: { code: "rate_limited", msg: "Too many requests.", detail: {} } };
    this.rules.push({ match, times, respond: () => json(429, body, { "retry-after": String(retryAfterSeconds) }) });
  }

  limitRate(perSecond: number, match?: RequestMatch): void {
    this.limit = perSecond > 0 ? { perSecond, match, window: -1, used: 0 } : undefined;
  }

  down(): Promise<void> {
    return this.lifecycle.down();
  }

  up(): Promise<void> {
    return this.lifecycle.up();
  }

  requests(filter?: RequestMatch): RequestLogEntry[] {
    return this.log.filter((e) => matches(filter, e));
  }

  clearRequests(): void {
    this.log = [];
  }

  reset(): void {
    this.rules = [];
    this.delays = [];
    this.limit = undefined;
    this.listeners.clear();
  }

  record(entry: RequestLogEntry): RequestLogEntry {
    this.log.push(entry);
    // Dropped in batches, so keeping the newest costs no copy per request.
    if (this.log.length > 2 * this.logLimit) this.log = this.log.slice(-this.logLimit);
    return entry;
  }

  /** Waits out matching latency, then returns the injected answer for this request (as logged), if any. */
  async intercept(request: RequestLogEntry): Promise<Response | undefined> {
    await this.wait(request, false);
    const limit = this.limit;
    if (limit && matches(limit.match, request)) {
      const now = performance.now();
      const window = Math.floor(now / 1000);
      if (window !== limit.window) Object.assign(limit, { window, used: 0 });
      if (limit.used >= limit.perSecond) {
        const body = { detail: { code: "rate_limited", msg: "Too many requests.", detail: {} } };
        const seconds = Math.max(1, Math.ceil(((window + 1) * 1000 - now) / 1000));
        return json(429, body, { "retry-after": String(seconds) });
      }
      limit.used++;
    }
    const rule = this.rules.find((r) => r.times > 0 && matches(r.match, request));
    if (!rule) return undefined;
    rule.times--;
    this.rules = this.rules.filter((r) => r.times > 0);
    return rule.respond();
  }

  /** The request is handled: tells the onHandled listeners, then waits out matching `after` latency. */
  async handled(entry: RequestLogEntry): Promise<void> {
    for (const l of this.listeners) if (matches(l.match, entry)) l.fn(entry);
    await this.wait(entry, true);
  }

  private async wait(request: RequestLogEntry, after: boolean): Promise<void> {
    const fitting = this.delays.filter((d) => d.after === after && matches(d.match, request));
    const delay = Math.max(0, ...fitting.map((d) => d.ms));
    if (delay) await new Promise((resolve) => setTimeout(resolve, delay));
  }
}
