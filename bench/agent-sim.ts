/**
 * The agent of `hub-agent run` over the simulated game, for bench/load.ts and bench/soak.ts. Compiled with the flags of
 * `npm run build`. Settings come from the environment: HUB_* as for `run` (the players: HUB_GAME_SIM_ONLINE, _CHURN,
 * _DISTINCT), plus BENCH_SECONDS (it stops itself, so GNU time can report on it), BENCH_PACE (the per-player request
 * pace, scaled like the intervals) and BENCH_SAMPLE_SECONDS: that often, a full garbage collection, then one JSON line
 * on stdout with the heap after it, the RSS and the simulated game's players (and with BENCH_HEAP_TYPES set, the heap's
 * object counts by type).
 */
import { heapStats } from "bun:jsc";
import { runAgent } from "../cli/commands/run.ts";
import { createLogger } from "../cli/log.ts";
import { processIo } from "../cli/stdio.ts";
import { systemClock as clock } from "../lib/clock.ts";
import { loadConfig } from "../lib/app/config.ts";
import { createBridge } from "../lib/game/index.ts";
import type { SimGame } from "../lib/game/sim.ts";
import { PER_PLAYER_BURST, PER_PLAYER_RATE } from "../lib/pace.ts";
import { useRunSettings } from "../lib/app/runtime.ts";

useRunSettings(); // the runtime setting of a serving `run`, as `hub-agent run` has it (lib/app/runtime.ts)

const seconds = Number(process.env.BENCH_SECONDS ?? 60);
const pace = Number(process.env.BENCH_PACE ?? PER_PLAYER_RATE);
const sampleSeconds = Number(process.env.BENCH_SAMPLE_SECONDS ?? 0);
const loaded = await loadConfig({ env: process.env, cwd: process.cwd() });
if (!loaded.ok) throw new Error(loaded.problems.join("\n"));
const io = processIo();
const logger = createLogger({
  format: "pretty",
  quiet: true,
  redact: (s) => s,
  env: io.env,
  write: io.stderr,
  tty: io.stderrIsTty,
});
const sim = (await createBridge(loaded.config, { clock, logger })) as SimGame;

const started = performance.now();
function sample() {
  Bun.gc(true);
  const { heapUsed, rss } = process.memoryUsage();
  const line = {
    t: (performance.now() - started) / 1000,
    heap: heapUsed,
    rss,
    online: sim.online().length,
    distinct: sim.distinctPlayers,
    joins: sim.generatedJoins,
    ...(process.env.BENCH_HEAP_TYPES ? { types: heapStats().objectTypeCounts } : {}),
  };
  console.log(JSON.stringify(line));
}
const sampler = sampleSeconds > 0 ? setInterval(sample, sampleSeconds * 1000) : undefined;
const until = new Promise<void>((r) =>
  setTimeout(() => {
    if (sampler) {
      clearInterval(sampler);
      sample(); // the last one, at the very end
    }
    r();
  }, seconds * 1000),
);
process.exitCode = await runAgent({
  config: loaded.config,
  bridge: sim,
  clock,
  logger,
  until,
  pace: { perSecond: pace, burst: (pace / PER_PLAYER_RATE) * PER_PLAYER_BURST },
});
