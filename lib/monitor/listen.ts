// Bun-specific: serves the monitor's web-standard handler (lib/monitor/http.ts). Only `run` imports it, and only
// when `[http] listen` is set, so the one-shot commands stay runnable under Deno.
import type { ListenAddress } from "../config/listen.ts";

export interface MonitorListener {
  /** The page's address, with the port actually bound (for port 0). */
  url: string;
  stop(): Promise<void>;
}

export function listenMonitor(at: ListenAddress, fetch: (req: Request) => Promise<Response>): MonitorListener {
  const server = Bun.serve({ hostname: at.hostname, port: at.port, fetch });
  const host = at.hostname.includes(":") ? `[${at.hostname}]` : at.hostname;
  return { url: `http://${host}:${server.port ?? at.port}/`, stop: () => server.stop(true) };
}
