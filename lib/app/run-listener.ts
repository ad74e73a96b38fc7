/** A `run`'s `[http] listen`: the status page and /metrics (docs/monitoring.md); a host's too (lib/app/host.ts). */
import type { Config } from "./config.ts";
import type { Logger } from "../log.ts";
import type { RunMonitor } from "../monitor/monitor.ts";
import type { MonitorListener } from "../monitor/listen.ts";
import type { MonitorRoutes } from "../monitor/http.ts";

/** Listens when configured. A port in use is logged, not fatal: enforcement goes on. */
export async function listenHttp(
  config: Config,
  monitor: RunMonitor,
  logger: Logger,
): Promise<MonitorListener | undefined> {
  const text = config.http.listen;
  if (!text) return undefined;
  const { monitorHandler } = await import("../monitor/http.ts");
  const r = await listenAt(text, (anyHost) => monitorHandler(monitor, { anyHost }), logger);
  monitor.listening({ url: r.listener?.url ?? null, error: r.error ?? null });
  return r.listener;
}

/** A host's listener: every server's routes (lib/app/host-monitor.ts). */
export async function listenRoutes(
  text: string,
  routes: MonitorRoutes,
  logger: Logger,
): Promise<MonitorListener | undefined> {
  const { routesHandler } = await import("../monitor/http.ts");
  return (await listenAt(text, (anyHost) => routesHandler(routes, { anyHost }), logger)).listener;
}

async function listenAt(
  text: string,
  handlerFor: (anyHost: boolean) => (req: Request) => Promise<Response>,
  logger: Logger,
): Promise<{ listener?: MonitorListener; error?: string }> {
  // Loaded only when configured: listen.ts is the Bun.serve adapter.
  const [{ parseListen }, { isLoopback }, { listenMonitor }] = await Promise.all([
    import("../config/listen.ts"),
    import("../loopback.ts"),
    import("../monitor/listen.ts"),
  ]);
  const at = parseListen(text);
  if (!at) return {}; // the configuration was validated
  try {
    const listener = listenMonitor(at, handlerFor(!isLoopback(at.hostname)));
    logger.info(`status page on ${listener.url} (metrics: ${listener.url}metrics)`);
    return { listener };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const error = code === "EADDRINUSE" ? "the port is in use: pick another" : (e as Error).message;
    logger.error(`http.listen = "${text}": ${error}; running without the status page and /metrics`);
    return { error };
  }
}
