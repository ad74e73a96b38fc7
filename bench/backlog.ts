/**
 * Backlogs after an outage, in one run, with the compiled binary against the in-memory service (in a process of its
 * own, bench/backlog-service.ts):
 *
 * - `ban` (a fresh player each time, the service up, no `run`) with 0, 5,000 and 10,000 bans queued: p50 and p99,
 *   and as ratios to a bare compiled Bun program that prints one line, timed alongside (interleaved, one sample of
 *   each in turn: the machine is shared and its load drifts; ratios travel);
 * - draining 5,000, 10,000 and 5,000 again (the time `run` takes to empty the queue from its start, and its CPU
 *   seconds; the ratio of 10,000 to the two 5,000s' mean should be ≤ 2.2, linear), then 10,000 with the service
 *   allowing `--rate` requests per second (429 with Retry-After beyond): the time, the rate achieved, and at the
 *   service 0 lost and 0 duplicates, in order;
 * - `ban` while `run` drains that last backlog (its entry handed over to `run`, lib/sanctions/handoff.ts);
 * - `ban` → kick with the service down (`run` beside, a simulated game with the players online): from the command's
 *   start to the kick in the game's action log.
 *
 * Each sampled case gives p50, p99 (nearest rank: with fewer than 100 samples that is the slowest; with 100, the
 * second slowest) and the slowest, whose phases are printed (HUB_PHASES: its start, the disk, or `run`'s answer).
 *
 * Run: npm run bench:backlog [-- --entries 10000 --samples 30 --rate 300]
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { sanctionQueues } from "../lib/sanctions/index.ts";
import { agentEnv } from "../test/support/agent-run.ts";
import { buildCommand } from "../test/cli/binary.ts";
import { queuedBans } from "../test/support/backlog.ts";
import { trackChildren } from "./children.ts";
import { percentile } from "./percentile.ts";

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) || fallback : fallback;
};
const ENTRIES = arg("entries", 10_000);
const SAMPLES = arg("samples", 30);
const RATE = arg("rate", 300);
const root = join(import.meta.dir, "..");
const work = mkdtempSync(join(tmpdir(), "hub-backlog-"));
const load = () => loadavg()[0]!.toFixed(1);

for (const [entry, out] of [
  ["cli/main.ts", "hub-agent"],
  ["bench/bare.ts", "bare"],
]) {
  const r = Bun.spawnSync(buildCommand(entry!, join(work, out!)), { cwd: root, stdout: "ignore", stderr: "inherit" });
  if (r.exitCode !== 0) throw new Error(`build of ${entry} failed`);
}
const BIN = join(work, "hub-agent");

// The service, and requests to it over IPC.
type Ready = { url: string; key: string; serverId: string; bundleId: string };
let ready!: (r: Ready) => void;
const started = new Promise<Ready>((r) => (ready = r));
const waiting = new Map<number, (v: unknown) => void>();
let nextId = 0;
// Every process this bench starts is stopped when it ends, also when it fails.
const track = trackChildren();
const service = track(
  Bun.spawn([process.execPath, join(import.meta.dir, "backlog-service.ts")], {
    stdout: "inherit",
    stderr: "inherit",
    ipc(m: { ready?: Ready; id?: number; value?: unknown }) {
      if (m.ready) ready(m.ready);
      else if (m.id !== undefined) waiting.get(m.id)?.(m.value);
    },
  }),
);
// An answer over IPC does not keep this process alive by itself.
const alive = setInterval(() => {}, 1_000);
const ask = <T>(op: string, extra: Record<string, unknown> = {}) =>
  new Promise<T>((resolve, reject) => {
    const id = nextId++;
    const timer = setTimeout(() => reject(new Error(`the service did not answer ${op}`)), 60_000);
    waiting.set(id, (v) => {
      clearTimeout(timer);
      resolve(v as T);
    });
    service.send({ id, op, ...extra });
  });
const sb = await started;

const envOf = (dir: string, extra: Record<string, string> = {}) => ({ ...agentEnv(sb, dir), ...extra });

let players = 0;
const newPlayer = () => String(76561198300000000n + BigInt(++players));

/** A storage directory with `n` bans queued (written as `ban` writes them; the index built as the first one builds it). */
async function backlog(n: number, prefix: string): Promise<string> {
  const { dir, store } = await queuedBans(work, n, { prefix, player: newPlayer, serverbundleId: sb.bundleId });
  for (const q of Object.values(sanctionQueues(store))) await q.verifyIndex();
  // `ban` needs the serverbundle: the server record `run` caches (one `ban` with the service up fetches it too).
  return dir;
}

const queued = (dir: string) => {
  const at = join(dir, "store", "queue", "ban");
  return existsSync(at) ? readdirSync(at).filter((f) => !f.includes(".tmp-")).length : 0;
};

/**
 * What `run` says is left of its round (its progress cache, saved every 2 s during a round; lib/sanctions/drain.ts),
 * or undefined before its first save. Reading it costs the same at any size, where listing the queue's directory
 * costs 4 ms of CPU at 5,000 entries and 6.4 ms at 10,000: listed ten times a second through a whole drain, it alone
 * grew with the square of the backlog, on a 2-core machine whose other core `run`'s file I/O and the service share.
 */
function reported(dir: string): { pid: number; left: number; rate: number } | undefined {
  try {
    const { data } = JSON.parse(readFileSync(join(dir, "store", "cache", "sanctions_drain"), "utf8"));
    return { pid: Number(data.pid), left: Number(data.left), rate: Number(data.rate_per_s) };
  } catch {
    return undefined; // not written yet, or being replaced
  }
}

/**
 * Resolves when the queue of `dir` is empty: its directory listed (the time is not `run`'s word for it) every 100 ms,
 * except while `run` (pid) reports more left than it settles in 3 s (its report is at most 2 s old) and 500 more.
 */
async function emptied(dir: string, pid: number) {
  for (;;) {
    const r = reported(dir);
    const far = r?.pid === pid && r.left > 3 * r.rate + 500;
    if (!far && queued(dir) === 0) return;
    await Bun.sleep(100);
  }
}

/** Wall time of one process to its exit. */
async function timed(cmd: string[], env: Record<string, string>, cwd: string) {
  const t = performance.now();
  const p = track(Bun.spawn(cmd, { env, cwd, stdin: "ignore", stdout: "pipe", stderr: "pipe" }));
  const [code, out, err] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()]);
  return { ms: performance.now() - t, code, out, err };
}

interface Row {
  what: string;
  p50: number;
  p99: number;
  max: number;
  /** The bare program timed alongside (interleaved), so the ratio compares like with like. */
  bare: number[];
  note: string;
}
const rows: Row[] = [];
/** The bare program once, timed: interleaved with every sampled case. */
const bareOnce = async () => (await timed([join(work, "bare")], {}, work)).ms;
/** One timed run of a case; a command's `code` and `err` (its HUB_PHASES line) say where the slowest one waited. */
type Run = { ms: number; code?: number; err?: string };
const sample = (what: string, runs: Run[], bare: number[], note = "") => {
  const ms = runs.map((r) => r.ms);
  const slowest = runs.reduce((a, b) => (b.ms > a.ms ? b : a));
  const [p50, p99, max] = [percentile(ms, 50), percentile(ms, 99), slowest.ms];
  rows.push({ what, p50, p99, max, bare, note: `${note}${note ? "; " : ""}load ${load()}` });
  const where = slowest.err === undefined ? "" : ` (exit ${slowest.code}: ${phases(slowest.err)})`;
  console.error(`${what}: p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${max.toFixed(1)} ms${where}`);
};

/** The moments a command marks (HUB_PHASES=1, cli/runner.ts), as "phase +ms" steps: where a slow one spent its time. */
function phases(stderr: string): string {
  const line = stderr.split("\n").find((l) => l.startsWith("phases "));
  if (!line) return "no phases";
  let before = 0;
  return Object.entries(JSON.parse(line.slice("phases ".length)) as Record<string, number>)
    .map(([phase, at]) => {
      const step = at - before;
      before = at;
      return `${phase} +${step.toFixed(1)}`;
    })
    .join(", ");
}

/** `ban` of a fresh player in `dir`, timed, its phases marked; its exit code must be in `codes`. */
async function ban(dir: string, reason: string, codes: number[]): Promise<Run> {
  const r = await timed([BIN, "ban", newPlayer(), "1h", reason], envOf(dir, { HUB_PHASES: "1" }), dir);
  if (!codes.includes(r.code)) throw new Error(`ban exited ${r.code}: ${r.out}${r.err}`);
  return r;
}

/** `ban` of fresh players, `SAMPLES` times, each after the bare program; exit codes must be in `codes`. */
async function bans(dir: string, reason: string, codes: number[], bare: number[], gapMs = 0) {
  const runs: Run[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    bare.push(await bareOnce());
    runs.push(await ban(dir, reason, codes));
    if (gapMs) await Bun.sleep(gapMs);
  }
  return runs;
}

/** `run` on `dir`; resolves once it takes handed-over entries (the cache "deliverer" names it). */
async function startRun(dir: string, extra: Record<string, string> = {}) {
  const log = join(dir, "run.log");
  const p = track(
    Bun.spawn([BIN, "run"], {
      env: envOf(dir, extra),
      cwd: dir,
      stdin: "ignore",
      stdout: "ignore",
      stderr: Bun.file(log),
    }),
  );
  const deliverer = join(dir, "store", "cache", "deliverer");
  const t = performance.now();
  while (!(existsSync(deliverer) && readFileSync(deliverer, "utf8").includes(`"pid":${p.pid}`))) {
    if (p.exitCode !== null || performance.now() - t > 60_000)
      throw new Error(`run did not get ready: ${existsSync(log) ? readFileSync(log, "utf8") : ""}`);
    await Bun.sleep(20);
  }
  return { proc: p, log };
}

async function stop(run: { proc: ReturnType<typeof Bun.spawn> }) {
  run.proc.kill("SIGTERM");
  await run.proc.exited;
}

/** User + system CPU seconds of a live process (/proc/<pid>/stat, fields 14 and 15, in clock ticks of 1/100 s). */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** `run` from its start until the queue of `dir` is empty; the seconds, and the service's count for `prefix`. */
async function drain(dir: string, prefix: string, n: number, during?: (dir: string) => Promise<void>) {
  const t = performance.now();
  const run = await startRun(dir);
  const side = during?.(dir);
  await emptied(dir, run.proc.pid);
  const s = (performance.now() - t) / 1000;
  await side;
  const cpu = cpuSeconds(run.proc.pid);
  await stop(run);
  console.error(`drained ${n} (${prefix}) in ${s.toFixed(1)} s`);
  const c = await ask<{ bans: number; duplicates: number; order: string[] }>("count", { prefix });
  const seen = new Set(c.order.map((r) => Number(r.slice(prefix.length + 1))));
  const lost = Array.from({ length: n }, (_, i) => i).filter((i) => !seen.has(i)).length;
  // In order: how far a ban was made from its place in the queue (4 players are sent to at once).
  const displacement = Math.max(0, ...c.order.map((r, i) => Math.abs(Number(r.slice(prefix.length + 1)) - i)));
  return { s, cpu, bans: c.bans, duplicates: c.duplicates, lost, displacement, log: readFileSync(run.log, "utf8") };
}

console.log(`backlog bench: ${ENTRIES} entries, ${SAMPLES} samples per case, load ${load()} at start\n`);
const empty = await backlog(0, "none");
const half = await backlog(ENTRIES / 2, "half");
const full = await backlog(ENTRIES, "full");
// Interleaved, one sample of each in turn: the machine's load drifts, and every case sees the same drift.
const bare: number[] = [];
const startup: Record<"empty" | "half" | "full", Run[]> = { empty: [], half: [], full: [] };
for (let i = 0; i < SAMPLES; i++) {
  bare.push(await bareOnce());
  for (const [name, dir] of [
    ["empty", empty],
    ["half", half],
    ["full", full],
  ] as const)
    startup[name].push(await ban(dir, `bench ${name}`, [0]));
}
sample(
  "bare program",
  bare.map((ms) => ({ ms })),
  bare,
);
sample("ban, 0 queued", startup.empty, bare);
sample(`ban, ${ENTRIES / 2} queued`, startup.half, bare);
sample(`ban, ${ENTRIES} queued`, startup.full, bare);

// 5,000, 10,000, then 5,000 again: the load drifts, and the two halves around the whole show by how much.
const d5 = await drain(half, "half", ENTRIES / 2);
const d10 = await drain(full, "full", ENTRIES);
const d5b = await drain(await backlog(ENTRIES / 2, "again"), "again", ENTRIES / 2);

// ban → kick with the service down: the players online in the simulated game, banned one by one.
const kickDir = mkdtempSync(join(work, "kick-"));
const online = Array.from({ length: SAMPLES }, () => newPlayer());
const actions = join(kickDir, "actions.log");
const simPlayers = {
  HUB_GAME_SIM_PLAYERS: online.map((id, i) => `${id}:P${i}`).join(","),
  HUB_GAME_SIM_ACTIONS_LOG: actions,
};
const kickRun = await startRun(kickDir, simPlayers);
await ask("down");
const kicks: Run[] = [];
const kickBare: number[] = [];
for (const id of online) {
  kickBare.push(await bareOnce());
  const at = Date.now();
  const r = await timed([BIN, "ban", id, "1h", "bench kick"], envOf(kickDir), kickDir);
  if (r.code !== 6) throw new Error(`ban with the service down exited ${r.code}: ${r.out}${r.err}`);
  const kick = readFileSync(actions, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { type: string; player: string; at: number })
    .find((a) => a.type === "kick" && a.player === id);
  if (!kick) throw new Error(`${id} was not kicked: ${readFileSync(kickRun.log, "utf8").slice(-2000)}`);
  kicks.push({ ms: kick.at - at });
}
await ask("up");
await stop(kickRun);
sample("ban → kick, service down", kicks, kickBare, "to the kick in the game");

// The same backlog with the service allowing RATE requests per second.
const limited = await backlog(ENTRIES, "limited");
await ask("requests");
await ask("limit", { perSecond: RATE });
// `ban` meanwhile: handed over to run, answered between two players (or after a 429's wait, as the service asks).
let during: Run[] = [];
const duringBare: number[] = [];
const dl = await drain(limited, "limited", ENTRIES, async (dir) => {
  await Bun.sleep(5_000); // into the round
  during = await bans(dir, "bench during", [0, 6], duringBare, 100);
});
sample(`ban, during the drain of ${ENTRIES}`, during, duringBare, `handed over to run, service at ${RATE} req/s`);
const req = await ask<{ requests: number; limited: number }>("requests");
await ask("limit", { perSecond: 0 });

console.log(
  "case".padEnd(34) +
    "p50 ms".padStart(9) +
    "p99 ms".padStart(9) +
    "max ms".padStart(9) +
    "p50 ×bare".padStart(11) +
    "p99 ×bare".padStart(11) +
    "  note",
);
for (const r of rows)
  console.log(
    r.what.padEnd(34) +
      r.p50.toFixed(1).padStart(9) +
      r.p99.toFixed(1).padStart(9) +
      r.max.toFixed(1).padStart(9) +
      (r.p50 / percentile(r.bare, 50)).toFixed(2).padStart(11) +
      (r.p99 / percentile(r.bare, 99)).toFixed(2).padStart(11) +
      `  ${r.note}; bare p50 ${percentile(r.bare, 50).toFixed(1)} ms`,
  );
console.log("");
const line = (what: string, d: Awaited<ReturnType<typeof drain>>, n: number) =>
  console.log(
    `${what.padEnd(34)} ${d.s.toFixed(1).padStart(7)} s  ${d.cpu.toFixed(1).padStart(6)} CPU s  ${(n / d.s).toFixed(0).padStart(5)} bans/s  lost ${d.lost}  duplicates ${d.duplicates}  out of order by at most ${d.displacement}`,
  );
line(`drain ${ENTRIES / 2}`, d5, ENTRIES / 2);
line(`drain ${ENTRIES}`, d10, ENTRIES);
line(`drain ${ENTRIES / 2} again`, d5b, ENTRIES / 2);
const ratio = d10.s / ((d5.s + d5b.s) / 2);
const cpuRatio = d10.cpu / ((d5.cpu + d5b.cpu) / 2);
console.log(
  `${"drain ratio".padEnd(34)} ${ratio.toFixed(2)} wall, ${cpuRatio.toFixed(2)} CPU (${ENTRIES} against the mean of the two ${ENTRIES / 2}; linear: 2.00; at most 2.2)`,
);
line(`drain ${ENTRIES}, service at ${RATE} req/s`, dl, ENTRIES);
console.log(
  `${"".padEnd(34)} ${req.requests} requests, ${req.limited} answered 429: ${((req.requests - req.limited) / dl.s).toFixed(0)} req/s went through (allowed ${RATE})`,
);
console.log(
  `\nload average at the end ${loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}`,
);
const progress = dl.log
  .split("\n")
  .filter((l) => l.includes("delivering the sanction queues") || l.includes("round done"));
const shown = progress.length > 5 ? [...progress.slice(0, 3), "…", ...progress.slice(-2)] : progress;
console.log(`run's log during the limited drain:\n${shown.join("\n")}`);

await ask("stop").catch(() => {});
clearInterval(alive);
if (ratio > 2.2 || [d5, d10, d5b, dl].some((d) => d.lost || d.duplicates)) process.exitCode = 1;
