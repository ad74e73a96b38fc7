/**
 * The metrics registry fed by the real HTTP client (against the in-memory service) and the real scheduler: what
 * each outcome counts as, and which job runs fail — a job that logs a failure of the service and carries on still
 * failed; a 404 is an answer, not a failure.
 */
import { afterAll, beforeAll, beforeEach, expect, test } from "bun:test";
import { createApi, type Api } from "../../lib/api/client.ts";
import { systemClock } from "../../lib/clock.ts";
import { silentLogger } from "../../lib/log.ts";
import { Metrics } from "../../lib/monitor/metrics.ts";
import { startSandbox, type Sandbox } from "../../lib/sandbox/index.ts";
import { Scheduler } from "../../lib/scheduler.ts";

let sb: Sandbox;
let metrics: Metrics;
let api: Api;
let scheduler: Scheduler;

beforeAll(async () => {
  sb = await startSandbox();
});
afterAll(() => sb.stop());
beforeEach(async () => {
  sb.control.reset();
  await sb.control.up();
  metrics = new Metrics(systemClock);
  api = createApi({ url: sb.url, key: sb.key, backoffMs: 1, retries: 2, onRequest: metrics.request });
  scheduler = new Scheduler(systemClock, silentLogger, 0, Math.random, metrics);
});

const job = (name: string) => metrics.jobs.get(name)!;
const counts = () => metrics.requests().map((r) => `${r.method} ${r.route} ${r.outcome} ${r.count}`);

test("a request that succeeds: counted by endpoint (ids as {id}), the service reachable, the key accepted", async () => {
  await scheduler.runJob("server", async () => void (await api.getServer(sb.serverId)));
  expect(counts()).toEqual(["GET /server/{id} ok 1"]);
  expect(metrics.service).toMatchObject({ reachable: true, keyAccepted: true });
  expect(job("server")).toMatchObject({ runs: 1, failures: 0, running: 0 });
  expect(job("server").lastSuccessAt).toBeNumber();
});

test("a job that logs a 5xx and carries on failed: every attempt counted, the last error kept", async () => {
  sb.control.failNext({ path: `/server/${sb.serverId}` }, 3, 503);
  await scheduler.runJob("server", async () => {
    const res = await api.getServer(sb.serverId);
    expect(res.ok).toBe(false); // the job does not throw
  });
  expect(counts()).toEqual(["GET /server/{id} server_error 3"]);
  expect(job("server")).toMatchObject({ runs: 1, failures: 1 });
  expect(job("server").lastSuccessAt).toBeUndefined();
  expect(job("server").lastError).toBe(`GET /server/${sb.serverId}: 503 Internal server error.`);
  expect(metrics.service.reachable).toBe(true); // it answered, badly
});

test("a GET that fails once and then succeeds is a success", async () => {
  sb.control.failNext({ path: `/server/${sb.serverId}` }, 1, 502);
  await scheduler.runJob("server", async () => void (await api.getServer(sb.serverId)));
  expect(counts()).toEqual(["GET /server/{id} ok 1", "GET /server/{id} server_error 1"]);
  expect(job("server")).toMatchObject({ runs: 1, failures: 0 });
});

test("a 404 is the service's answer about one item, not a failure of the job", async () => {
  await scheduler.runJob("users", async () => void (await api.getUser("76561198999999999", "STEAM")));
  expect(counts()).toEqual(["GET /user/{id} not_found 1"]);
  expect(job("users").failures).toBe(0);
});

test("a request too large for a proxy (414) failed the job: the rewards round that fetched nothing is not a success", async () => {
  const userIds = Array.from({ length: 250 }, () => crypto.randomUUID()); // 11 KB of URL: past nginx's 8 KiB line
  await scheduler.runJob("rewards", async () => {
    await api.getAppliedRewards({ bundleId: sb.bundleId, serverId: sb.serverId, userIds });
  });
  expect(counts()).toEqual(["GET /packet/reward/applied/user too_large 1"]);
  expect(job("rewards").failures).toBe(1);
  expect(job("rewards").lastError).toContain("414");
});

test("a refused key (401): key_refused, the job failed, the key shown refused until an answer accepts it", async () => {
  const wrong = createApi({ url: sb.url, key: "wrong", onRequest: metrics.request });
  await scheduler.runJob("status", async () => void (await wrong.patchServer(sb.serverId, { is_alive: true })));
  expect(counts()).toEqual(["PATCH /server/{id} key_refused 1"]);
  expect(metrics.service.keyAccepted).toBe(false);
  expect(job("status").lastError).toContain("401");
  await api.getServer(sb.serverId);
  expect(metrics.service.keyAccepted).toBe(true);
});

test("a 429 closes its endpoint's gate: later writes to it are counted as gate_closed and the gate's time is known", async () => {
  sb.control.rateLimit(1, 30);
  await scheduler.runJob("status", async () => void (await api.patchServer(sb.serverId, { is_alive: true })));
  await api.patchServer(sb.serverId, { is_alive: true });
  await api.getGroups(); // another endpoint: sent
  expect(counts()).toEqual([
    "GET /group/ ok 1",
    "PATCH /server/{id} gate_closed 1",
    "PATCH /server/{id} rate_limited 1",
  ]);
  expect(metrics.gateMs()).toBeGreaterThan(29_000);
  expect(metrics.service.last429At).toBeNumber();
  expect(job("status").failures).toBe(1);
});

test("no answer: the service unreachable, the job failed", async () => {
  await sb.control.down();
  await scheduler.runJob("bans", async () => void (await api.getBundleBans(sb.bundleId)));
  expect(counts()).toEqual(["GET /server/bundle/{id}/ban network 3"]);
  expect(metrics.service.reachable).toBe(false);
  expect(job("bans").lastError).toContain("network error");
});

test("a job that throws failed with its message; a request that outlives its run does not count for it", async () => {
  await scheduler.runJob("boom", async () => {
    throw new Error("the game did not answer");
  });
  expect(job("boom")).toMatchObject({ runs: 1, failures: 1, lastError: "the game did not answer" });

  let later!: Promise<unknown>;
  await scheduler.runJob("quick", async () => {
    // Started inside the run, finished after it: the run was already judged.
    later = (async () => {
      await Bun.sleep(1);
      sb.control.failNext({ path: `/server/${sb.serverId}` }, 3, 500);
      return api.getServer(sb.serverId);
    })();
  });
  await later;
  expect(job("quick")).toMatchObject({ runs: 1, failures: 0 });
});

test("the interval of every scheduled job is known before its first run", async () => {
  scheduler.every("slow", 3_600_000, async () => {});
  expect(job("slow")).toMatchObject({ intervalMs: 3_600_000, runs: 0 });
  await scheduler.stop();
});
