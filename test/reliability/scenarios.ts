/**
 * Crash scenarios for the sanction queues, shared by test/reliability/sanctions.test.ts and bench/reliability.ts:
 * the compiled binary is SIGKILLed the moment the service has handled its request, its answer still held back, so
 * the attempt is on record and its outcome unknown to the agent. The service misbehaves on that request only (the
 * intent of a process being killed): every other one, an earlier intent sent again by a later process included, is
 * answered as usual. In the window "done" the service carried it out
 * (made the ban or warning, lifted the ban): sending it again would duplicate it. In the window "not done" it did
 * nothing (a 502, as from a gateway that lost the request): an entry settled without sending it again would be lost.
 * Then one delivery round per storage directory (`run --once`) must settle every entry, and the service is counted:
 * lost = an intent the service never carried out, duplicates = one carried out more than once (or an unban that
 * lifted a ban issued after it).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RequestLogEntry, RequestMatch, Sandbox } from "../../lib/sandbox/index.ts";
import { queueBan, sanctionQueues, settleTime } from "../../lib/sanctions/index.ts";
import { openStore } from "../../lib/store/index.ts";
import { spawn } from "../support/procs.ts";

export type Kind = "ban" | "warn" | "unban" | "run";
/** What the service did with the request the process was killed on: carried it out, or nothing (answered 502). */
export type Window = "done" | "not done";

export interface Figures {
  kind: Kind;
  window: Window;
  /** Processes SIGKILLed after the service handled their request. */
  kills: number;
  /** Processes that got away (exited on their own or were not killed in time): must be 0. */
  missed: number;
  duplicates: number;
  lost: number;
}

export interface Setup {
  sb: Sandbox;
  /** The compiled hub-agent. */
  bin: string;
  /** Parallel storage directories (each one a sequence of processes). Default 4. */
  lanes?: number;
  /** Told each scenario's kills once they are over, each process that got away, and the delivery rounds. */
  progress?: (line: string) => void;
}

/**
 * The `mine` of every process running now: the requests the service misbehaves on. Held back, or failed, for every
 * matching write instead, an earlier intent that a later `run` looks up (not found, in "not done") and sends again
 * would time out too: after four timeouts in a row the agent ends its round (the service stopped answering) before
 * the process sends its own, which is then never killed (60 s each).
 */
type Armed = Set<(e: RequestLogEntry) => boolean>;

/** api.timeout of every process here, in seconds: short, so the settle time after a lost answer is too. */
export const TIMEOUT_S = 1;
/** Answers held back this long after the service did the work: far longer than any process lives. */
const HOLD_MS = 60_000;
/** "not done": every armed write (see Armed) is answered 502 without effect, however often it comes. */
const ALWAYS = Number.MAX_SAFE_INTEGER;
/** A process not killed within this is stuck: killed anyway and counted as missed. */
const STUCK_MS = 60_000;

let players = 0;
/** A fresh SteamID64 (a valid individual account) per intent, so every count at the service is per intent. */
export function newPlayer(): string {
  return String(76561198300000000n + BigInt(process.pid % 1000) * 100000n + BigInt(++players));
}

export function laneEnv(sb: Sandbox): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "",
    HUB_API_URL: sb.url,
    HUB_API_KEY: sb.key,
    HUB_API_SERVER_ID: sb.serverId,
    HUB_GAME_BRIDGE: "sim",
    HUB_API_TIMEOUT: String(TIMEOUT_S),
    HUB_STORAGE_DIR: mkdtempSync(join(tmpdir(), "hub-reliability-")),
  };
}

/**
 * Runs `hub-agent args` and SIGKILLs it the moment the service has handled the request that `match` and `mine`
 * pick out. True when it was killed then.
 */
async function killedAt(
  s: Setup,
  args: string[],
  env: Record<string, string>,
  match: RequestMatch,
  mine: (e: RequestLogEntry) => boolean,
  armed: Armed,
): Promise<boolean> {
  armed.add(mine);
  const p = spawn([s.bin, ...args], {
    env,
    cwd: env.HUB_STORAGE_DIR,
    stdin: "ignore",
    stdout: "ignore",
    stderr: "pipe",
  });
  let killed = false;
  const stop = s.sb.control.onHandled(match, (e) => {
    if (!mine(e) || killed) return;
    killed = true;
    p.kill("SIGKILL");
  });
  const stuck = setTimeout(() => p.kill("SIGKILL"), STUCK_MS);
  const stderr = await new Response(p.stderr).text();
  await p.exited;
  clearTimeout(stuck);
  stop();
  armed.delete(mine);
  if (!killed) s.progress?.(`${args.join(" ")}: not killed (missed)`);
  if (!killed && process.env.HUB_RELIABILITY_DEBUG) console.error(stderr);
  return killed && p.signalCode === "SIGKILL";
}

/** Runs `lanes` sequences of `perLane` steps in parallel, each with its own storage directory. */
async function inLanes(
  s: Setup,
  total: number,
  step: (env: Record<string, string>, i: number) => Promise<void>,
): Promise<Record<string, string>[]> {
  const lanes = Math.max(1, Math.min(s.lanes ?? 4, total));
  const envs = Array.from({ length: lanes }, () => laneEnv(s.sb));
  let next = 0;
  await Promise.all(
    envs.map(async (env) => {
      while (next < total) await step(env, next++);
    }),
  );
  return envs;
}

/**
 * One delivery round per storage directory once every uncertain entry there is past its settle time (the agent's
 * own rule: waiting for that moment is waiting for an event, not hoping). Returns how many rounds left work queued.
 */
export async function deliverAll(s: Setup, envs: Record<string, string>[]): Promise<number> {
  let failed = 0;
  for (const env of envs) {
    const store = await openStore({ dir: env.HUB_STORAGE_DIR as string });
    const q = sanctionQueues(store);
    const entries = [...(await q.ban.list()), ...(await q.unban.list()), ...(await q.warning.list())];
    const last = Math.max(0, ...entries.map((e) => e.lastAttemptAt ?? 0));
    const wait = last + settleTime(TIMEOUT_S * 1000) - Date.now();
    if (wait > 0) await Bun.sleep(wait + 50);
    const p = spawn([s.bin, "run", "--once"], {
      env,
      cwd: env.HUB_STORAGE_DIR,
      stdin: "ignore",
      stdout: "ignore",
      stderr: "pipe",
    });
    const stderr = await new Response(p.stderr).text();
    if ((await p.exited) !== 0) {
      failed++;
      if (process.env.HUB_RELIABILITY_DEBUG) console.error(stderr);
    }
  }
  return failed;
}

const userOf = (sb: Sandbox, id: string) => sb.state.findUser(id, "STEAM");

/** The kill phase of a scenario: its storage directories, and the count once they had their delivery round. */
interface Killed {
  envs: Record<string, string>[];
  /** Processes killed as meant, of `n`. */
  kills: number;
  n: number;
  count(failedRounds: number): Figures;
}

/**
 * Holds back the answers of the writes `match` picks out that are `armed` (a process's own, see Armed), and in the
 * window "not done" makes them do nothing (502): the setup of one scenario, after the last one's rules are dropped.
 * Returns the set the scenario's processes arm.
 */
function hold(sb: Sandbox, match: RequestMatch, window: Window): Armed {
  const armed: Armed = new Set();
  const only = { ...match, where: (e: RequestLogEntry) => [...armed].some((mine) => mine(e)) };
  sb.control.reset();
  sb.control.latency(HOLD_MS, only, { after: true });
  if (window === "not done") sb.control.failNext(only, ALWAYS, 502);
  return armed;
}

/** `ban` (or `warn`) processes killed after the service handled the POST; then one round; then count. */
async function createScenario(s: Setup, kind: "ban" | "warn", n: number, window: Window): Promise<Killed> {
  const { sb } = s;
  const path = kind === "ban" ? "/ban/" : "/warning/";
  const armed = hold(sb, { method: "POST", path }, window);
  const intents: { id: string; reason: string }[] = [];
  let kills = 0;
  const envs = await inLanes(s, n, async (env, i) => {
    const id = newPlayer();
    const reason = `reliability ${kind} ${window} ${i}`;
    intents.push({ id, reason });
    const args = kind === "ban" ? ["ban", id, "30m", reason] : ["warn", id, reason];
    const mine = (e: RequestLogEntry) => (e.body as { reason?: string } | null)?.reason === reason;
    if (await killedAt(s, args, env, { method: "POST", path }, mine, armed)) kills++;
  });
  const count = (queued: number): Figures => {
    let duplicates = 0;
    let lost = queued;
    for (const { id, reason } of intents) {
      const user = userOf(sb, id);
      const records = kind === "ban" ? [...sb.state.bans.values()] : [...sb.state.warnings.values()];
      const made = records.filter((r) => r.user_id === user?.id && r.reason === reason).length;
      if (made === 0) lost++;
      duplicates += Math.max(0, made - 1);
    }
    return { kind, window, kills, missed: n - kills, duplicates, lost };
  };
  return { envs, kills, n, count };
}

/**
 * `unban` processes killed after the service handled the PATCH (lifted the player's ban, or not); then a ban is
 * issued on the web (newer than the unban); then one round. Lost: the old ban still active. Duplicate: a second
 * PATCH that lifted something, or the newer ban lifted.
 */
async function unbanScenario(s: Setup, n: number, window: Window): Promise<Killed> {
  const { sb } = s;
  const match = { method: "PATCH", path: /^\/user\/[^/]+\/ban$/ };
  const armed = hold(sb, { method: "PATCH" }, window);
  const cases: { userId: string; old: { id: string; status: string }; newer: { status: string } }[] = [];
  let kills = 0;
  const envs = await inLanes(s, n, async (env, _i) => {
    const id = newPlayer();
    const user = sb.state.addUser({ identifier: id, type: "STEAM", username: `U${id.slice(-4)}` });
    const old = sb.state.addBan({
      user_id: user.id,
      serverbundle_id: sb.bundleId,
      reason: "old",
      created_on: sb.state.now() - 60_000,
    });
    const mine = (e: RequestLogEntry) => e.path === `/user/${user.id}/ban`;
    if (await killedAt(s, ["unban", id], env, match, mine, armed)) kills++;
    // Issued on the web after the unban: the unban must never lift it.
    const newer = sb.state.addBan({
      user_id: user.id,
      serverbundle_id: sb.bundleId,
      reason: "newer",
      created_on: sb.state.now() + 1,
    });
    cases.push({ userId: user.id, old, newer });
  });
  const count = (queued: number): Figures => {
    let duplicates = 0;
    let lost = queued;
    for (const c of cases) {
      // Those the service carried out: a 502 lifted nothing, and the round after it lifts the old ban by its id.
      const lifts = sb.control
        .requests({ method: "PATCH" })
        .filter((r) => r.status < 300 && (r.path === `/user/${c.userId}/ban` || r.path === `/ban/${c.old.id}`));
      if (c.old.status !== "UNBANNED") lost++;
      if (lifts.length > 1 || c.newer.status === "UNBANNED") duplicates++;
    }
    return { kind: "unban", window, kills, missed: n - kills, duplicates, lost };
  };
  return { envs, kills, n, count };
}

/**
 * `hub-agent run` killed after the service handled the POST of a queued ban, restarted with the next one queued
 * (each restart finds the earlier uncertain entries: within their settle time it waits, after it it looks them up,
 * and in "not done" sends them again, answered as usual once their own process is gone); then one round per
 * directory and the count.
 */
async function runScenario(s: Setup, n: number, window: Window): Promise<Killed> {
  const { sb } = s;
  const armed = hold(sb, { method: "POST", path: "/ban/" }, window);
  const intents: { id: string; reason: string }[] = [];
  let kills = 0;
  const envs = await inLanes(s, n, async (env, i) => {
    const id = newPlayer();
    const reason = `reliability run ${window} ${i}`;
    intents.push({ id, reason });
    const store = await openStore({ dir: env.HUB_STORAGE_DIR as string });
    const target = { identifier: id, type: "STEAM", user_id: null, name: "" };
    await queueBan(store, { target, length: 1800, reason, creator: null, serverbundleId: sb.bundleId });
    const mine = (e: RequestLogEntry) => (e.body as { reason?: string } | null)?.reason === reason;
    if (await killedAt(s, ["run"], env, { method: "POST", path: "/ban/" }, mine, armed)) kills++;
  });
  const count = (queued: number): Figures => {
    let duplicates = 0;
    let lost = queued;
    for (const { id, reason } of intents) {
      const user = userOf(sb, id);
      const made = [...sb.state.bans.values()].filter((b) => b.user_id === user?.id && b.reason === reason).length;
      if (made === 0) lost++;
      duplicates += Math.max(0, made - 1);
    }
    return { kind: "run", window, kills, missed: n - kills, duplicates, lost };
  };
  return { envs, kills, n, count };
}

/**
 * Every scenario's kills (`kills[window]` of each kind in each window, one scenario after the other on one
 * sandbox), then one delivery round per storage directory (all after one settle time), then the count.
 */
export async function killScenarios(
  s: Setup,
  kills: Record<Window, number>,
  kinds: Kind[] = ["ban", "warn", "unban", "run"],
): Promise<Figures[]> {
  const killed: Killed[] = [];
  const started = performance.now();
  const seconds = () => ((performance.now() - started) / 1000).toFixed(0);
  for (const window of ["done", "not done"] as const) {
    const n = kills[window];
    if (n > 0)
      for (const kind of kinds) {
        let k: Killed;
        if (kind === "ban" || kind === "warn") k = await createScenario(s, kind, n, window);
        else if (kind === "unban") k = await unbanScenario(s, n, window);
        else k = await runScenario(s, n, window);
        killed.push(k);
        s.progress?.(`${kind} (${window}): ${k.kills} of ${k.n} killed as meant, ${seconds()} s`);
      }
  }
  s.sb.control.reset();
  s.progress?.(`one delivery round in each of ${killed.reduce((sum, k) => sum + k.envs.length, 0)} directories`);
  const failed: number[] = [];
  for (const k of killed) failed.push(await deliverAll(s, k.envs));
  s.progress?.(`delivery rounds over, ${seconds()} s`);
  const figures = killed.map((k, i) => k.count(failed[i] ?? 0));
  // Counted: the storage directories go (a 500-kill run left thousands in the system's temp folder).
  for (const k of killed) for (const env of k.envs) rmSync(env.HUB_STORAGE_DIR!, { recursive: true, force: true });
  return figures;
}

/** One line for docs/reliability.md's figures. */
export function summary(figures: Figures[]): string {
  const parts = figures.map(
    (f) => `${f.kind} (${f.window}): ${f.kills} kills, ${f.duplicates} duplicates, ${f.lost} lost`,
  );
  return `reliability (SIGKILL after the service handled the request, done or not): ${parts.join("; ")}`;
}
