/**
 * One agent of a `run`, composed and served: the service client with its credential guard, the store, messages, the
 * agent over the game bridge, hooks, the monitor and the status page; then the game's side and the agent started,
 * and one round and out (`--once`), or served until a stop or a reload (lib/app/run-serving.ts).
 */
import { Agent } from "../agent.ts";
import { describeCredentialProblem } from "../api/credentials.ts";
import { FEATURES_WITHOUT_INSTANCE } from "../features/index.ts";
import { attachHooks } from "../hooks.ts";
import { loadMessages } from "../messages.ts";
import { Metrics } from "../monitor/metrics.ts";
import { RunMonitor } from "../monitor/monitor.ts";
import { within } from "../clock.ts";
import { FINAL_STEP_MS } from "../shutdown.ts";
import { describeFsError } from "../store/errors.ts";
import { openStore } from "../store/index.ts";
import { listenHttp } from "./run-listener.ts";
import { Serving, type ServeOptions, type Served } from "./run-serving.ts";
import { serviceApi } from "./service.ts";

export type { ServeOptions, Served } from "./run-serving.ts";

/**
 * The executable starts with the JIT reluctant (packaging/build.ts, JIT_POLICY): a one-shot command's code runs
 * once. A serving `run` runs without the JIT (runtime.ts), where this changes nothing; one an operator gave the JIT
 * back (BUN_JSC_useJIT=true) runs its kicks, chat and rounds for weeks, so it gets the normal policy back. Only Bun
 * has the call; under Deno (or `bun` without a compile) there is nothing to undo.
 */
function normalJit(): void {
  const bun = (globalThis as { Bun?: { unsafe?: { setJITPolicy?: (scale: number) => void } } }).Bun;
  bun?.unsafe?.setJITPolicy?.(1);
}

export async function serve(opts: ServeOptions): Promise<Served> {
  const { config, bridge, clock, logger } = opts;
  const messages = await loadMessages(config.lang, { logger });
  // The one registry of what this run did: fed by the HTTP client and the scheduler, read by `hub-agent status`,
  // the status page and /metrics (docs/monitoring.md).
  const metrics = new Metrics(clock);
  const { api, guard } = await serviceApi(config, {
    clock,
    logger: logger.withTag("api"),
    onRequest: metrics.request,
    watched: null,
    // `run --once` exits 3 on it; `run` keeps enforcing from its cache and says so once, and once more when it ends.
    onChange: (problem, previous) => {
      if (problem)
        logger.error(
          `${describeCredentialProblem(problem, config.api.server_id)}; until then bans are enforced from the cached ban list` +
            (problem.kind === "key_refused"
              ? ", queued entries wait, and the service is asked again with growing pauses (at most 30 min)"
              : ""),
        );
      else if (previous?.kind === "key_refused") logger.info("the service accepts the API key again");
      else logger.info(`the service knows server ${config.api.server_id} again`);
    },
  });
  const store = await openStore({ dir: config.storage.dir, logger, clock, reportWriteErrors: true });
  const agent = new Agent({
    config,
    api,
    store,
    bridge,
    clock,
    logger,
    messages,
    once: opts.once,
    features: opts.unlocked ? FEATURES_WITHOUT_INSTANCE : undefined,
    jobs: metrics,
    ...(opts.pace ? { pace: opts.pace } : {}),
    servicePaused: () => guard.problem()?.kind === "key_refused" && guard.waitMs() > 0,
  });
  attachHooks(agent.events, config.hooks, logger.withTag("hooks"));
  const monitor = new RunMonitor({
    store,
    clock,
    logger,
    metrics,
    mode: opts.once ? "once" : "run",
    unlocked: opts.unlocked,
    bridge: { kind: config.game.bridge, health: bridge.health?.bind(bridge) },
    players: () => agent.players.values(),
    startedAt: opts.startedAt, // the run's uptime goes on across reloads
  });
  agent.events.on("hub_ready", ({ source }) => monitor.ready(source));
  monitor.start();
  opts.onMonitor?.(monitor);
  const listener = opts.once ? undefined : await listenHttp(config, monitor, logger);
  if (!opts.once) normalJit();
  // `run --once` met a refused key or an unknown server id: that is the reason to name (exit 3), whatever it ended
  // with, a store that failed aside.
  const refused = () => {
    const problem = opts.once ? guard.problem() : undefined;
    return problem && describeCredentialProblem(problem, config.api.server_id);
  };
  let reloading = false;
  try {
    const served = await new Serving(opts, agent, monitor, metrics).serve();
    reloading = served.kind === "reload";
    const line = refused();
    return line ? { kind: "credentials", line, ...("summary" in served ? { summary: served.summary } : {}) } : served;
  } catch (e) {
    const line = describeFsError(e) ? undefined : refused();
    if (line) return { kind: "credentials", line };
    throw e;
  } finally {
    await listener?.stop();
    opts.onMonitor?.(undefined);
    // The final snapshot: whole before a reload (the next agent's monitor writes the same file), bounded before exit.
    const last = monitor.stop();
    if (reloading) await last;
    else await within(clock, last, FINAL_STEP_MS);
  }
}
