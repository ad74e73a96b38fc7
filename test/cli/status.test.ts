/**
 * `hub-agent status` and the `[http] listen` endpoints, through the compiled binary: a real `run` (sim bridge)
 * against the in-memory service, and `status` from another process beside it, after it stopped, after it was
 * killed, and where none ever ran. /metrics is read by a Prometheus text parser nobody here wrote
 * (parse-prometheus-text-format).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import parse from "parse-prometheus-text-format";
import type { StatusView } from "../../lib/monitor/status.ts";
import { startSandbox, type Sandbox } from "../../lib/sandbox/index.ts";
import { ready, startRun, statusPageUrl } from "../support/agent-run.ts";
import { until } from "../support/until.ts";
import { binary, hubBinary } from "./binary.ts";

const PLAYERS = [
  { id: "76561198000000101", name: "Alice" },
  { id: "76561198000000102", name: "Bob" },
];
const LISTEN = { HUB_HTTP_LISTEN: "127.0.0.1:0", HUB_INTERVALS_STATUS: "1" };

let root: string;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "status-"));
  await binary();
}, 120_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** What a one-shot command beside the run needs: the service and the run's store. */
const envOf = (sb: Sandbox, dir: string) => ({
  HUB_API_URL: sb.url,
  HUB_API_KEY: sb.key,
  HUB_API_SERVER_ID: sb.serverId,
  HUB_GAME_BRIDGE: "sim",
  HUB_STORAGE_DIR: join(dir, "store"),
});

/** `hub-agent status` from another process, on the run's store. */
function status(sb: Sandbox, dir: string, json = false) {
  return hubBinary(["status", ...(json ? ["--json"] : [])], { env: envOf(sb, dir) });
}

async function view(sb: Sandbox, dir: string): Promise<StatusView> {
  return JSON.parse((await status(sb, dir, true)).stdout) as StatusView;
}

/** Waits until `status --json` shows what `pred` wants; returns that view. */
async function viewWhen(sb: Sandbox, dir: string, pred: (v: StatusView) => boolean, what: string) {
  let last: StatusView | undefined;
  await until(async () => pred((last = await view(sb, dir))), what, {
    timeoutMs: 20_000,
    diagnostics: () => JSON.stringify(last, null, 2),
  });
  return last!;
}

const lineOf = (out: string, label: string) => out.split("\n").find((l) => l.startsWith(`${label.padEnd(12)} `));

async function withSandbox(fn: (sb: Sandbox) => Promise<void>) {
  const sb = await startSandbox();
  try {
    await fn(sb);
  } finally {
    await sb.stop();
  }
}

test(
  "beside a running run: alive with its pid and uptime, the service, game, players, jobs; then the service goes away",
  () =>
    withSandbox(async (sb) => {
      const dir = mkdtempSync(join(root, "alive-"));
      const run = await startRun({ sb, dir, name: "run", players: PLAYERS, env: LISTEN });
      await ready(run);
      const url = await statusPageUrl(run);
      const v = await viewWhen(
        sb,
        dir,
        (x) =>
          x.snapshot?.players.length === 2 &&
          !!x.snapshot.jobs.find((j) => j.name === "status")?.last_success_at &&
          x.caches.some((c) => c.name === "online"),
        "the players and a status round in the snapshot",
      );
      expect(v.run).toEqual({
        alive: true,
        lock: "live",
        holder: { pid: run.proc.pid, host: hostname(), since: expect.any(String) },
      });
      expect(v.snapshot).toMatchObject({
        pid: run.proc.pid,
        mode: "run",
        state: "ready",
        server_record: "api",
        service: { reachable: true, key_accepted: true, last_error: null, rate_limited_until: null },
        bridge: { kind: "sim", state: "up", reason: null },
        http: { url, error: null },
        unlocked: false,
      });
      expect(v.snapshot!.players.map((p) => p.name).sort()).toEqual(["Alice", "Bob"]);
      expect(v.queues.map((q) => [q.queue, q.entries])).toEqual([
        ["ban", 0],
        ["unban", 0],
        ["warning", 0],
        ["reward_executed", 0],
        ["reward_failed", 0],
      ]);
      expect(v.quarantine.count).toBe(0);

      const text = await status(sb, dir);
      expect(text.code).toBe(0);
      expect(lineOf(text.stdout, "run")).toMatch(
        new RegExp(
          `^run +alive: pid ${run.proc.pid} on ${hostname()}, up \\d+s \\(since \\S+Z\\); ready \\(server record from the service\\)$`,
        ),
      );
      expect(lineOf(text.stdout, "service")).toMatch(
        /^service +reachable, API key accepted; last answer \d+s ago; last 429: never$/,
      );
      expect(lineOf(text.stdout, "game")).toBe(`${"game".padEnd(12)} sim: up`);
      expect(lineOf(text.stdout, "players")).toMatch(/^players +2 online: (Alice, Bob|Bob, Alice)$/);
      expect(text.stdout).toMatch(/^ +status +every 1s +last success \d+s ago$/m);
      expect(lineOf(text.stdout, "queues")).toBe(
        `${"queues".padEnd(12)} ban 0 · unban 0 · warning 0 · reward_executed 0 · reward_failed 0`,
      );
      expect(lineOf(text.stdout, "quarantine")).toBe(
        `${"quarantine".padEnd(12)} none (${join(dir, "store", "corrupt")})`,
      );
      expect(lineOf(text.stdout, "http")).toBe(`${"http".padEnd(12)} ${url}`);

      // The service goes away: a ban waits in its queue, a record becomes unreadable.
      await sb.control.down();
      const ban = await hubBinary(["ban", "76561198000000109", "10", "cheating"], { env: envOf(sb, dir) });
      expect(ban.code).toBe(6);
      const broken = join(dir, "store", "queue", "warning");
      mkdirSync(broken, { recursive: true });
      writeFileSync(join(broken, `000001764000000000-${crypto.randomUUID()}`), "{ not json");
      const down = await viewWhen(
        sb,
        dir,
        // The unreadable record is quarantined when it is next read, which may come after the status round.
        (x) =>
          x.snapshot?.service.reachable === false &&
          !!x.snapshot.jobs.find((j) => j.name === "status")?.last_error &&
          x.quarantine.count === 1,
        "the failed status round in the snapshot, and the unreadable record quarantined",
      );
      expect(down.snapshot!.service.last_error?.message).toMatch(/network error/);
      expect(down.queues.find((q) => q.queue === "ban")).toMatchObject({ entries: 1, waiting: 1, uncertain: 0 });
      expect(down.quarantine.count).toBe(1);

      const after = await status(sb, dir);
      expect(after.code).toBe(0);
      expect(lineOf(after.stdout, "service")).toMatch(/^service +unreachable, API key accepted; last answer \d+s ago/);
      expect(after.stdout).toMatch(/^ +last error \d+s ago: (GET|PATCH) \/\S+: network error: /m);
      expect(after.stdout).toMatch(
        /^ +status +every 1s +last success \d+s ago; last error \d+s ago: PATCH \/server\/\S+: network error/m,
      );
      expect(lineOf(after.stdout, "queues")).toMatch(
        / · ban 1 \(1 waiting, oldest \d+s\) · |^queues +ban 1 \(1 waiting, oldest \d+s\) · /,
      );
      expect(lineOf(after.stdout, "quarantine")).toMatch(
        new RegExp(
          `^quarantine +1 unreadable record\\(s\\) moved to ${join(dir, "store", "corrupt")}, newest \\d+s ago: queue:warning:000001764000000000-`,
        ),
      );

      run.proc.kill("SIGTERM");
      expect(await run.proc.exited).toBe(0);
    }),
  90_000,
);

test(
  "no run alive: where none ever ran, after a clean stop, after a kill -9, after run --once; exit 1 each time",
  () =>
    withSandbox(async (sb) => {
      const dir = mkdtempSync(join(root, "gone-"));
      const never = await status(sb, dir);
      expect(never.code).toBe(1);
      expect(lineOf(never.stdout, "run")).toBe(
        `${"run".padEnd(12)} no hub-agent run is alive (storage ${join(dir, "store")}); no run has saved its status in this storage directory yet`,
      );

      const stopped = await startRun({ sb, dir, name: "stopped", players: PLAYERS });
      await ready(stopped);
      stopped.proc.kill("SIGINT");
      expect(await stopped.proc.exited).toBe(0);
      const afterStop = await status(sb, dir);
      expect(afterStop.code).toBe(1);
      expect(lineOf(afterStop.stdout, "run")).toMatch(
        new RegExp(
          `no hub-agent run is alive \\(storage .*\\); the last one, pid ${stopped.proc.pid} on ${hostname()}, stopped \\d+s ago$`,
        ),
      );
      const json = await status(sb, dir, true);
      expect(json.code).toBe(1);
      expect(JSON.parse(json.stdout)).toMatchObject({
        run: { alive: false, lock: "none", holder: null },
        snapshot: { pid: stopped.proc.pid, state: "stopped" },
      });

      const killed = await startRun({ sb, dir, name: "killed", players: PLAYERS });
      await ready(killed);
      await viewWhen(
        sb,
        dir,
        (v) => v.snapshot?.pid === killed.proc.pid && v.snapshot.state === "ready",
        "its snapshot",
      );
      killed.proc.kill("SIGKILL");
      await killed.proc.exited;
      const afterKill = await status(sb, dir);
      expect(afterKill.code).toBe(1);
      expect(lineOf(afterKill.stdout, "run")).toMatch(
        new RegExp(
          `; the last one, pid ${killed.proc.pid} on ${hostname()}, ended without stopping \\(killed, crashed or the machine restarted\\); its last status is \\d+s old$`,
        ),
      );
      expect(JSON.parse((await status(sb, dir, true)).stdout).run).toMatchObject({ alive: false, lock: "gone" });

      // A cron job's `run --once` leaves its round behind, its jobs run once each.
      const once = await startRun({ sb, dir, name: "once", players: PLAYERS, args: ["--once"] });
      expect(await once.proc.exited).toBe(0);
      const afterOnce = await status(sb, dir, true);
      expect(afterOnce.code).toBe(1);
      const v = JSON.parse(afterOnce.stdout) as StatusView;
      expect(v.snapshot).toMatchObject({ pid: once.proc.pid, mode: "once", state: "stopped" });
      expect(v.snapshot!.jobs.find((j) => j.name === "status")).toMatchObject({
        interval_s: null,
        runs: 1,
        failures: 0,
      });
      expect(lineOf((await status(sb, dir)).stdout, "run")).toMatch(
        new RegExp(`; the last one \\(run --once\\), pid ${once.proc.pid} on ${hostname()}, stopped \\d+s ago$`),
      );
    }),
  60_000,
);

test(
  "/metrics in the Prometheus text format: queues, requests by endpoint and outcome, jobs, players, bridge, the 429 gate",
  () =>
    withSandbox(async (sb) => {
      const dir = mkdtempSync(join(root, "metrics-"));
      const run = await startRun({ sb, dir, name: "run", players: PLAYERS, env: LISTEN });
      await ready(run);
      const url = await statusPageUrl(run);
      // The next status update is answered 429 with a Retry-After of 30 s: the gate closes.
      sb.control.rateLimit(1, 30, { method: "PATCH" });
      let families: ReturnType<typeof parse> = [];
      let text = "";
      const value = (name: string, labels: Record<string, string> = {}) => {
        const m = families
          .find((f) => f.name === name)
          ?.metrics.find((x) => Object.entries(labels).every(([k, v]) => x.labels?.[k] === v));
        return m && Number(m.value);
      };
      await until(
        async () => {
          const res = await fetch(`${url}metrics`);
          expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
          families = parse((text = await res.text()));
          // The bans job's first success too: on a busy machine it may come after the gate closed.
          return (
            (value("hub_agent_api_rate_limit_gate_seconds") ?? 0) > 0 &&
            value("hub_agent_players_online") === 2 &&
            (value("hub_agent_job_last_success_timestamp_seconds", { job: "bans" }) ?? 0) > 0
          );
        },
        "the 429 gate, both players and the bans job's success in /metrics",
        { timeoutMs: 20_000, diagnostics: () => text },
      );
      expect(value("hub_agent_api_rate_limit_gate_seconds")).toBeLessThanOrEqual(30);
      expect(
        value("hub_agent_api_requests_total", { method: "PATCH", endpoint: "/server/{id}", outcome: "rate_limited" }),
      ).toBe(1);
      expect(value("hub_agent_api_requests_total", { method: "GET", endpoint: "/server/{id}", outcome: "ok" })).toBe(1);
      expect(value("hub_agent_api_last_rate_limited_timestamp_seconds")).toBeGreaterThan(Date.now() / 1000 - 60);
      expect(value("hub_agent_job_last_error_timestamp_seconds", { job: "status" })).toBeGreaterThan(0);
      expect(value("hub_agent_job_last_success_timestamp_seconds", { job: "bans" })).toBeGreaterThan(
        Date.now() / 1000 - 60,
      );
      expect(value("hub_agent_job_failures_total", { job: "status" })).toBeGreaterThanOrEqual(1);
      expect(value("hub_agent_bridge_up", { bridge: "sim" })).toBe(1);
      expect(value("hub_agent_ready")).toBe(1);
      expect(value("hub_agent_api_reachable")).toBe(1);
      expect(value("hub_agent_api_key_accepted")).toBe(1);
      for (const queue of ["ban", "unban", "warning", "reward_executed", "reward_failed"]) {
        expect(value("hub_agent_queue_entries", { queue })).toBe(0);
        expect(value("hub_agent_queue_oldest_age_seconds", { queue })).toBe(0);
      }
      expect(value("hub_agent_quarantined_entries")).toBe(0);
      expect(value("hub_agent_cache_age_seconds", { cache: "server" })).toBeGreaterThanOrEqual(0);
      expect(families.find((f) => f.name === "hub_agent_api_requests_total")?.type).toBe("COUNTER");

      const get = (path: string, init?: RequestInit) => fetch(`${url}${path.replace(/^\//, "")}`, init);
      expect(await (await get("/healthz")).text()).toBe("ok\n");
      expect((await get("/readyz")).status).toBe(200);
      expect((await get("/nope")).status).toBe(404);
      expect((await get("/metrics", { method: "POST" })).status).toBe(405);
      // A web page pointing its own name at 127.0.0.1 (DNS rebinding) is refused.
      expect((await get("/status.json", { headers: { host: "evil.example" } })).status).toBe(421);

      run.proc.kill("SIGTERM");
      expect(await run.proc.exited).toBe(0);
    }),
  60_000,
);

test(
  "/metrics follows the queues: what other processes queue and drop shows within seconds, a delivery at once",
  () =>
    withSandbox(async (sb) => {
      const dir = mkdtempSync(join(root, "queue-counts-"));
      const env = { ...LISTEN, HUB_INTERVALS_QUEUES: "1", HUB_INTERVALS_BANS: "1" };
      const run = await startRun({ sb, dir, name: "run", players: PLAYERS, env });
      await ready(run);
      const url = await statusPageUrl(run);
      let text = "";
      const bans = async () => {
        const family = parse((text = await (await fetch(`${url}metrics`)).text())).find(
          (f) => f.name === "hub_agent_queue_entries",
        );
        return Number(family?.metrics.find((m) => m.labels?.queue === "ban")?.value);
      };
      expect(await bans()).toBe(0);

      // Queued and dropped by other processes: the run is told of neither.
      await sb.control.down();
      const queue = async (reason: string) => {
        const ban = await hubBinary(["ban", "76561198000000109", "10", reason, "--json"], { env: envOf(sb, dir) });
        expect(ban.code).toBe(6);
        await until(async () => (await bans()) === 1, "the queued ban in /metrics", {
          timeoutMs: 10_000,
          diagnostics: () => text,
        });
        return (JSON.parse(ban.stdout) as { entry_id: string }).entry_id;
      };
      const dropped = await hubBinary(["queue", "drop", await queue("mistake")], { env: envOf(sb, dir) });
      expect(dropped.code).toBe(0);
      await until(async () => (await bans()) === 0, "the dropped ban gone from /metrics", {
        timeoutMs: 10_000,
        diagnostics: () => text,
      });

      // Delivered by the run itself.
      await queue("cheating");
      await sb.control.up();
      await until(async () => (await bans()) === 0, "the delivered ban gone from /metrics", {
        timeoutMs: 20_000,
        diagnostics: () => text,
      });
      expect([...sb.state.bans.values()].some((b) => b.reason === "cheating")).toBe(true);
      run.proc.kill("SIGTERM");
      expect(await run.proc.exited).toBe(0);
    }),
  60_000,
);

test(
  "while the service has not answered yet: /readyz 503, /healthz 200, status says starting; ready once it answers",
  () =>
    withSandbox(async (sb) => {
      const dir = mkdtempSync(join(root, "starting-"));
      await sb.control.down();
      const run = await startRun({
        sb,
        dir,
        name: "run",
        players: PLAYERS,
        env: { ...LISTEN, HUB_INTERVALS_USER_RETRY: "0.5" },
      });
      const url = await statusPageUrl(run);
      expect((await fetch(`${url}healthz`)).status).toBe(200);
      const readyz = await fetch(`${url}readyz`);
      expect(readyz.status).toBe(503);
      expect(await readyz.text()).toBe("not ready: waiting for the server record (hub_ready)\n");
      const v = await viewWhen(sb, dir, (x) => x.snapshot?.service.reachable === false, "the first failed request");
      expect(v.snapshot!.state).toBe("starting");
      const text = await status(sb, dir);
      expect(text.code).toBe(0);
      expect(lineOf(text.stdout, "run")).toMatch(/; starting: waiting for the server record$/);
      expect(lineOf(text.stdout, "service")).toMatch(/^service +unreachable; last answer never; last 429: never$/);

      await sb.control.up();
      await ready(run);
      await until(async () => (await fetch(`${url}readyz`)).status === 200, "/readyz 200");
      run.proc.kill("SIGTERM");
      expect(await run.proc.exited).toBe(0);
    }),
  60_000,
);
