/**
 * Memory and CPU of a running agent: the compiled agent (`run` with the sim bridge) with 0, 100, 1,000 and 5,000
 * players online against the in-memory service, next to a bare idle compiled Bun program. Players come and go (each
 * stays about a simulated hour; every join a new player), so lookups and creations go on all the time. Simulated time
 * runs faster by dividing every interval and the request pace by the scale (status every 60 s becomes every 1 s at
 * ×60), so one real minute is one hour of the agent's work; a case with more players than the machine can serve at
 * ×60 runs slower (at most 60,000 / players), and longer. Reports peak RSS and CPU seconds per simulated hour (user +
 * system, from GNU time), ratios, and whether every job succeeded: each job's runs and failures as the agent's
 * /metrics counts them, and every request the service refused (a 414 for a URL too long, a 429, …).
 *
 * Run: npm run bench:load [-- --minutes 1 --scale 60 --players 0,100,1000,5000]
 */
import { startSandbox } from "../lib/sandbox/index.ts";
import { agentEnv, build, freePort, jobTally, refusals } from "./agent-env.ts";

const arg = (name: string, fallback: number) => Number(process.argv[process.argv.indexOf(`--${name}`) + 1]) || fallback;
const minutes = arg("minutes", 1);
const maxScale = arg("scale", 60);
const TIME = "/usr/bin/time";
if (!(await Bun.file(TIME).exists())) throw new Error("GNU time is needed: apt-get install time");

const agent = build("bench/agent-sim.ts", "agent");
const idle = build("bench/idle.ts", "idle");
const sb = await startSandbox({ requestLog: 100 });

async function measure(cmd: string, env: Record<string, string>, seconds: number, scale: number) {
  // Async spawn: the in-memory service in this process must keep answering while the agent runs.
  const p = Bun.spawn([TIME, "-f", "%M %U %S", cmd], { env, stdout: "ignore", stderr: "pipe" });
  const [code, err] = await Promise.all([p.exited, new Response(p.stderr).text()]);
  if (code !== 0) throw new Error(`${cmd} exited ${code}: ${err}`);
  const [kb, user, sys] = err.trim().split("\n").at(-1)!.split(" ").map(Number) as [number, number, number];
  return { rssMb: kb / 1024, cpuPerHour: ((user + sys) / seconds) * (3600 / scale) };
}

interface Row {
  name: string;
  rssMb: number;
  cpuPerHour: number;
  scale: number;
  minutes: number;
  jobs?: string;
  refused?: string;
}
const rows: Row[] = [];
const bareSeconds = minutes * 60;
rows.push({
  name: "bare idle program",
  ...(await measure(idle, { BENCH_SECONDS: String(bareSeconds) }, bareSeconds, maxScale)),
  scale: maxScale,
  minutes,
});
const given = process.argv.indexOf("--players");
const cases = given > 0 ? process.argv[given + 1]!.split(",").map(Number) : [0, 100, 1000, 5000];
/**
 * A serving `run` turns JavaScriptCore's JIT off (lib/app/runtime.ts); an operator's BUN_JSC_useJIT=true keeps it. 0
 * and 1,000 players also run with the JIT, side by side.
 */
const variants = cases.flatMap((players) => [
  { players, jit: false },
  ...(players === 0 || players === 1000 ? [{ players, jit: true }] : []),
]);
for (const { players, jit } of variants) {
  const scale = Math.min(maxScale, players ? 60_000 / players : maxScale);
  // A restart next to 5,000 players takes a while at the pace: the case runs long enough to see rounds after it.
  const caseMinutes = players >= 5000 ? Math.max(minutes, 3) : minutes;
  const seconds = caseMinutes * 60;
  const port = await freePort();
  const env = agentEnv(sb, {
    players: { online: players, churn: players / 3600, distinct: 0 },
    scale,
    seconds,
    port,
  });
  if (jit) env.BUN_JSC_useJIT = "true";
  const refused = refusals(sb);
  // Read before the agent stops itself, while its /metrics still answers.
  const tally = Bun.sleep((seconds - 3) * 1000).then(() => jobTally(port));
  const r = await measure(agent, env, seconds, scale);
  refused.stop();
  const jobs = await tally;
  const failed = jobs.filter((j) => j.failures > 0);
  rows.push({
    name: `agent, ${players} players${jit ? ", JIT on" : ""}`,
    ...r,
    scale,
    minutes: caseMinutes,
    jobs: failed.length
      ? failed.map((j) => `${j.job} ${j.failures}/${j.runs} failed`).join(", ")
      : `all ${jobs.length} ok (${jobs.reduce((n, j) => n + j.runs, 0)} runs)`,
    refused: [...refused.counts].map(([k, n]) => `${k} ×${n}`).join(", ") || "none",
  });
}
await sb.stop();

const bare = rows[0]!;
console.log("intervals ÷scale, so CPU is per simulated hour; players each stay about a simulated hour\n");
console.log(
  "case".padEnd(38) +
    "scale".padStart(6) +
    "min".padStart(5) +
    "peak RSS MB".padStart(13) +
    "  × bare" +
    "CPU s / sim. hour".padStart(19) +
    "  jobs; requests refused",
);
for (const r of rows)
  console.log(
    r.name.padEnd(38) +
      `×${r.scale}`.padStart(6) +
      String(r.minutes).padStart(5) +
      r.rssMb.toFixed(1).padStart(13) +
      `${(r.rssMb / bare.rssMb).toFixed(2)}×`.padStart(8) +
      r.cpuPerHour.toFixed(2).padStart(19) +
      (r.jobs ? `  ${r.jobs}; ${r.refused}` : ""),
  );
