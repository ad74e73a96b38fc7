/** A `run`'s `[http] listen`: the status page and /metrics (docs/monitoring.md). */
import type { Config } from "./config.ts";
import type { Logger } from "../log.ts";
import type { RunMonitor } from "../monitor/monitor.ts";
import type { MonitorListener } from "../monitor/listen.ts";

/** Listens when configured. A port in use is logged, not fatal: enforcement goes on. */
export async function listenHttp(
  config: Config,
  monitor: RunMonitor,
  logger: Logger,
): Promise<MonitorListener | undefined> {
  const text = config.http.listen;
  if (!text) return undefined;
  // Loaded only when configured: listen.ts is the Bun.serve adapter.
  const [{ parseListen }, { isLoopback }, { monitorHandler }, { listenMonitor }] = await Promise.all([
    import("../config/listen.ts"),
    import("../loopback.ts"),
    import("../monitor/http.ts"),
    import("../monitor/listen.ts"),
  ]);
  const at = parseListen(text);
  if (!at) return undefined; // the configuration was validated
  try {
    const listener = listenMonitor(at, monitorHandler(monitor, { anyHost: !isLoopback(at.hostname) }));
    monitor.listening({ url: listener.url, error: null });
    logger.info(`status page on ${listener.url} (metrics: ${listener.url}metrics)`);
    return listener;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === "EADDRINUSE" ? "the port is in use: pick another" : (e as Error).message;
    monitor.listening({ url: null, error: why });
    logger.error(`http.listen = "${text}": ${why}; running without the status page and /metrics`);
    return undefined;
  }
}
