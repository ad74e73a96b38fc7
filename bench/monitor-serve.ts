/**
 * The status page and /metrics of a `run`, and nothing else, for bench/monitor.ts: the real RunMonitor, handler and
 * listener over the store at HUB_STORAGE_DIR, on a free loopback port printed as the first line. With
 * BENCH_READ_ALL=1 every request reads every entry of every queue, as every request did before the run kept its
 * queue counts (lib/monitor/queue-counts.ts). Compiled with the flags of `npm run build`; run as `run` runs (without
 * the JIT).
 */
import { systemClock as clock } from "../lib/clock.ts";
import { silentLogger as logger } from "../lib/log.ts";
import { monitorHandler } from "../lib/monitor/http.ts";
import { listenMonitor } from "../lib/monitor/listen.ts";
import { Metrics } from "../lib/monitor/metrics.ts";
import { RunMonitor } from "../lib/monitor/monitor.ts";
import { ownStatus } from "../lib/monitor/status.ts";
import { openStore } from "../lib/store/index.ts";
import { useRunSettings } from "../lib/app/runtime.ts";

useRunSettings(); // the runtime setting of a serving `run`: the JIT off (lib/app/runtime.ts)
const store = await openStore({ dir: process.env.HUB_STORAGE_DIR as string, clock, logger });
const monitor = new RunMonitor({
  store,
  clock,
  logger,
  metrics: new Metrics(clock),
  mode: "run",
  unlocked: false,
  bridge: { kind: "sim" },
  players: () => [],
});
monitor.ready("api");
const readAll = { status: () => ownStatus(store, monitor.snapshot(), clock.now()), isReady: true };
const listener = listenMonitor(
  { hostname: "127.0.0.1", port: 0 },
  monitorHandler(process.env.BENCH_READ_ALL === "1" ? readAll : monitor),
);
monitor.listening({ url: listener.url, error: null });
console.log(listener.url);
