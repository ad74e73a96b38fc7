/**
 * /metrics as Prometheus reads it: rendered from a status view and parsed back by a text-format parser nobody here
 * wrote (npm's parse-prometheus-text-format, prom2json's output); label values that need escaping survive.
 */
import { expect, test } from "bun:test";
import parse from "parse-prometheus-text-format";
import { renderMetrics } from "../../lib/monitor/prometheus.ts";
import type { StatusView } from "../../lib/monitor/status.ts";

const NOW = "2026-11-24T12:00:00.000Z";

function view(over: Partial<StatusView> = {}): StatusView {
  return {
    now: NOW,
    storage_dir: "/srv/hub/data",
    run: { alive: true, lock: "live", holder: { pid: 42, host: "game-1", since: "2026-11-24T11:00:00.000Z" } },
    snapshot: {
      pid: 42,
      host: "game-1",
      started_at: "2026-11-24T11:00:00.000Z",
      mode: "run",
      state: "ready",
      ready_at: "2026-11-24T11:00:01.000Z",
      server_record: "api",
      service: {
        reachable: true,
        key_accepted: true,
        last_answer_at: NOW,
        last_error: null,
        last_429_at: "2026-11-24T11:59:00.000Z",
        rate_limited_until: "2026-11-24T12:00:30.000Z",
      },
      requests: [
        { method: "GET", endpoint: "/server/{id}", outcome: "ok", count: 3 },
        { method: "PATCH", endpoint: "/server/{id}", outcome: "rate_limited", count: 1 },
      ],
      jobs: [
        {
          name: "status",
          interval_s: 60,
          runs: 5,
          failures: 1,
          running: false,
          last_run_at: NOW,
          last_success_at: "2026-11-24T11:58:00.000Z",
          last_error_at: "2026-11-24T11:59:00.000Z",
          last_error: "PATCH /server/x: 429 rate limited",
        },
      ],
      players: [{ id: "1", name: 'Bob "the\\builder"\nx' }],
      bridge: { kind: "rcon", state: "down", reason: "connection refused" },
      http: { url: "http://127.0.0.1:9187/", error: null },
      unlocked: false,
      written_at: NOW,
      age_s: 0,
    },
    queues: [{ queue: "ban", entries: 2, waiting: 2, uncertain: 1, oldest_age_s: 300 }],
    caches: [
      { name: "bans", age_s: 12 },
      { name: 'we"ird\\name\n', age_s: 5 },
      { name: "future", age_s: null },
    ],
    quarantine: { dir: "/srv/hub/data/corrupt", count: 3, newest: [] },
    ...over,
  };
}

const sample = (families: ReturnType<typeof parse>, name: string, labels: Record<string, string> = {}) => {
  const family = families.find((f) => f.name === name);
  const m = family?.metrics.find((x) => JSON.stringify(x.labels ?? {}) === JSON.stringify(labels));
  return m === undefined ? undefined : Number(m.value);
};

test("every family parses, typed, with the view's numbers", () => {
  const families = parse(renderMetrics(view()));
  const types = Object.fromEntries(families.map((f) => [f.name, f.type]));
  expect(types).toMatchObject({
    hub_agent_api_requests_total: "COUNTER",
    hub_agent_job_runs_total: "COUNTER",
    hub_agent_queue_entries: "GAUGE",
    hub_agent_players_online: "GAUGE",
  });
  for (const f of families) expect(f.help).not.toBe("");
  expect(sample(families, "hub_agent_queue_entries", { queue: "ban" })).toBe(2);
  expect(sample(families, "hub_agent_queue_uncertain", { queue: "ban" })).toBe(1);
  expect(sample(families, "hub_agent_queue_oldest_age_seconds", { queue: "ban" })).toBe(300);
  expect(
    sample(families, "hub_agent_api_requests_total", {
      method: "PATCH",
      endpoint: "/server/{id}",
      outcome: "rate_limited",
    }),
  ).toBe(1);
  expect(sample(families, "hub_agent_api_rate_limit_gate_seconds")).toBe(30);
  expect(sample(families, "hub_agent_job_last_success_timestamp_seconds", { job: "status" })).toBe(
    Date.parse("2026-11-24T11:58:00.000Z") / 1000,
  );
  expect(sample(families, "hub_agent_job_failures_total", { job: "status" })).toBe(1);
  expect(sample(families, "hub_agent_players_online")).toBe(1);
  expect(sample(families, "hub_agent_bridge_up", { bridge: "rcon" })).toBe(0);
  expect(sample(families, "hub_agent_quarantined_entries")).toBe(3);
  expect(sample(families, "hub_agent_ready")).toBe(1);
});

test("label values with quotes, backslashes and line breaks come back as they were; an unknown age is left out", () => {
  const families = parse(renderMetrics(view()));
  const caches = families.find((f) => f.name === "hub_agent_cache_age_seconds")!.metrics;
  expect(caches.map((m) => m.labels?.cache)).toEqual(["bans", 'we"ird\\name\n']);
});

test("without a run's snapshot: the store's numbers only, nothing unknown shown as zero", () => {
  const families = parse(renderMetrics(view({ snapshot: null, run: { alive: false, lock: "none", holder: null } })));
  expect(sample(families, "hub_agent_ready")).toBe(0);
  expect(sample(families, "hub_agent_queue_entries", { queue: "ban" })).toBe(2);
  for (const name of ["hub_agent_players_online", "hub_agent_api_reachable", "hub_agent_bridge_up"])
    expect(families.find((f) => f.name === name)).toBeUndefined();
});
