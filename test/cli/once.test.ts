import { expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Sandbox } from "../../lib/sandbox/index.ts";
import { hub, hubBinary } from "./binary.ts";
import { useSandbox } from "../support/sandbox.ts";

let sb: Sandbox;
useSandbox((s) => (sb = s));

/** A cron job's environment: the sandbox, the simulated game, a new store. */
const envOf = (name: string, extra: Record<string, string> = {}) => ({
  HUB_API_URL: sb.url,
  HUB_API_KEY: sb.key,
  HUB_API_SERVER_ID: sb.serverId,
  HUB_GAME_BRIDGE: "sim",
  HUB_STORAGE_DIR: mkdtempSync(join(tmpdir(), name)),
  ...extra,
});

test("run --once (cron): exit 4 while the service is down and a ban waits, 0 once it is delivered", async () => {
  const env = envOf("hub-once-");
  // The compiled binary, as cron runs it: the exit codes as the shell sees them.
  expect((await hubBinary(["run", "--once"], { env })).code).toBe(0); // caches the server record

  await sb.control.down();
  const ban = await hubBinary(["ban", "76561198012345671", "30m", "griefing"], { env });
  expect(ban.code).toBe(6);
  const down = await hubBinary(["run", "--once"], { env });
  expect(down.code).toBe(4);
  expect(down.stderr).toContain("still queued (ban: 1)");

  await sb.control.up();
  const done = await hubBinary(["run", "--once"], { env });
  expect(done.code).toBe(0);
  const posts = sb.control.requests({ method: "POST", path: "/ban/" }).filter((r) => r.status === 200);
  expect(posts).toHaveLength(1);
  expect(posts[0]?.body).toMatchObject({ reason: "griefing" });
}, 60_000);

test("run --once --json: one object with the exit code, each job, and each queue before, delivered and left", async () => {
  const env = envOf("hub-once-json-");
  expect((await hub(["run", "--once"], { env })).code).toBe(0); // caches the server record
  await sb.control.down();
  expect((await hub(["ban", "76561198012345672", "30m", "queued while down"], { env })).code).toBe(6);

  const waiting = await hub(["run", "--once", "--json"], { env });
  expect(waiting.code).toBe(4);
  const w = JSON.parse(waiting.stdout); // the whole of stdout is one object
  expect(w).toMatchObject({ exit_code: 4, result: "unreachable", server_record: "cache" });
  expect(w.queues.find((q: { queue: string }) => q.queue === "ban")).toEqual({
    queue: "ban",
    before: 1,
    delivered: 0,
    left: 1,
    waiting: 1,
  });
  expect(w.service.reachable).toBe(false);

  await sb.control.up();
  const done = await hub(["run", "--once", "--json"], { env });
  expect(done.code).toBe(0);
  const d = JSON.parse(done.stdout);
  expect(d).toMatchObject({ exit_code: 0, result: "ok", error: null, server_record: "api" });
  expect(d.service).toEqual({ reachable: true, key_accepted: true, last_error: null });
  const names = d.jobs.map((j: { name: string }) => j.name);
  for (const name of ["bans", "sanction-queues", "status"]) expect(names).toContain(name);
  expect(d.jobs.every((j: { ran: boolean; ok: boolean }) => j.ran && j.ok)).toBe(true);
  expect(d.queues.find((q: { queue: string }) => q.queue === "ban")).toEqual({
    queue: "ban",
    before: 1,
    delivered: 1,
    left: 0,
    waiting: 0,
  });
  // No other text on stdout (logs are on stderr).
  expect(done.stdout.trim().startsWith("{") && done.stdout.trim().endsWith("}")).toBe(true);
}, 60_000);

test("run --once --json with the service unreachable and nothing cached: the object says so, exit 4", async () => {
  // The discard port: nothing listens.
  const env = envOf("hub-once-json-", { HUB_API_URL: "http://127.0.0.1:9/v1", HUB_API_TIMEOUT: "2" });
  const r = await hub(["run", "--once", "--json"], { env });
  expect(r.code).toBe(4);
  const o = JSON.parse(r.stdout);
  expect(o).toMatchObject({
    exit_code: 4,
    result: "unreachable",
    error: "the service is unreachable and no usable cached server record exists",
    server_record: null,
    jobs: [],
  });
  expect(o.service.last_error).toContain("connection refused");
  expect(r.stderr).toContain("ERROR the service is unreachable and no usable cached server record exists");
}, 60_000);

test("run --once with a cached record while the service is down: unreachable, exit 4, the failed jobs named", async () => {
  const env = envOf("hub-once-down-", { HUB_API_TIMEOUT: "2" });
  expect((await hub(["run", "--once"], { env })).code).toBe(0); // caches the server record
  await sb.control.down();
  try {
    // Nothing queued: a cron monitor still has to notice that the round did not reach the service.
    const r = await hub(["run", "--once", "--json"], { env });
    expect(r.code).toBe(4);
    const o = JSON.parse(r.stdout);
    expect(o).toMatchObject({ exit_code: 4, result: "unreachable", server_record: "cache" });
    expect(o.failed_jobs).toContain("bans");
    expect(o.failed_jobs).toEqual(o.jobs.filter((j: { ok: boolean }) => !j.ok).map((j: { name: string }) => j.name));
    expect(o.error).toContain(`${o.failed_jobs.length} of ${o.jobs.length} jobs failed (${o.failed_jobs.join(", ")})`);
    const text = await hub(["run", "--once"], { env });
    expect(text.code).toBe(4);
    expect(text.stderr).toContain("error: the service did not answer");
    expect(text.stderr).toContain("bans");
  } finally {
    await sb.control.up();
  }
}, 60_000);

test("run --once: a job the service answered with an error fails the round, exit 1, the job named", async () => {
  const env = envOf("hub-once-failed-");
  expect((await hub(["run", "--once"], { env })).code).toBe(0);
  // An answer hub-agent cannot read (the service answered: not unreachable).
  sb.control.failNext({ method: "GET", path: /^\/server\/bundle\/[^/]+\/ban$/ }, 5, 200, "not json");
  const r = await hub(["run", "--once", "--json"], { env });
  sb.control.reset();
  const o = JSON.parse(r.stdout);
  expect([r.code, o.exit_code, o.result]).toEqual([1, 1, "failed"]);
  expect(o.failed_jobs).toEqual(["bans"]);
  expect(o.error).toContain(o.failed_jobs.join(", "));
}, 60_000);
