/**
 * Several game servers on one host (servers.d; docs/configuration.md, "Several servers"): the compiled `hub-agent`
 * (cli/main.ts, built with the flags of `npm run build`) hosting N servers in one `run` process, against N processes
 * of `run --server <name>`, side by side in one bench run, for N = 1, 5, 10 and 30. Each server plays the simulated
 * game with 20 players online, each staying about a simulated hour (20 replaced an hour, every join a new player).
 * Every interval of the shared file's [intervals] is divided by `--scale`, so at ×60 one real second is one
 * simulated minute (a status round a second per server).
 *
 * Measured per case, from `--warmup` seconds after every server has sent its first status until `--seconds` later:
 * RSS, PSS, USS (private clean + dirty) and the RSS's anonymous memory (heaps, the JIT's code; the rest is file-backed:
 * the executable's and libraries' pages) summed over the agent processes, read from /proc/<pid>/smaps_rollup every
 * `--sample` seconds in that window and at its end (the table shows the peak of each sum); user + system CPU
 * seconds from /proc/<pid>/stat at the end, before the stop, less what was spent before the window (the start-up
 * and first seconds' compiling: "start CPU s"), per simulated hour; each server's status rounds as the service
 * received them (the slowest server's mean interval, and the longest gap between two).
 *
 * The fault case (`--fault 10`, 0 to leave it out), in both layouts: one server whose game console hangs (an RCON
 * port the bench opens, which accepts and never answers) and one whose service answers 503 to everything (a tiny
 * server of the bench's); the other servers' players are banned one by one with `hub-agent ban <id> 1h bench
 * --server <name>`, run from the host's directory, and the time from the command's start to the kick in that
 * server's game (its actions_log) gives p50 and p99; their status rounds show whether they kept their interval.
 *
 * The service: one in-memory service (lib/sandbox) in the bench's process for every healthy server of a case, each
 * server its own server record in the seeded bundle (a community's servers sharing bans, as VyHub's bundles are
 * meant), so its requests, a status round above all, are told apart by the server's id. One listener rather than
 * one per server: several sandboxes in one process share its one thread anyway, so they would buy no capacity,
 * only listeners. It must not be the bottleneck: the bench prints the requests it served a second and the CPU the
 * bench's process used meanwhile (the service is nearly all of it), against the agents'.
 *
 * Then (`--reload 1`, the default) the fault case again in one process, with a SIGHUP at 40 % of its window that adds
 * a server, removes the 503 one and changes the hung one's preset (only a start applies it): the bans typed after it,
 * and whether any healthy server's agent started again.
 *
 * Run: npm run bench:host [-- --servers 1,5,10,30 --seconds 120 --scale 60 --fault 10 --reload 1 --bans 5 --sample 5 --warmup 10 --jit 0]
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { createServer, type Socket } from "node:net";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { SPEC_INTERVALS } from "../lib/config/schema.ts";
import { SEED_IDS, startSandbox, type Sandbox } from "../lib/sandbox/index.ts";
import { buildCommand } from "../test/cli/binary.ts";
import { trackChildren } from "./children.ts";
import { percentile } from "./percentile.ts";

const option = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const num = (name: string, fallback: number) => {
  const v = Number(option(name));
  return option(name) !== undefined && Number.isFinite(v) ? v : fallback;
};
const SIZES = (option("servers") ?? "1,5,10,30").split(",").map(Number);
const SECONDS = num("seconds", 120);
const SCALE = num("scale", 60);
const FAULT = num("fault", 10);
const BANS = num("bans", 5);
const SAMPLE = num("sample", 5);
const WARMUP = num("warmup", 10);
/** The fault case again in one process, with a SIGHUP adding, removing and changing a server (`--reload 0`: not). */
const RELOAD = num("reload", 1);
/** `--jit 1`: the agents keep JavaScriptCore's JIT (BUN_JSC_useJIT=true), which a serving `run` turns off. */
const JIT = num("jit", 0);
const ONLINE = 20;
if (SIZES.some((n) => !(n >= 1)) || (FAULT && FAULT < 3)) throw new Error("--servers ≥ 1 each, --fault 0 or ≥ 3");

const root = join(import.meta.dir, "..");
const work = mkdtempSync(join(tmpdir(), "hub-host-"));
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(" ");

// Every process this bench starts is stopped when it ends, also when it fails; the temp dir goes with them.
const track = trackChildren(() => rmSync(work, { recursive: true, force: true }));

const BIN = join(work, "hub-agent");
{
  const r = Bun.spawnSync(buildCommand("cli/main.ts", BIN), { cwd: root, stdout: "ignore", stderr: "inherit" });
  if (r.exitCode !== 0) throw new Error("build of cli/main.ts failed");
}

/** /proc/<pid>/smaps_rollup in MB: RSS, PSS, USS (private clean + dirty); undefined once the process is gone. */
function memory(pid: number): Sums | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
  } catch {
    return undefined;
  }
  const kb = (field: string) => Number(text.match(new RegExp(`^${field}:\\s+(\\d+) kB`, "m"))?.[1] ?? 0);
  return {
    rss: kb("Rss") / 1024,
    pss: kb("Pss") / 1024,
    uss: (kb("Private_Clean") + kb("Private_Dirty")) / 1024,
    anon: kb("Anonymous") / 1024,
  };
}

/** User + system CPU seconds of a live process, all its threads (/proc/<pid>/stat fields 14 and 15, 1/100 s). */
function cpuSeconds(pid: number | "self"): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0; // gone
  }
}

/** A console that accepts connections and never answers (an RCON port of a hung game). */
function hungConsole(): Promise<{ port: number; stop: () => void }> {
  const sockets = new Set<Socket>();
  const server = createServer((s) => {
    sockets.add(s);
    s.on("data", () => {}); // read, never answer
    s.on("error", () => {});
    s.on("close", () => sockets.delete(s));
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({
        port: (server.address() as { port: number }).port,
        stop: () => {
          for (const s of sockets) s.destroy();
          server.close();
        },
      }),
    ),
  );
}

/** A service that answers 503 to everything. */
function failingService() {
  let requests = 0;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: () => {
      requests++;
      return Response.json(
        { detail: { code: "unavailable", msg: "Service unavailable.", detail: {} } },
        { status: 503, headers: { "retry-after": "1" } },
      );
    },
  });
  return { url: `http://127.0.0.1:${server.port}/v1`, requests: () => requests, stop: () => server.stop(true) };
}

type Kind = "healthy" | "hung-console" | "service-503";
interface Server {
  name: string;
  kind: Kind;
  serverId: string;
  /** Players online from the start who are banned in the fault case (the others are generated, coming and going). */
  targets: { id: string; name: string }[];
  actions: string;
}

/** A host's directory: the shared file (service, [intervals] ÷ scale), servers.d with a file per server. */
function writeHost(
  dir: string,
  sb: Sandbox,
  servers: Server[],
  faults: { rconPort?: number; failingUrl?: string },
): void {
  const intervals = Object.entries(SPEC_INTERVALS)
    .map(([k, s]) => `${k} = ${s / SCALE}`)
    .join("\n");
  writeFileSync(
    join(dir, "hub-agent.toml"),
    `[api]\nurl = "${sb.url}"\nkey = "${sb.key}"\n\n[intervals]\n${intervals}\n`,
  );
  mkdirSync(join(dir, "servers.d"));
  for (const s of servers) {
    const game =
      s.kind === "hung-console"
        ? `[game]\nbridge = "rcon"\npreset = "gmod"\n\n[game.rcon]\nport = ${faults.rconPort}\npassword = "bench"\n`
        : `[game]\nbridge = "sim"\n\n[game.sim]\nonline = ${ONLINE - s.targets.length}\nchurn = ${(ONLINE / 3600) * SCALE}\n` +
          `players = [${s.targets.map((t) => `"${t.id}:${t.name}"`).join(", ")}]\nactions_log = "${s.actions}"\n`;
    const api = `[api]\nserver_id = "${s.serverId}"\n${s.kind === "service-503" ? `url = "${faults.failingUrl}"\n` : ""}`;
    writeFileSync(join(dir, "servers.d", `${s.name}.toml`), `${api}\n${game}`);
  }
}

interface Sums {
  rss: number;
  pss: number;
  uss: number;
  /** Of the RSS, anonymous memory (heaps, the JIT's code, stacks); the rest is file-backed. */
  anon: number;
}
const SUMS = ["rss", "pss", "uss", "anon"] as const;
interface Row {
  name: string;
  servers: number;
  processes: number;
  peak: Sums;
  startCpu: number;
  cpuPerHour: number;
  /** Of the healthy servers' status rounds in the window: the slowest one's mean interval, the longest gap. */
  meanGapSimSeconds: number;
  maxGapSimSeconds: number;
  requestsPerSecond: number;
  benchCpuShare: number;
  load: string;
  notes: string[];
  kicks?: number[];
  /** With a SIGHUP in the window: the kicks of bans typed after it. */
  kicksAfterReload?: number[];
  banExits?: number[];
  banFailures?: string[];
}

let serial = 0;

/** One case: N servers (and the fault case's two) in one process or one process each. */
async function runCase(n: number, layout: "one" | "each", fault: boolean, reload = false): Promise<Row> {
  const loadAtStart = load();
  const dir = mkdtempSync(join(work, `case-${++serial}-`));
  const sb = await startSandbox({ requestLog: 100 });
  const hung = fault ? await hungConsole() : undefined;
  const failing = fault ? failingService() : undefined;
  const healthyCount = fault ? n - 2 : n;
  const servers: Server[] = [];
  for (let i = 0; i < n; i++) {
    const kind: Kind = i < healthyCount ? "healthy" : i === healthyCount ? "hung-console" : "service-503";
    const name = kind === "healthy" ? `s${String(i + 1).padStart(2, "0")}` : kind;
    const record = sb.state.addServer({ name, serverbundle_id: SEED_IDS.serverbundle });
    const targets =
      fault && kind === "healthy"
        ? Array.from({ length: BANS }, (_, k) => ({
            id: String(76561198500000000n + BigInt(i * 100 + k)),
            name: `Target${i}x${k}`,
          }))
        : [];
    servers.push({ name, kind, serverId: record.id, targets, actions: join(dir, `${name}-actions.jsonl`) });
  }
  writeHost(dir, sb, servers, { rconPort: hung?.port, failingUrl: failing?.url });
  const healthy = servers.filter((s) => s.kind === "healthy");

  // Each server's status rounds (PATCH /server/<id>) as the service received them, and every request served.
  const rounds = new Map<string, number[]>(servers.map((s) => [s.serverId, []]));
  let served = 0;
  const stopCounting = sb.control.onHandled({}, (e) => {
    served++;
    if (e.method === "PATCH") rounds.get(e.path.slice("/server/".length))?.push(performance.now());
  });

  const spawnRun = (args: string[], log: string) =>
    track(
      Bun.spawn([BIN, "run", ...args, "--log-format", "json"], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? "", ...(JIT ? { BUN_JSC_useJIT: "true" } : {}) },
        stdin: "ignore",
        stdout: "ignore",
        stderr: Bun.file(log),
      }),
    );
  const procs =
    layout === "one"
      ? [{ proc: spawnRun([], join(dir, "host.log")), log: join(dir, "host.log") }]
      : servers.map((s) => {
          const log = join(dir, `${s.name}.log`);
          return { proc: spawnRun(["--server", s.name], log), log };
        });
  const logs = () => procs.map((p) => (existsSync(p.log) ? readFileSync(p.log, "utf8") : "")).join("");
  const label = `${reload ? "fault + SIGHUP: " : fault ? "fault: " : ""}${layout === "one" ? "one process" : "a process each"}, ${n} server${n === 1 ? "" : "s"}`;
  console.error(`${label}: starting (load ${loadAtStart})`);

  try {
    // Ready: every healthy server has sent a status.
    const deadline = performance.now() + 60_000 + n * 2_000;
    while (healthy.some((s) => rounds.get(s.serverId)!.length === 0)) {
      const dead = procs.find((p) => p.proc.exitCode !== null);
      if (dead || performance.now() > deadline)
        throw new Error(
          `${label}: not every server got ready${dead ? ` (a process exited ${dead.proc.exitCode})` : ""}:\n${logs().slice(-3000)}`,
        );
      await Bun.sleep(50);
    }
    // Measured from WARMUP s after that: the first seconds' compiling is the start's, not a server-hour's.
    await Bun.sleep(WARMUP * 1000);
    const t0 = performance.now();
    const startCpu = procs.reduce((sum, p) => sum + cpuSeconds(p.proc.pid), 0);
    const benchCpu0 = cpuSeconds("self");
    const served0 = served;
    const samples: Sums[] = [];
    const sample = () => {
      const sums = { rss: 0, pss: 0, uss: 0, anon: 0 };
      for (const p of procs) {
        const m = memory(p.proc.pid);
        if (m) for (const k of SUMS) sums[k] += m[k];
      }
      samples.push(sums);
    };
    const sampler = setInterval(sample, SAMPLE * 1000);

    // With `reload`, at 40 % of the window: a server added, the 503 one removed, the hung one changed where only a
    // start applies (its preset), then SIGHUP; the healthy servers' bans after it are kept apart.
    let reloadedAt = Infinity;
    const reloading = (async () => {
      if (!reload) return;
      await Bun.sleep(SECONDS * 400);
      const added = sb.state.addServer({ name: "added", serverbundle_id: SEED_IDS.serverbundle });
      const file = (name: string) => join(dir, "servers.d", `${name}.toml`);
      writeFileSync(
        file("added"),
        `[api]\nserver_id = "${added.id}"\n\n[game]\nbridge = "sim"\n\n[game.sim]\nonline = ${ONLINE}\n`,
      );
      unlinkSync(file("service-503"));
      writeFileSync(file("hung-console"), readFileSync(file("hung-console"), "utf8").replace('"gmod"', '"rust"'));
      reloadedAt = performance.now();
      procs[0]!.proc.kill("SIGHUP");
    })();

    // The fault case: the healthy servers' players banned one by one, spread over the window.
    const kicks: number[] = [];
    const kicksAfterReload: number[] = [];
    const banExits: number[] = [];
    const banFailures: string[] = [];
    const banning = (async () => {
      if (!fault) return;
      // Round-robin over the servers: each server's first target, then each one's second, …
      const order = Array.from({ length: BANS }, (_, k) => healthy.map((s) => ({ s, t: s.targets[k]! }))).flat();
      const gap = (SECONDS * 800) / (order.length + 1);
      for (const { s, t } of order) {
        await Bun.sleep(gap);
        const at = Date.now();
        const started = performance.now();
        const p = track(
          Bun.spawn([BIN, "ban", t.id, "1h", "bench", "--server", s.name], {
            cwd: dir,
            env: { PATH: process.env.PATH ?? "" },
            stdin: "ignore",
            stdout: "pipe",
            stderr: "pipe",
          }),
        );
        const [code, out, err] = await Promise.all([
          p.exited,
          new Response(p.stdout).text(),
          new Response(p.stderr).text(),
        ]);
        banExits.push(performance.now() - started);
        if (code !== 0) banFailures.push(`${s.name} ${t.id}: exit ${code} ${(out + err).trim().slice(0, 300)}`);
        const until = performance.now() + 30_000;
        for (;;) {
          const kick = existsSync(s.actions)
            ? readFileSync(s.actions, "utf8")
                .split("\n")
                .filter(Boolean)
                .map((l) => JSON.parse(l) as { type: string; player?: string; at: number })
                .find((a) => a.type === "kick" && a.player === t.id)
            : undefined;
          if (kick) {
            kicks.push(kick.at - at);
            if (started > reloadedAt) kicksAfterReload.push(kick.at - at);
            break;
          }
          if (performance.now() > until) {
            banFailures.push(`${s.name} ${t.id}: no kick within 30 s`);
            break;
          }
          await Bun.sleep(10);
        }
      }
    })();

    await Bun.sleep(SECONDS * 1000);
    await banning;
    await reloading;
    clearInterval(sampler);
    sample();
    const window = (performance.now() - t0) / 1000;
    const endCpu = procs.reduce((sum, p) => sum + cpuSeconds(p.proc.pid), 0);
    const benchCpu = cpuSeconds("self") - benchCpu0;
    const t1 = performance.now();
    const notes: string[] = [];
    const exited = procs.filter((p) => p.proc.exitCode !== null);
    if (exited.length) notes.push(`${exited.length} process(es) exited during the run`);

    // Status rounds of the healthy servers in the window: the slowest one's mean interval, the longest gap.
    let meanGap = 0;
    let maxGap = 0;
    let gapAt = "";
    for (const s of healthy) {
      const times = rounds.get(s.serverId)!.filter((t) => t >= t0 && t <= t1);
      meanGap = Math.max(meanGap, times.length > 1 ? (times.at(-1)! - times[0]!) / (times.length - 1) : Infinity);
      for (let i = 1; i < times.length; i++)
        if (times[i]! - times[i - 1]! > maxGap) {
          maxGap = times[i]! - times[i - 1]!;
          gapAt = `${s.name} at ${((times[i - 1]! - t0) / 1000).toFixed(0)} s`;
        }
    }
    if (maxGap > (2 * SPEC_INTERVALS.status * 1000) / SCALE) notes.push(`the longest gap: ${gapAt}`);
    const restarts = (logs().match(/starting it again in/g) ?? []).length;
    if (restarts) notes.push(`${restarts} restart(s) of a server's agent in the host`);
    if (failing) notes.push(`${failing.requests()} requests to the 503 service`);
    if (reload) {
      // Every healthy server's agent started once: the SIGHUP left them running as they were.
      const started = healthy.map(
        (s) => (logs().match(new RegExp(`"tag":"${s.name}","msg":"ready"`, "g")) ?? []).length,
      );
      notes.push(`after the SIGHUP, healthy servers started again: ${started.filter((k) => k > 1).length}`);
      notes.push(`"added" ready: ${/"tag":"added","msg":"ready"/.test(logs())}`);
    }

    const peak = { rss: 0, pss: 0, uss: 0, anon: 0 };
    for (const s of samples) for (const k of SUMS) peak[k] = Math.max(peak[k], s[k]);
    return {
      name: label,
      servers: n,
      processes: procs.length,
      peak,
      startCpu,
      cpuPerHour: ((endCpu - startCpu) / window) * (3600 / SCALE),
      meanGapSimSeconds: (meanGap / 1000) * SCALE,
      maxGapSimSeconds: (maxGap / 1000) * SCALE,
      requestsPerSecond: (served - served0) / window,
      benchCpuShare: benchCpu / window,
      load: `${loadAtStart} → ${load()}`,
      notes,
      ...(fault ? { kicks, banExits, banFailures } : {}),
      ...(reload ? { kicksAfterReload } : {}),
    };
  } finally {
    stopCounting();
    for (const p of procs) p.proc.kill("SIGTERM");
    const stopped = await Promise.race([
      Promise.all(procs.map((p) => p.proc.exited)).then(() => true),
      Bun.sleep(20_000).then(() => false),
    ]);
    if (!stopped) {
      console.error(`${label}: not stopped 20 s after SIGTERM; killed`);
      for (const p of procs) p.proc.kill("SIGKILL");
      await Promise.all(procs.map((p) => p.proc.exited));
    }
    const codes = procs.map((p) => p.proc.exitCode);
    if (codes.some((c) => c !== 0)) console.error(`${label}: exit codes ${codes.join(",")}`);
    hung?.stop();
    failing?.stop();
    await sb.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(
  `bench:host ${process.argv.slice(2).join(" ")}\n${new Date().toISOString()}, load average ${load()} at start; ` +
    `intervals ÷${SCALE}, ${SECONDS} s a case (${(SECONDS * SCALE) / 3600} simulated h), ${ONLINE} players a server\n`,
);
const rows: Row[] = [];
for (const n of SIZES) for (const layout of ["one", "each"] as const) rows.push(await runCase(n, layout, false));
if (FAULT) for (const layout of ["one", "each"] as const) rows.push(await runCase(FAULT, layout, true));
if (FAULT && RELOAD) rows.push(await runCase(FAULT, "one", true, true));

const mb = (x: number) => x.toFixed(1).padStart(8);
console.log(
  "case".padEnd(34) +
    "procs".padStart(6) +
    "RSS MB".padStart(8) +
    "PSS MB".padStart(8) +
    "USS MB".padStart(8) +
    "anon MB".padStart(8) +
    "start CPU s".padStart(12) +
    "CPU s/sim h".padStart(12) +
    "/server".padStart(8) +
    "status".padStart(8) +
    "max gap".padStart(8) +
    "req/s".padStart(7) +
    "bench CPU".padStart(10) +
    "  load",
);
for (const r of rows)
  console.log(
    r.name.padEnd(34) +
      String(r.processes).padStart(6) +
      mb(r.peak.rss) +
      mb(r.peak.pss) +
      mb(r.peak.uss) +
      mb(r.peak.anon) +
      r.startCpu.toFixed(2).padStart(12) +
      r.cpuPerHour.toFixed(2).padStart(12) +
      (r.cpuPerHour / r.servers).toFixed(2).padStart(8) +
      `${r.meanGapSimSeconds.toFixed(1)} s`.padStart(8) +
      `${r.maxGapSimSeconds.toFixed(0)} s`.padStart(8) +
      r.requestsPerSecond.toFixed(0).padStart(7) +
      `${(r.benchCpuShare * 100).toFixed(0)}%`.padStart(10) +
      `  ${r.load}${r.notes.length ? `; ${r.notes.join("; ")}` : ""}`,
  );
console.log(
  "\nRSS, PSS, USS (private), anon (the RSS's anonymous memory): the peak of each sum over the agent processes " +
    "(sampled every " +
    `${SAMPLE} s and at the end); CPU: user + system from every server's first status ` +
    `after a warm-up of ${WARMUP} s, per simulated hour; status: the mean interval between the status rounds of the ` +
    `slowest healthy server (the setting: ${SPEC_INTERVALS.status} s), max gap: the longest between two rounds of any, ` +
    "both simulated; req/s: the in-memory service's; bench CPU: the bench's " +
    "process (the service), share of one core\n",
);

const normal = rows.filter((r) => !r.kicks);
const of = (layout: "one" | "each", n: number) =>
  normal.find((r) => r.servers === n && r.name.startsWith(layout === "one" ? "one" : "a process"));
const lo = Math.min(...SIZES);
const hi = Math.max(...SIZES);
let failed = false;
if (hi > lo)
  for (const layout of ["one", "each"] as const) {
    const [a, b] = [of(layout, lo)!, of(layout, hi)!];
    const slope = (k: keyof Sums) => (b.peak[k] - a.peak[k]) / (hi - lo);
    const met = layout === "one" ? (slope("rss") <= 6 ? " (target ≤ 6 MB: met)" : " (target ≤ 6 MB: not met)") : "";
    if (layout === "one" && slope("rss") > 6) failed = true;
    console.log(
      `${layout === "one" ? "in one process" : "a process each"}: each extra server adds ${slope("rss").toFixed(1)} MB RSS, ` +
        `${slope("pss").toFixed(1)} MB PSS, ${slope("uss").toFixed(1)} MB USS, of the RSS ${slope("anon").toFixed(1)} MB ` +
        `anonymous (from ${lo} to ${hi} servers)${met}`,
    );
  }
const alone = of("one", 1) ?? of("each", 1);
for (const n of SIZES) {
  const one = of("one", n)!;
  const each = of("each", n)!;
  const perServer = one.cpuPerHour / n;
  const ratio = alone ? perServer / alone.cpuPerHour : NaN;
  if (ratio > 2.5) failed = true;
  console.log(
    `${n} server${n === 1 ? "" : "s"}: CPU per server-hour in one process ${perServer.toFixed(2)} s` +
      (alone
        ? `, ÷ one server's alone ${ratio.toFixed(2)}× (target ≤ 2.5×: ${ratio <= 2.5 ? "met" : "not met"})`
        : "") +
      `, ÷ a process each at ${n} ${(perServer / (each.cpuPerHour / n)).toFixed(2)}×`,
  );
}
for (const r of rows.filter((r) => r.kicks)) {
  const k = r.kicks!;
  console.log(
    `\n${r.name} (${FAULT - 2} healthy, one console hung, one service answering 503): ban → kick ` +
      `p50 ${percentile(k, 50).toFixed(0)} ms, p99 ${percentile(k, 99).toFixed(0)} ms over ${k.length} kicks ` +
      `(the slowest: ${[...k]
        .sort((a, b) => b - a)
        .slice(0, 3)
        .map((x) => x.toFixed(0))
        .join(", ")} ms); ` +
      `ban's exit p50 ${percentile(r.banExits!, 50).toFixed(0)} ms; healthy servers' status every ` +
      `${r.meanGapSimSeconds.toFixed(1)} simulated s at the slowest (the setting: ${SPEC_INTERVALS.status}), ` +
      `longest gap ${r.maxGapSimSeconds.toFixed(0)} s` +
      (r.kicksAfterReload
        ? `; the bans typed after the SIGHUP (a server added, one removed, one restarted): ban → kick p50 ` +
          `${percentile(r.kicksAfterReload, 50).toFixed(0)} ms, p99 ${percentile(r.kicksAfterReload, 99).toFixed(0)} ms over ` +
          `${r.kicksAfterReload.length} kicks; ${r.notes.filter((x) => x.includes("SIGHUP") || x.includes("added")).join("; ")}`
        : "") +
      (r.banFailures!.length ? `\n  failures: ${r.banFailures!.join("\n  ")}` : ""),
  );
  if (r.banFailures!.length) failed = true;
}
console.log(`\nload average at the end ${load()}`);
if (failed) process.exitCode = 1;
