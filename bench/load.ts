/**
 * Memory and CPU of a running agent: the compiled agent (`run` with the sim bridge) with 0, 100 and 1,000 players
 * online against the in-memory service, next to a bare idle compiled Bun program. Simulated time runs `--scale`
 * times faster by dividing every interval by it (status every 60 s becomes every 1 s at ×60), so one real minute
 * is one hour of the agent's work. Reports peak RSS and CPU seconds per simulated hour (user + system, from GNU
 * time), and ratios. Targets: idle RSS within 2× the bare idle process; CPU linear in players.
 *
 * Run: npm run bench:load [-- --minutes 1 --scale 60]
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SPEC_INTERVALS } from "../lib/config/schema.ts";
import { startSandbox } from "../lib/sandbox/index.ts";
import { buildCommand } from "../test/cli/binary.ts";

const arg = (name: string, fallback: number) => Number(process.argv[process.argv.indexOf(`--${name}`) + 1]) || fallback;
const minutes = arg("minutes", 1);
const scale = arg("scale", 60);
const seconds = minutes * 60;
const root = join(import.meta.dir, "..");
const work = mkdtempSync(join(tmpdir(), "hub-bench-"));
const TIME = "/usr/bin/time";
if (!(await Bun.file(TIME).exists())) throw new Error("GNU time is needed: apt-get install time");

for (const [entry, out] of [
  ["bench/agent-sim.ts", "agent"],
  ["bench/idle.ts", "idle"],
]) {
  const r = Bun.spawnSync(buildCommand(entry!, join(work, out!)), { cwd: root, stdout: "ignore", stderr: "inherit" });
  if (r.exitCode !== 0) throw new Error(`build of ${entry} failed`);
}

const sb = await startSandbox();
const intervals = Object.fromEntries(
  Object.entries(SPEC_INTERVALS).map(([k, s]) => [`HUB_INTERVALS_${k.toUpperCase()}`, String(s / scale)]),
);

async function measure(cmd: string, env: Record<string, string>) {
  // Async spawn: the in-memory service in this process must keep answering while the agent runs.
  const p = Bun.spawn([TIME, "-f", "%M %U %S", cmd], { env, stdout: "ignore", stderr: "pipe" });
  const [code, err] = await Promise.all([p.exited, new Response(p.stderr).text()]);
  if (code !== 0) throw new Error(`${cmd} exited ${code}: ${err}`);
  const [kb, user, sys] = err.trim().split("\n").at(-1)!.split(" ").map(Number) as [number, number, number];
  return { rssMb: kb / 1024, cpuPerHour: ((user + sys) / seconds) * (3600 / scale) };
}

const rows: [string, { rssMb: number; cpuPerHour: number }][] = [];
rows.push(["bare idle program", await measure(join(work, "idle"), { BENCH_SECONDS: String(seconds) })]);
for (const players of [0, 100, 1000]) {
  const env = {
    PATH: process.env.PATH ?? "",
    HUB_API_URL: sb.url,
    HUB_API_KEY: sb.key,
    HUB_API_SERVER_ID: sb.serverId,
    HUB_GAME_BRIDGE: "sim",
    HUB_STORAGE_DIR: mkdtempSync(join(work, "data-")),
    ...intervals,
    BENCH_PLAYERS: String(players),
    BENCH_SECONDS: String(seconds),
  };
  rows.push([`agent, ${players} players`, await measure(join(work, "agent"), env)]);
}
await sb.stop();

const [, bare] = rows[0]!;
console.log(`${minutes} min per case; intervals ÷${scale}, so CPU is per simulated hour\n`);
console.log("case".padEnd(24) + "peak RSS MB".padStart(12) + "  × bare" + "CPU s / sim. hour".padStart(19));
for (const [name, r] of rows)
  console.log(
    name.padEnd(24) +
      r.rssMb.toFixed(1).padStart(12) +
      `${(r.rssMb / bare.rssMb).toFixed(2)}×`.padStart(8) +
      r.cpuPerHour.toFixed(2).padStart(19),
  );
