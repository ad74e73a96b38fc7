/**
 * What bench/load.ts and bench/soak.ts share: the compiled agent (bench/agent-sim.ts) against an in-memory service in
 * the bench's process, its environment with every interval and the request pace scaled, and what the run did: each
 * job's runs and failures (read from the agent's own /metrics) and every request the service refused.
 */
import { mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SPEC_INTERVALS } from "../lib/config/schema.ts";
import { PER_PLAYER_RATE } from "../lib/pace.ts";
import type { Sandbox } from "../lib/sandbox/index.ts";
import { buildCommand } from "../test/cli/binary.ts";

export const root = join(import.meta.dir, "..");
export const work = mkdtempSync(join(tmpdir(), "hub-bench-"));

/** Compiles a bench entry point with the flags of `npm run build`; returns the executable. */
export function build(entry: string, name: string): string {
  const out = join(work, name);
  const r = Bun.spawnSync(buildCommand(entry, out), { cwd: root, stdout: "ignore", stderr: "inherit" });
  if (r.exitCode !== 0) throw new Error(`build of ${entry} failed`);
  return out;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface Players {
  online: number;
  /** Replaced per simulated second. */
  churn: number;
  distinct: number;
}

/** The agent's environment: the service, the game's players, every interval and the pace `scale` times faster. */
export function agentEnv(
  sb: Sandbox,
  o: { players: Players; scale: number; seconds: number; port: number; sampleSeconds?: number },
): Record<string, string> {
  const intervals = Object.fromEntries(
    Object.entries(SPEC_INTERVALS).map(([k, s]) => [`HUB_INTERVALS_${k.toUpperCase()}`, String(s / o.scale)]),
  );
  return {
    PATH: process.env.PATH ?? "",
    ...(process.env.BENCH_HEAP_TYPES ? { BENCH_HEAP_TYPES: "1" } : {}),
    HUB_API_URL: sb.url,
    HUB_API_KEY: sb.key,
    HUB_API_SERVER_ID: sb.serverId,
    HUB_GAME_BRIDGE: "sim",
    HUB_STORAGE_DIR: mkdtempSync(join(work, "data-")),
    HUB_HTTP_LISTEN: `127.0.0.1:${o.port}`,
    HUB_GAME_SIM_ONLINE: String(o.players.online),
    HUB_GAME_SIM_CHURN: String(o.players.churn * o.scale),
    HUB_GAME_SIM_DISTINCT: String(o.players.distinct),
    ...intervals,
    BENCH_PACE: String(PER_PLAYER_RATE * o.scale),
    BENCH_SECONDS: String(o.seconds),
    BENCH_SAMPLE_SECONDS: String(o.sampleSeconds ?? 0),
  };
}

/** Requests the service answered with an error, by `METHOD route status` (ids as {id}); a lookup's 404 is no error. */
export function refusals(sb: Sandbox): { counts: Map<string, number>; stop: () => void } {
  const counts = new Map<string, number>();
  const stop = sb.control.onHandled({}, (e) => {
    if (e.status < 400 || (e.status === 404 && e.method === "GET" && e.path.startsWith("/user/"))) return;
    const key = `${e.method} ${e.path.replace(/[0-9a-f-]{36}|\d{17}/g, "{id}")} ${e.status}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  });
  return { counts, stop };
}

export interface JobTally {
  job: string;
  runs: number;
  failures: number;
}

/** Each periodic job's runs and failures, from the agent's /metrics (hub_agent_job_runs_total, _failures_total). */
export async function jobTally(port: number): Promise<JobTally[]> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const read = (name: string) =>
    new Map(
      [...text.matchAll(new RegExp(`^hub_agent_${name}\\{job="([^"]+)"\\} (\\d+)`, "gm"))].map((m) => [
        m[1]!,
        Number(m[2]),
      ]),
    );
  const runs = read("job_runs_total");
  const failures = read("job_failures_total");
  return [...runs].map(([job, n]) => ({ job, runs: n, failures: failures.get(job) ?? 0 }));
}
