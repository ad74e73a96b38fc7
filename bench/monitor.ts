/**
 * What one request to the status page's /status.json and to /metrics costs a `run`, with an empty store and with
 * 10,000 queued entries, side by side in one run: the real monitor (bench/monitor-serve.ts, compiled) in its own
 * process, its CPU time (user + system, all threads, from /proc/<pid>/stat) over batches of requests, requests
 * interleaved between the cases. Beside them: 10,000 entries with one more added by another process before each
 * request (the queue is listed again, at most once per second), and 10,000 entries read whole at every request,
 * as before the run kept its queue counts. Target: under 5 ms per request with 10,000 entries.
 *
 * Run: npm run bench:monitor [-- --requests 200]
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { SYNC_MS } from "../lib/monitor/queue-counts.ts";
import { queueBan } from "../lib/sanctions/queue.ts";
import { openStore } from "../lib/store/index.ts";
import { buildCommand } from "../test/cli/binary.ts";

const arg = (name: string, fallback: number) => Number(process.argv[process.argv.indexOf(`--${name}`) + 1]) || fallback;
const requests = arg("requests", 200);
const ENTRIES = 10_000;
/** Requests per batch: /proc counts CPU in ticks of 10 ms, so a batch must take several. */
const BATCH = 25;
const TICK_MS = 10; // CLK_TCK is 100 on Linux

const root = join(import.meta.dir, "..");
const work = mkdtempSync(join(tmpdir(), "hub-bench-monitor-"));
const serve = join(work, "monitor-serve");
const built = Bun.spawnSync(buildCommand("bench/monitor-serve.ts", serve), { cwd: root, stderr: "inherit" });
if (built.exitCode !== 0) throw new Error("build of bench/monitor-serve.ts failed");

const target = { id: "", type: "STEAM" as const, user_id: null, name: "" };
async function fill(dir: string, n: number) {
  const store = await openStore({ dir, fsync: false });
  for (let i = 0; i < n; i++) {
    const identifier = String(76561198000000000n + BigInt(i));
    await queueBan(store, {
      target: { ...target, identifier, name: `Player${i}` },
      length: null,
      reason: "bench",
      creator: null,
      serverbundleId: "bench",
    });
  }
  return store;
}

interface Server {
  name: string;
  pid: number;
  url: string;
  stop(): void;
}
const servers: Server[] = [];
async function start(name: string, dir: string, env: Record<string, string> = {}): Promise<Server> {
  const p = Bun.spawn([serve], { env: { PATH: process.env.PATH ?? "", HUB_STORAGE_DIR: dir, ...env }, stdout: "pipe" });
  const reader = p.stdout.getReader();
  let out = "";
  while (!out.includes("\n")) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`${name}: the monitor exited before listening`);
    out += new TextDecoder().decode(value);
  }
  const server = { name, pid: p.pid, url: out.trim(), stop: () => p.kill() };
  servers.push(server);
  await get(server, "metrics"); // the first request waits for the queues to be counted
  return server;
}

/** User + system CPU of the process so far, in ms. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS; // utime, stime (fields 14 and 15)
}

async function get(s: Server, path: string): Promise<number> {
  const t = performance.now();
  const res = await fetch(s.url + path);
  if (!res.ok) throw new Error(`${s.name} /${path}: HTTP ${res.status}`);
  await res.arrayBuffer();
  return performance.now() - t;
}

/** CPU ms and wall ms of each request, summed per case and path. */
type Tally = { cpu: number; n: number; walls: number[] };
const results = new Map<string, Tally>();
const tally = (key: string) => results.get(key) ?? results.set(key, { cpu: 0, n: 0, walls: [] }).get(key)!;

async function batch(s: Server, path: string, n: number, before?: () => Promise<void>) {
  const t = tally(`${s.name} ${path}`);
  for (let i = 0; i < n; i++) {
    await before?.();
    const cpu = cpuMs(s.pid);
    t.walls.push(await get(s, path));
    t.cpu += cpuMs(s.pid) - cpu;
    t.n++;
  }
}

const PATHS = ["metrics", "status.json"];
const load = [loadavg()[0]!];
try {
  const emptyDir = join(work, "empty");
  const fullDir = join(work, "full");
  await fill(emptyDir, 0);
  const full = await fill(fullDir, ENTRIES);
  const empty = await start("empty store", emptyDir);
  const kept = await start(`${ENTRIES.toLocaleString("en")} entries`, fullDir);
  const readAll = await start(`${ENTRIES.toLocaleString("en")} entries, each request reads them (before)`, fullDir, {
    BENCH_READ_ALL: "1",
  });

  for (let done = 0; done < requests; done += BATCH)
    for (const s of [empty, kept]) for (const path of PATHS) await batch(s, path, BATCH);
  // Slow: a few requests, interleaved with the others' last batches.
  for (let i = 0; i < 3; i++) for (const path of PATHS) await batch(readAll, path, 2);

  // Another process adds a ban before each request, which comes after the once-a-second look at the queues.
  const changing = { ...kept, name: `${ENTRIES.toLocaleString("en")} entries, one more before each request` };
  const pause = () => new Promise((r) => setTimeout(r, SYNC_MS + 50));
  let added = 0;
  const addOne = async () => {
    await queueBan(full, {
      target: { ...target, identifier: String(76561199000000000n + BigInt(added++)), name: "Late" },
      length: null,
      reason: "bench",
      creator: null,
      serverbundleId: "bench",
    });
    await pause();
  };
  for (let i = 0; i < 10; i++) for (const path of PATHS) await batch(changing, path, 1, addOne);
  load.push(loadavg()[0]!);

  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
  const names = [empty.name, kept.name, changing.name, readAll.name];
  const base = (path: string) => tally(`${empty.name} ${path}`);
  console.log(
    `load average ${load.map((l) => l.toFixed(1)).join(" → ")} (1 min); CPU is user + system of the monitor's ` +
      `process over all its requests (ticks of ${TICK_MS} ms), wall time is the median seen by the client\n`,
  );
  const head = ["case".padEnd(58)];
  for (const path of PATHS) head.push(`/${path} CPU ms`.padStart(22), "× empty".padStart(8), "wall ms".padStart(9));
  console.log(head.join(""));
  for (const name of names) {
    const row = [name.padEnd(58)];
    for (const path of PATHS) {
      const t = tally(`${name} ${path}`);
      const cpu = t.cpu / t.n;
      const ratio = cpu / (base(path).cpu / base(path).n);
      row.push(cpu.toFixed(2).padStart(22), `${ratio.toFixed(1)}×`.padStart(8), median(t.walls).toFixed(2).padStart(9));
    }
    console.log(`${row.join("")}   (${tally(`${name} metrics`).n} requests each)`);
  }
} finally {
  for (const s of servers) s.stop();
  rmSync(work, { recursive: true, force: true });
}
