import { expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Sandbox } from "../../lib/sandbox/index.ts";
import { hub, hubBinary } from "./binary.ts";
import { useSandbox } from "../support/sandbox.ts";

let sb: Sandbox;
useSandbox((s) => (sb = s));

test("run --once (cron): exit 6 while a ban waits for the service, 0 once it is delivered", async () => {
  const env = {
    HUB_API_URL: sb.url,
    HUB_API_KEY: sb.key,
    HUB_API_SERVER_ID: sb.serverId,
    HUB_GAME_BRIDGE: "sim",
    HUB_STORAGE_DIR: mkdtempSync(join(tmpdir(), "hub-once-")),
  };
  // The compiled binary, as cron runs it: the exit codes as the shell sees them.
  expect((await hubBinary(["run", "--once"], { env })).code).toBe(0); // caches the server record

  await sb.control.down();
  const ban = await hubBinary(["ban", "76561198012345671", "30m", "griefing"], { env });
  expect(ban.code).toBe(6);
  const waiting = await hubBinary(["run", "--once"], { env });
  expect(waiting.code).toBe(6);
  expect(waiting.stderr).toContain("not everything queued was delivered (ban: 1)");

  await sb.control.up();
  const done = await hubBinary(["run", "--once"], { env });
  expect(done.code).toBe(0);
  const posts = sb.control.requests({ method: "POST", path: "/ban/" }).filter((r) => r.status === 200);
  expect(posts).toHaveLength(1);
  expect(posts[0]?.body).toMatchObject({ reason: "griefing" });
}, 60_000);

test("run --once --json: one object with the exit code, each job, and each queue before, delivered and left", async () => {
  const env = {
    HUB_API_URL: sb.url,
    HUB_API_KEY: sb.key,
    HUB_API_SERVER_ID: sb.serverId,
    HUB_GAME_BRIDGE: "sim",
    HUB_STORAGE_DIR: mkdtempSync(join(tmpdir(), "hub-once-json-")),
  };
  expect((await hub(["run", "--once"], { env })).code).toBe(0); // caches the server record
  await sb.control.down();
  expect((await hub(["ban", "76561198012345672", "30m", "queued while down"], { env })).code).toBe(6);

  const waiting = await hub(["run", "--once", "--json"], { env });
  expect(waiting.code).toBe(6);
  const w = JSON.parse(waiting.stdout); // the whole of stdout is one object
  expect(w).toMatchObject({ exit_code: 6, result: "queued", error: null, server_record: "cache" });
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
  const env = {
    HUB_API_URL: "http://127.0.0.1:9/v1", // the discard port: nothing listens
    HUB_API_KEY: sb.key,
    HUB_API_SERVER_ID: sb.serverId,
    HUB_GAME_BRIDGE: "sim",
    HUB_API_TIMEOUT: "2",
    HUB_STORAGE_DIR: mkdtempSync(join(tmpdir(), "hub-once-json-")),
  };
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
