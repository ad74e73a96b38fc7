/**
 * The routes of `[http] listen` (docs/monitoring.md), as a web-standard handler (Bun.serve only in listen.ts):
 * `/` the status page, `/status.json` what it shows, `/metrics` for Prometheus, `/healthz` (the process serves) and
 * `/readyz` (after hub_ready). Read-only: anything but GET and HEAD is 405.
 *
 * No authentication, so the listener is on loopback (the config refuses another address unless told), and a
 * request naming another host in its Host header is refused: a web page the operator visits could otherwise point
 * its own host name at 127.0.0.1 (DNS rebinding) and read the status from the browser.
 */
import { STATUS_PAGE } from "./page.ts";
import { METRICS_CONTENT_TYPE, renderMetrics } from "./prometheus.ts";
import type { StatusView } from "./status.ts";

export interface MonitorSource {
  status(): Promise<StatusView>;
  readonly isReady: boolean;
}

export interface HandlerOptions {
  /** Accept any Host header (http.allow_remote): the operator exposes the listener on purpose. */
  anyHost?: boolean;
}

const LOOPBACK_HOST = /^(localhost|127(\.\d{1,3}){3}|\[::1\])(:\d+)?$/i;

const text = (body: string, status = 200, type = "text/plain; charset=utf-8") =>
  new Response(body, { status, headers: { "content-type": type, "cache-control": "no-store" } });

/** What the routes answer: one agent's (monitorHandler) or a host's every server (lib/app/host-monitor.ts). */
export interface MonitorRoutes {
  statusJson(): Promise<unknown>;
  metrics(): Promise<string>;
  /** Undefined when ready; else why not, for /readyz's 503. */
  notReady(): string | undefined;
}

export function monitorHandler(source: MonitorSource, opts: HandlerOptions = {}): (req: Request) => Promise<Response> {
  return routesHandler(
    {
      statusJson: () => source.status(),
      metrics: async () => renderMetrics(await source.status()),
      notReady: () => (source.isReady ? undefined : "waiting for the server record (hub_ready)"),
    },
    opts,
  );
}

export function routesHandler(routes: MonitorRoutes, opts: HandlerOptions = {}): (req: Request) => Promise<Response> {
  return async (req) => {
    if (!opts.anyHost && !LOOPBACK_HOST.test(req.headers.get("host") ?? ""))
      return text("refused: this listener answers requests to a loopback address only\n", 421);
    if (req.method !== "GET" && req.method !== "HEAD") {
      const res = text("method not allowed\n", 405);
      res.headers.set("allow", "GET, HEAD");
      return res;
    }
    switch (new URL(req.url).pathname) {
      case "/":
        return new Response(STATUS_PAGE, {
          headers: {
            "content-type": "text/html; charset=utf-8",
            "cache-control": "no-store",
            // Nothing but the page itself: no external asset can be loaded, no other origin reached.
            "content-security-policy":
              "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
            "x-content-type-options": "nosniff",
          },
        });
      case "/status.json":
        return text(JSON.stringify(await routes.statusJson()), 200, "application/json");
      case "/metrics":
        return text(await routes.metrics(), 200, METRICS_CONTENT_TYPE);
      case "/healthz":
        return text("ok\n");
      case "/readyz": {
        const why = routes.notReady();
        return why ? text(`not ready: ${why}\n`, 503) : text("ready\n");
      }
      default:
        return text("not found: try /, /status.json, /metrics, /healthz or /readyz\n", 404);
    }
  };
}
