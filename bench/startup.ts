/**
 * Start-up cost of one-shot commands, side by side in one run: the compiled `hub-agent --help`,
 * `hub-agent queue status --json` and `hub-agent ban` (the enqueue path: written to the queue, then one delivery
 * attempt refused at once by a closed port, exit 6; held: a round found no service moments ago, so none; beside a
 * running `run`, which delivers it to the in-memory service and answers; and beside a `run` whose service is down)
 * against a bare compiled Bun program that prints one line, all built with the flags of `npm run build`. Beside them,
 * bench/ban-floor.ts: what disk and network alone cost `ban`'s enqueue path (one durable write, one refused
 * connection), and a delivered ban (the same write, the user lookup, the attempt recorded durably, the ban sent to
 * the in-memory service), with no library and no check. Reports median wall time and peak RSS, their ratios to the
 * bare program (targets: 2× for `queue status`, 2.5× for `ban`), and the wall time's ratio to the floor (a ban
 * delivered beside a running `run` against the delivered floor).
 *
 * Then the phases of `queue status` and `ban`, from the program itself (HUB_PHASES=1: the moments cli/runner.ts and
 * the command mark, ms since the process started), each the median over `runs` more runs: where the time goes.
 *
 * Peak RSS is read through GNU time: a child spawned from Bun inherits Bun's own high-water mark until it
 * execs, so Bun's own resourceUsage overstates small programs. Run: npm run bench:startup [-- --runs N]
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ServerSchema } from "../lib/api/schemas.ts";
import { CACHE_FILE } from "../lib/app/config-cache.ts";
import { queueBan, sanctionQueues } from "../lib/sanctions/index.ts";
import { openStore } from "../lib/store/index.ts";
import examples from "../test/fixtures/api-examples.json";
import { buildCommand } from "../test/cli/binary.ts";

const runs = Number(process.argv[process.argv.indexOf("--runs") + 1]) || 40;
const root = join(import.meta.dir, "..");
const work = mkdtempSync(join(tmpdir(), "hub-bench-"));
const TIME = "/usr/bin/time";
if (!(await Bun.file(TIME).exists())) throw new Error("GNU time is needed for peak RSS: apt-get install time");

const build = (entry: string, out: string) => {
  const r = Bun.spawnSync(buildCommand(entry, out), { cwd: root, stdout: "ignore", stderr: "inherit" });
  if (r.exitCode !== 0) throw new Error(`build of ${entry} failed`);
};
build("cli/main.ts", join(work, "hub-agent"));
build("bench/bare.ts", join(work, "bare"));
build("bench/ban-floor.ts", join(work, "ban-floor"));

const env = {
  PATH: process.env.PATH ?? "",
  HUB_API_URL: "http://127.0.0.1:9/bench/v1",
  HUB_API_KEY: "bench-key-not-used",
  HUB_API_SERVER_ID: "541d1c41-1b58-40fc-8780-70c400ea5686",
  HUB_GAME_BRIDGE: "sim",
  HUB_STORAGE_DIR: join(work, "data"),
};
// `ban` needs the serverbundle: a store with the server record cached, copied afresh (untimed) before each run.
const seeded = join(work, "seeded");
const server = examples["01 GET /server/{server_id}"].response.body;
const seedStore = await openStore({ dir: seeded });
await seedStore.cache("server", ServerSchema).set(server as never);
// A store in use, as an operator's is: its queues' folders and indexes made (by a first ban, delivered since). The
// first entry of a fresh store also creates its folders and flushes the folders holding them (docs/reliability.md).
const queues = sanctionQueues(seedStore);
for (const q of Object.values(queues)) await q.verifyIndex();
const target = { identifier: "76561198000000009", type: "STEAM", user_id: null, name: "" };
const bundleId = server.serverbundle_id as string;
const first = await queueBan(seedStore, {
  target,
  length: 60,
  reason: "seed",
  creator: null,
  serverbundleId: bundleId,
});
await queues.ban.remove(first.id);
/**
 * A case's store, the seeded one again before each run (its queue empty), at the same path: a store in use keeps
 * the checked configuration (lib/app/config-cache.ts), keyed among others by HUB_STORAGE_DIR, so it is kept too.
 */
const freshDir = (name: string) => {
  const dir = join(work, name);
  const cache = join(dir, CACHE_FILE);
  const kept = existsSync(cache) ? readFileSync(cache) : undefined;
  rmSync(dir, { recursive: true, force: true });
  cpSync(seeded, dir, { recursive: true });
  if (kept) writeFileSync(cache, kept, { mode: 0o600 });
  return dir;
};
const banDir = () => freshDir("ban");
/** As banDir, with the note a round that found no service moments ago leaves (lib/sanctions/own-entry.ts). */
const heldDir = () => {
  const dir = freshDir("held");
  const note = { at: Date.now(), url: env.HUB_API_URL, error: "connection refused (bench)" };
  mkdirSync(join(dir, "box", "service"), { recursive: true, mode: 0o700 });
  writeFileSync(join(dir, "box", "service", "unreachable"), JSON.stringify({ v: 1, note }), { mode: 0o600 });
  return dir;
};

/**
 * `ban` beside a running `run`: the in-memory service (`hub-agent sandbox`) and a `run` against it on a store of its
 * own, both until the bench ends. The command hands its entry to `run` and waits for its answer (lib/sanctions/handoff.ts).
 */
const beside = await besideRun(join(work, "hub-agent"), join(work, "beside"));
/** The same with the service down: `run`'s round finds none, and it answers that the ban stays queued. */
const besideDown = await besideRun(join(work, "hub-agent"), join(work, "beside-down"), false);
/** That `run`'s store, as another process opens it (the bench withdraws the entries its runs left: below). */
const besideDownStore = await openStore({ dir: join(work, "beside-down") });

const FLOOR = "ban's floor (disk + network)";
/** The floor of a ban delivered beside a running `run` (bench/ban-floor.ts with the service up). */
const FLOOR_DELIVERED = "ban's floor, delivered";
const BESIDE = "hub-agent ban (beside a running run)";
/** Each case: its argv, its expected exit code, and (ban) the environment prepared before each run (its store). */
const cases: [string, string[], number, (() => Record<string, string> | Promise<Record<string, string>>)?][] = [
  ["bare program", [join(work, "bare")], 0],
  ["hub-agent --help", [join(work, "hub-agent"), "--help"], 0],
  ["hub-agent queue status --json", [join(work, "hub-agent"), "queue", "status", "--json"], 0],
  [
    "hub-agent ban (enqueue)",
    [join(work, "hub-agent"), "ban", "76561198000000001", "1h", "bench", "--json"],
    6,
    () => ({ HUB_STORAGE_DIR: banDir() }),
  ],
  [
    "hub-agent ban (service down, held)",
    [join(work, "hub-agent"), "ban", "76561198000000001", "1h", "bench", "--json"],
    6,
    () => ({ HUB_STORAGE_DIR: heldDir() }),
  ],
  [BESIDE, [join(work, "hub-agent"), "ban", "76561198000000001", "1h", "bench", "--json"], 0, () => beside.env],
  [
    "hub-agent ban (beside run, no service)",
    [join(work, "hub-agent"), "ban", "76561198000000001", "1h", "bench", "--json"],
    6,
    async () => {
      // As the held ban's store holds no other queued ban, neither does this one: the previous runs' entries (all
      // kept, the service being down) are withdrawn first, as `queue drop` would, untimed.
      const queued = sanctionQueues(besideDownStore).ban;
      for (const { id } of await queued.list()) await queued.remove(id);
      return besideDown.env;
    },
  ],
  [FLOOR, [join(work, "ban-floor"), "bench"], 6, () => ({ HUB_STORAGE_DIR: freshDir("floor") })],
  [
    FLOOR_DELIVERED,
    [join(work, "ban-floor"), "bench"],
    0,
    () => ({ ...beside.env, HUB_STORAGE_DIR: freshDir("floor-delivered"), HUB_FLOOR_BUNDLE: beside.bundle }),
  ],
];

const samples = new Map(cases.map(([name]) => [name, { ms: [] as number[], kb: [] as number[] }]));
for (let i = 0; i < runs; i++) {
  // Interleaved, so drift in machine load affects every case alike.
  for (const [name, cmd, expected, prepare] of cases) {
    const runEnv = { ...env, ...(await prepare?.()) };
    const t0 = performance.now();
    const r = Bun.spawnSync([TIME, "-f", "%M", ...cmd], { env: runEnv, stdout: "ignore", stderr: "pipe" });
    const ms = performance.now() - t0;
    if (r.exitCode !== expected) throw new Error(`${name} exited ${r.exitCode}: ${r.stderr.toString()}`);
    const s = samples.get(name)!;
    s.ms.push(ms);
    s.kb.push(Number(r.stderr.toString().trim().split("\n").at(-1)));
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const base = samples.get("bare program")!;
const baseMs = median(base.ms);
const baseKb = median(base.kb);
console.log(`${runs} interleaved runs each (wall time includes spawning GNU time)\n`);
// Against the floor too: what the command costs beyond the disk and network work it cannot avoid.
const floorMs = median(samples.get(FLOOR)!.ms);
const deliveredMs = median(samples.get(FLOOR_DELIVERED)!.ms);
console.log(
  "command".padEnd(40) + "median ms".padStart(10) + "  × bare" + " × floor" + "peak RSS MB".padStart(13) + "  × bare",
);
for (const [name] of cases) {
  const s = samples.get(name)!;
  const ms = median(s.ms);
  const kb = median(s.kb);
  // A ban delivered (beside a running `run`) against the floor of a delivered ban; every other against the enqueue's.
  const floor = name === BESIDE || name === FLOOR_DELIVERED ? deliveredMs : floorMs;
  console.log(
    name.padEnd(40) +
      ms.toFixed(1).padStart(10) +
      `${(ms / baseMs).toFixed(2)}×`.padStart(8) +
      `${(ms / floor).toFixed(2)}×`.padStart(8) +
      (kb / 1024).toFixed(1).padStart(13) +
      `${(kb / baseKb).toFixed(2)}×`.padStart(8),
  );
}

// Where the time goes: each phase (from the previous moment to this one) as the program marks it.
const PHASE_NAMES: Record<string, string> = {
  main: "process start → first line of main.ts",
  loaded: "→ command loaded (argument parser, its module)",
  operation: "→ its operation's modules, until it asks for the configuration",
  config: "→ configuration read and checked",
  session: "→ store, service client, messages",
  resolved: "→ player and serverbundle",
  announced: "→ a `run` beside reached, told whom it bans (desk line)",
  queued: "→ entry written durably (index, entry)",
  delivered: "→ its own delivery round (beside: `run`'s answer)",
  exit: "→ output and exit code",
};
for (const [name, cmd, expected, prepare] of cases.filter(
  ([n]) => n.startsWith("hub-agent ") && n !== "hub-agent --help",
)) {
  const phases = new Map<string, number[]>();
  for (let i = 0; i < runs; i++) {
    const runEnv = { ...env, HUB_PHASES: "1", ...(await prepare?.()) };
    const r = Bun.spawnSync(cmd, { env: runEnv, stdout: "pipe", stderr: "pipe" });
    if (r.exitCode !== expected)
      throw new Error(`${name} exited ${r.exitCode}: ${r.stderr.toString()} ${r.stdout.toString()}`);
    const line = r.stderr
      .toString()
      .split("\n")
      .find((l) => l.startsWith("phases "));
    if (!line) throw new Error(`${name} printed no phases`);
    let previous = 0;
    for (const [phase, at] of Object.entries(JSON.parse(line.slice("phases ".length)) as Record<string, number>)) {
      phases.set(phase, [...(phases.get(phase) ?? []), at - previous]);
      previous = at;
    }
  }
  console.log(`\n${name}: phases, median of ${runs} runs (ms; × the bare program's ${baseMs.toFixed(1)} ms)`);
  for (const [phase, ms] of phases)
    console.log(
      `  ${(PHASE_NAMES[phase] ?? phase).padEnd(50)}${median(ms).toFixed(1).padStart(7)}${`${(median(ms) / baseMs).toFixed(2)}×`.padStart(8)}`,
    );
}
await Promise.all([beside.stop(), besideDown.stop()]);
rmSync(work, { recursive: true, force: true }); // two executables of ~110 MB and a store per ban run

/**
 * Starts the in-memory service and a `run` against it, on `dir`; resolves once `run` takes commands' entries. Without
 * `service`, `run` serves a store seeded with the server record against a closed port instead (the service down).
 */
async function besideRun(hub: string, dir: string, service = true) {
  if (!service) {
    cpSync(seeded, dir, { recursive: true });
    return { ...(await startRun(hub, dir, { HUB_STORAGE_DIR: dir }, [])), bundle: "" };
  }
  // Port 0: the system's free port (the configuration it prints names it), never one another program took.
  const sandbox = Bun.spawn([hub, "sandbox", "--port", "0", "--key", "bench-key"], {
    env: { PATH: env.PATH },
    stdout: "pipe",
    stderr: "inherit",
  });
  let said = "";
  const reader = sandbox.stdout.getReader();
  while (!/server_id = "[^"]+"/.test(said)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the sandbox did not start: ${said}`);
    said += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  void sandbox.stdout.pipeTo(new WritableStream()); // drained, so that it never blocks on a full pipe
  const besideEnv = {
    HUB_API_URL: /url = "([^"]+)"/.exec(said)![1]!,
    HUB_API_KEY: "bench-key",
    HUB_API_SERVER_ID: /server_id = "([^"]+)"/.exec(said)![1]!,
    HUB_STORAGE_DIR: dir,
  };
  const run = await startRun(hub, dir, besideEnv, [sandbox]);
  // The serverbundle the floor program bans in: the one `run` found in its server record.
  const record = JSON.parse(readFileSync(join(dir, "cache", "server"), "utf8")) as {
    data: { serverbundle_id: string };
  };
  return { ...run, bundle: record.data.serverbundle_id };
}

/** `run` on `dir` with `runEnv` over the bench's; resolves once it takes commands' entries, with how to stop it all. */
async function startRun(hub: string, dir: string, runEnv: Record<string, string>, others: Bun.Subprocess[]) {
  const run = Bun.spawn([hub, "run"], { env: { ...env, ...runEnv }, stdout: "ignore", stderr: "ignore" });
  const all = [run, ...others];
  process.on("exit", () => all.forEach((p) => p.kill())); // also when the bench fails half-way
  // `run` says it takes the commands' entries once it watches for them (lib/sanctions/handoff.ts).
  for (let i = 0; !(await Bun.file(join(dir, "cache", "deliverer")).exists()); i++) {
    if (i > 200) throw new Error("the run beside did not start");
    await Bun.sleep(50);
  }
  return {
    env: runEnv,
    stop: async () => {
      for (const p of all) p.kill("SIGTERM");
      await Promise.all(all.map((p) => p.exited));
    },
  };
}
