/**
 * A host's status page and /metrics (lib/app/host.ts): at the shared settings' `http.listen`, every server's, by
 * name. `/status.json` is `{"now", "servers": {"<name>": view}}` (a server whose agent is not running:
 * `{"running": false, "why"}`), `/metrics` labels every series with `server` (lib/monitor/prometheus.ts), `/readyz` is
 * ready when every server is, and otherwise names the others.
 */
import type { MonitorRoutes } from "../monitor/http.ts";
import type { RunMonitor } from "../monitor/monitor.ts";
import type { StatusView } from "../monitor/status.ts";

export class HostMonitor {
  private readonly monitors = new Map<string, RunMonitor>();
  private readonly why = new Map<string, string>();

  /** `names`: the servers hosted now, in order. */
  constructor(private readonly names: () => string[]) {}

  /** A server's agent started (its monitor) or stopped (undefined, and why it is not running). */
  set(name: string, monitor: RunMonitor | undefined, why = "starting"): void {
    if (monitor) this.monitors.set(name, monitor);
    else this.monitors.delete(name);
    this.why.set(name, why);
  }

  forget(name: string): void {
    this.monitors.delete(name);
    this.why.delete(name);
  }

  private views(): Promise<[string, StatusView | undefined][]> {
    return Promise.all(
      this.names().map(async (n): Promise<[string, StatusView | undefined]> => [
        n,
        await this.monitors.get(n)?.status(),
      ]),
    );
  }

  routes(): MonitorRoutes {
    return {
      statusJson: async () => {
        const servers = Object.fromEntries(
          (await this.views()).map(([n, view]) => [n, view ?? { running: false, why: this.why.get(n) ?? "starting" }]),
        );
        return { now: new Date().toISOString(), servers };
      },
      metrics: async () => {
        const { renderHostMetrics } = await import("../monitor/prometheus.ts");
        return renderHostMetrics(await this.views());
      },
      notReady: () => {
        const waiting = this.names().filter((n) => !this.monitors.get(n)?.isReady);
        return waiting.length ? `${waiting.join(", ")} ${waiting.length === 1 ? "is" : "are"} not ready` : undefined;
      },
    };
  }
}
