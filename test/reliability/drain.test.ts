/**
 * Draining a backlog after an outage, with the compiled binary: bans queued while VyHub was down, then `run` against
 * a service that allows a fixed number of requests per second (429 with Retry-After beyond it, as real services
 * do). Every ban is made once, in order; no request goes out while the service asked to wait, and the drain learns
 * the limit instead of meeting it every second; `status` and the log
 * say how far the round is; a `ban` typed meanwhile is handed to `run` and answered at once. Then `run` is SIGKILLed
 * at random moments of a drain and restarted, five times: still each ban exactly once. (npm run bench:backlog drains
 * 5,000 and 10,000.)
 */
import { expect, test } from "bun:test";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Sandbox } from "../../lib/sandbox/index.ts";
import { sanctionQueues } from "../../lib/sanctions/index.ts";
import { openStore } from "../../lib/store/index.ts";
import { hubBinary, hubInBackground } from "../cli/binary.ts";
import { queuedBans } from "../support/backlog.ts";
import { useSandbox } from "../support/sandbox.ts";
import { until } from "../support/until.ts";

let sb: Sandbox;
useSandbox((s) => (sb = s));

let players = 0;
const player = () => String(76561198700000000n + BigInt(process.pid % 1000) * 10_000n + BigInt(++players));

/** A storage directory with `n` bans queued (as `ban` leaves them while the service is down). */
async function backlog(n: number, prefix: string) {
  const { dir } = await queuedBans(tmpdir(), n, { prefix, player, serverbundleId: sb.bundleId });
  const env = {
    HUB_API_URL: sb.url,
    HUB_API_KEY: sb.key,
    HUB_API_SERVER_ID: sb.serverId,
    HUB_GAME_BRIDGE: "sim",
    HUB_STORAGE_DIR: join(dir, "store"),
    HUB_API_TIMEOUT: "2",
  };
  return { dir, env, queue: sanctionQueues(await openStore({ dir: env.HUB_STORAGE_DIR, sweep: false })).ban };
}

/** The bans at the service for `prefix`: how often each intent was made, and the queue positions in the order made. */
function made(prefix: string) {
  const order = [...sb.state.bans.values()]
    .filter((b) => b.reason?.startsWith(`${prefix} `))
    .map((b) => Number(b.reason!.slice(prefix.length + 1)));
  const times = new Map<number, number>();
  for (const i of order) times.set(i, (times.get(i) ?? 0) + 1);
  return { order, times };
}

test("400 queued bans at 40 requests/s: each made once, in order, no request while asked to wait; progress shown; a ban meanwhile answered at once", async () => {
  const N = 400;
  const { dir, env, queue } = await backlog(N, "drain");
  sb.control.reset();
  sb.control.clearRequests();
  sb.control.limitRate(40); // below what the agent manages here, so the limit is met
  const run = await hubInBackground(["run"], { env, cwd: dir });
  try {
    await until(() => made("drain").order.length >= 100, "the drain to be under way", { timeoutMs: 60_000 });
    const status = JSON.parse((await hubBinary(["status", "--json"], { env, cwd: dir })).stdout);
    expect(status.sanctions_drain).toMatchObject({ state: "running", total: N });
    expect(status.sanctions_drain.left).toBeGreaterThan(0);
    expect(status.sanctions_drain.rate_per_s).toBeGreaterThan(0);
    // What an operator reads: entries left, the rate, the time to empty at that rate.
    expect((await hubBinary(["status"], { env, cwd: dir })).stdout).toMatch(
      /\n +delivering now: [\d,]+ left, [\d.]+\/s \([\d,]+ of 400 settled\), about (\d+ s|\d+m \d+s) to go/,
    );

    // Handed to `run` and answered at once: delivered, or, when that moment falls in a pause VyHub asked for (a 429's
    // Retry-After, which the test does not control: on a busy machine the drain meets the limit more often), queued
    // with the pause named, and sent by `run` after it. Either way it reaches VyHub once (below).
    const ban = await hubBinary(["ban", player(), "1h", "typed during the drain", "--json"], { env, cwd: dir });
    const left = await queue.size();
    const answer = JSON.parse(ban.stdout);
    if (answer.status === "queued")
      expect([ban.code, answer.error]).toEqual([
        6,
        expect.stringMatching(/^VyHub asked to wait until \S+ \(rate limit\)/),
      ]);
    else expect([ban.code, answer.status]).toEqual([0, "delivered"]);
    expect(left).toBeGreaterThan(0);

    await until(() => made("drain").order.length >= N, "every ban at the service", {
      timeoutMs: 120_000,
      everyMs: 100,
      diagnostics: () => run.stderr.text().slice(-3000),
    });
    await until(() => /delivery round done: 401 of 401 settled/.test(run.stderr.text()), "the round's last line");
  } finally {
    run.proc.kill("SIGTERM");
    await run.proc.exited;
  }
  const { order, times } = made("drain");
  expect([...sb.state.bans.values()].filter((b) => b.reason === "typed during the drain")).toHaveLength(1);
  expect([...times.values()].filter((n) => n !== 1)).toEqual([]); // no duplicate
  expect(times.size).toBe(N); // none lost
  // In order: four players are sent to at once, and a rate-limited entry goes again after its wait.
  expect(Math.max(...order.map((q, i) => Math.abs(q - i)))).toBeLessThanOrEqual(16);
  expect(await queue.size()).toBe(0);

  // The work per ban does not grow with the backlog: three requests (the user looked up, made, the ban; a user
  // lookup again after a 429), and the ban list, whose size grows with every ban delivered, fetched a few times a
  // round (at the start, after the ban typed meanwhile, after the round), never once per ban or per player.
  const all = sb.control.requests();
  const answered = all.filter((r) => r.status !== 429);
  const lists = answered.filter((r) => r.method === "GET" && /^\/server\/bundle\/[^/]+\/ban\/?$/.test(r.path));
  expect(lists.length).toBeLessThanOrEqual(4);
  expect(answered.length).toBeLessThanOrEqual(3 * (N + 1) + (all.length - answered.length) + 10);

  // Honoured: after a 429 (Retry-After 1 s) nothing new reached the endpoint it refused until the second was over,
  // apart from requests already on their way when it was answered.
  const log = sb.control.requests();
  const endpoint = (r: { method: string; path: string }) => `${r.method} ${r.path.replace(/\/[^/]*\d[^/]*/g, "/{id}")}`;
  const limited = log.filter((r) => r.status === 429);
  expect(limited.length).toBeGreaterThan(0);
  // The drain learns the limit from its first 429s and keeps under it (lib/pace.ts LearnedPace): the limit is met in
  // a few of the drain's ~30 seconds (3–5 in most runs here, 9 in one of 10 on a loaded machine), not in nearly
  // every one (26 without the learned pace), so a ban typed meanwhile seldom waits out a pause.
  expect(new Set(limited.map((l) => Math.floor(l.time / 1000))).size).toBeLessThanOrEqual(12);
  const early = limited.flatMap((l) =>
    log.filter((r) => endpoint(r) === endpoint(l) && r.time > l.time + 150 && r.time < l.time + 900),
  );
  expect(early.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([]);
  expect(run.stderr.text()).toMatch(/delivering the sanction queues: [\d,]+ left, [\d.]+\/s/);
  const after = JSON.parse((await hubBinary(["status", "--json"], { env, cwd: dir })).stdout);
  expect(after.sanctions_drain).toMatchObject({ state: "done", total: N + 1, settled: N + 1, left: 0 });
  sb.control.reset();
}, 240_000);

test("run SIGKILLed at random moments of a drain, five times, then restarted: each of 400 bans made exactly once", async () => {
  const N = 400;
  const { dir, env, queue } = await backlog(N, "killed");
  // Rounds every 2 s: an entry whose answer a kill lost is looked up once its settle time has passed.
  const runEnv = { ...env, HUB_INTERVALS_QUEUES: "2" };
  sb.control.reset();
  sb.control.latency(5); // slow enough that a kill lands mid-round
  for (let kill = 0; kill < 5; kill++) {
    const before = made("killed").order.length;
    const run = await hubInBackground(["run"], { env: runEnv, cwd: dir });
    await until(() => made("killed").order.length >= before + 20 || run.proc.exitCode !== null, "progress", {
      timeoutMs: 60_000,
    });
    await Bun.sleep(Math.random() * 300);
    run.proc.kill("SIGKILL");
    await run.proc.exited;
  }
  const run = await hubInBackground(["run"], { env: runEnv, cwd: dir });
  try {
    await until(async () => (await queue.size()) === 0, "the queue to empty", {
      timeoutMs: 120_000,
      everyMs: 100,
      diagnostics: () => run.stderr.text().slice(-3000),
    });
  } finally {
    run.proc.kill("SIGTERM");
    await run.proc.exited;
  }
  sb.control.reset();
  const { times } = made("killed");
  expect([...times.entries()].filter(([, n]) => n !== 1)).toEqual([]);
  expect(times.size).toBe(N);
}, 300_000);
