/**
 * /metrics: the status view (lib/monitor/status.ts) in Prometheus' text exposition format 0.0.4 — `# HELP` and
 * `# TYPE` once per family, then one sample per line; label values escape `\`, `"` and line breaks. Every number
 * comes from the view, so the page, `hub-agent status` and the metrics never disagree (docs/monitoring.md).
 */
import type { StatusView } from "./status.ts";

export const METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

type Labels = Record<string, string>;
type Sample = [Labels, number];

const escape = (value: string) => value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");

interface Family {
  name: string;
  type: "gauge" | "counter";
  help: string;
  samples: Sample[];
}

/** A family with its samples; none without samples (a family without samples is not written). */
function family(name: string, type: Family["type"], help: string, samples: Sample[]): Family[] {
  return samples.length ? [{ name, type, help, samples }] : [];
}

function render(families: Family[]): string {
  const lines = families.flatMap(({ name, type, help, samples }) => [
    `# HELP ${name} ${help}`,
    `# TYPE ${name} ${type}`,
    ...samples.map(([labels, value]) => {
      const l = Object.entries(labels).map(([k, v]) => `${k}="${escape(v)}"`);
      return `${name}${l.length ? `{${l.join(",")}}` : ""} ${Number.isFinite(value) ? value : "NaN"}`;
    }),
  ]);
  return `${lines.join("\n")}\n`;
}

const seconds = (iso: string | null | undefined) => (iso ? Date.parse(iso) / 1000 : undefined);
const bool = (b: boolean) => (b ? 1 : 0);
/** One sample when the value is known, none otherwise (an unknown is not a zero). */
const known = (value: number | undefined | null, labels: Labels = {}): Sample[] =>
  value === undefined || value === null ? [] : [[labels, value]];

/** Every family's name starts with it. */
const p = "hub_agent_";
type Snapshot = StatusView["snapshot"];

export function renderMetrics(view: StatusView): string {
  return render(families(view));
}

/**
 * Several servers in one `run` (lib/app/host.ts): each family once, its samples labelled `server="<name>"`, and
 * hub_agent_server_running for every server (0 while its agent is not running: between restarts, or its file not
 * valid), whose other series are then absent, not zero.
 */
export function renderHostMetrics(servers: [name: string, view: StatusView | undefined][]): string {
  const byName = new Map<string, Family>();
  const running = family(
    `${p}server_running`,
    "gauge",
    "1 while this server's agent runs in this process, 0 while it does not.",
    servers.map(([server, view]) => [{ server }, bool(!!view)]),
  );
  for (const [server, view] of servers)
    for (const f of view ? families(view) : []) {
      const samples = f.samples.map(([labels, value]): Sample => [{ server, ...labels }, value]);
      const had = byName.get(f.name);
      if (had) had.samples.push(...samples);
      else byName.set(f.name, { ...f, samples });
    }
  return render([...running, ...byName.values()]);
}

function families(view: StatusView): Family[] {
  const s = view.snapshot;
  return [
    ...runFamilies(s),
    ...queueFamilies(view.queues),
    ...serviceFamilies(s, Date.parse(view.now)),
    ...jobFamilies(s?.jobs ?? []),
    ...gameFamilies(s),
    ...storeFamilies(view),
  ];
}

function runFamilies(s: Snapshot): Family[] {
  return [
    ...family(`${p}start_time_seconds`, "gauge", "When this run started (Unix time).", known(seconds(s?.started_at))),
    ...family(`${p}ready`, "gauge", "1 once hub_ready was emitted (the server record is loaded).", [
      [{}, bool(s?.state === "ready")],
    ]),
  ];
}

function queueFamilies(queues: StatusView["queues"]): Family[] {
  return [
    ...family(
      `${p}queue_entries`,
      "gauge",
      "Entries in each durable queue.",
      queues.map((q) => [{ queue: q.queue }, q.entries]),
    ),
    ...family(
      `${p}queue_waiting`,
      "gauge",
      "Entries of each queue that run still sends to the service.",
      queues.map((q) => [{ queue: q.queue }, q.waiting]),
    ),
    ...family(
      `${p}queue_uncertain`,
      "gauge",
      "Entries whose answer was lost: looked up at the service before they are sent again.",
      queues.map((q) => [{ queue: q.queue }, q.uncertain]),
    ),
    ...family(
      `${p}queue_oldest_age_seconds`,
      "gauge",
      "Age of the oldest entry of each queue (0 when it is empty).",
      queues.map((q) => [{ queue: q.queue }, q.oldest_age_s ?? 0]),
    ),
  ];
}

/** The service client's requests, reachability, key and 429 gate. */
function serviceFamilies(s: Snapshot, now: number): Family[] {
  return [
    ...family(
      `${p}api_requests_total`,
      "counter",
      "Requests to the service by endpoint and outcome (every attempt; gate_closed never left this process).",
      (s?.requests ?? []).map((r) => [{ method: r.method, endpoint: r.endpoint, outcome: r.outcome }, r.count]),
    ),
    ...family(
      `${p}api_reachable`,
      "gauge",
      "1 when the last request got an answer from the service, 0 when it got none (absent before the first).",
      known(s?.service.reachable === null || !s ? undefined : bool(s.service.reachable)),
    ),
    ...family(
      `${p}api_key_accepted`,
      "gauge",
      "0 after the service refused the API key (401) until it accepts it again (absent before the first answer).",
      known(s?.service.key_accepted === null || !s ? undefined : bool(s.service.key_accepted)),
    ),
    ...family(
      `${p}api_rate_limit_gate_seconds`,
      "gauge",
      "Seconds until requests may reach the service again after a 429 (0: the gate is open).",
      s ? [[{}, Math.max(0, ((seconds(s.service.rate_limited_until) ?? 0) * 1000 - now) / 1000)]] : [],
    ),
    ...family(
      `${p}api_last_rate_limited_timestamp_seconds`,
      "gauge",
      "When the service last answered 429 (Unix time).",
      known(seconds(s?.service.last_429_at)),
    ),
  ];
}

function jobFamilies(jobs: NonNullable<Snapshot>["jobs"]): Family[] {
  return [
    ...family(
      `${p}job_runs_total`,
      "counter",
      "Runs of each periodic job.",
      jobs.map((j) => [{ job: j.name }, j.runs]),
    ),
    ...family(
      `${p}job_failures_total`,
      "counter",
      "Runs of each periodic job that threw or met a failure of the service.",
      jobs.map((j) => [{ job: j.name }, j.failures]),
    ),
    ...family(
      `${p}job_last_success_timestamp_seconds`,
      "gauge",
      "When each periodic job last ran without a failure (Unix time).",
      jobs.flatMap((j) => known(seconds(j.last_success_at), { job: j.name })),
    ),
    ...family(
      `${p}job_last_error_timestamp_seconds`,
      "gauge",
      "When each periodic job last failed (Unix time).",
      jobs.flatMap((j) => known(seconds(j.last_error_at), { job: j.name })),
    ),
  ];
}

/** The players online and the bridge to the game. */
function gameFamilies(s: Snapshot): Family[] {
  return [
    ...family(`${p}players_online`, "gauge", "Players online in the game.", known(s?.players.length)),
    ...family(
      `${p}bridge_up`,
      "gauge",
      "1 when the game answers its console, 0 when it does not or is not known yet.",
      s ? [[{ bridge: s.bridge.kind }, bool(s.bridge.state === "up")]] : [],
    ),
  ];
}

/** The store's caches and quarantined records. */
function storeFamilies(view: StatusView): Family[] {
  return [
    ...family(
      `${p}cache_age_seconds`,
      "gauge",
      "How long ago each cache of the store was written.",
      view.caches.flatMap((c) => known(c.age_s, { cache: c.name })),
    ),
    ...family(
      `${p}quarantined_entries`,
      "gauge",
      "Unreadable records moved to the store's corrupt/ folder (until the operator removes them).",
      [[{}, view.quarantine.count]],
    ),
  ];
}
