/**
 * The crash scenarios of test/reliability/sanctions.test.ts with more iterations: the compiled binary SIGKILLed
 * after the service handled its ban, warning or unban (and `run` after a queued ban), `--kills` times each where the
 * service carried it out and as often where it did nothing, then one delivery round, then the count at the service.
 * Says on stderr how each scenario went as it ends, then prints a table and the summary line: exit 1 on any loss,
 * and with one line saying so if it ends without them (bench/guard.ts).
 * Run: npm run bench:reliability [-- --kills N] [-- --lanes L]
 */
import { startSandbox } from "../lib/sandbox/index.ts";
import { binary } from "../test/cli/binary.ts";
import { killTracked } from "../test/support/procs.ts";
import { killScenarios, summary } from "../test/reliability/scenarios.ts";
import { runToReport } from "./guard.ts";

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) || fallback : fallback;
};
const kills = arg("kills", 200);
const lanes = arg("lanes", 4);

runToReport(
  "bench/reliability",
  async (phase) => {
    // Each scenario's line on stderr as it ends: a run cut short still says how far it got.
    const progress = (line: string) => {
      phase(line);
      console.error(`bench/reliability: ${line}`);
    };
    phase("the first kills");
    const sb = await startSandbox();
    try {
      const started = performance.now();
      const bin = await binary();
      const figures = await killScenarios({ sb, bin, lanes, progress }, { done: kills, "not done": kills });
      const s = ((performance.now() - started) / 1000).toFixed(0);
      console.log(`${kills} kills per scenario and window, ${lanes} lanes, ${s} s`);
      console.log("scenario  window    kills  missed  duplicates  lost");
      for (const f of figures)
        console.log(
          `${f.kind.padEnd(8)}  ${f.window.padEnd(8)}  ${String(f.kills).padStart(5)}  ${String(f.missed).padStart(6)}  ${String(f.duplicates).padStart(10)}  ${String(f.lost).padStart(4)}`,
        );
      console.log(summary(figures));
      if (figures.some((f) => f.duplicates || f.lost || f.missed)) process.exitCode = 1;
    } finally {
      phase("stopping the service");
      await sb.stop();
      killTracked("all");
    }
  },
  () => killTracked("all"),
);
