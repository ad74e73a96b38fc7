import { defineCommand } from "citty";
import { globalArgs, createContext, serverHeading, type Context } from "../context.ts";
import { EXIT } from "../exit.ts";
import { type StatusView, agentStatus, playersOnline } from "../../lib/app/status.ts";
import { drainLine } from "../../lib/sanctions/drain.ts";
import { helpMeta } from "../args.ts";

/** A snapshot older than this while its run is alive: the run has stopped saving it (3 missed heartbeats). */
const STUCK_S = 90;

export default defineCommand({
  meta: helpMeta({
    examples: [
      ["hub-agent status", "is a run alive, and what is it doing"],
      ["hub-agent status --json", "the same for a script"],
    ],
  }),
  args: { ...globalArgs },
  async run({ args, data }) {
    const ctx = createContext(args, data);
    const choice = await ctx.servers();
    if (choice.kind === "all") return everyServer(ctx, choice.names);
    const view = await agentStatus({ config: await ctx.config({ readOnly: true }), logger: ctx.logger });
    ctx.emit(view);
    if (!ctx.json) for (const line of statusLines(view)) ctx.say(line);
    ctx.exit(view.run.alive ? EXIT.OK : EXIT.FAILURE);
  },
});

/** Several servers (servers.d) and no --server: each one's status, under its name; exit 0 when every run is alive. */
async function everyServer(ctx: Context, names: string[]): Promise<void> {
  const views: Record<string, StatusView> = {};
  for (const server of names)
    views[server] = await agentStatus({ config: await ctx.config({ readOnly: true, server }), logger: ctx.logger });
  ctx.emit({ servers: views });
  if (!ctx.json)
    for (const [server, view] of Object.entries(views)) {
      ctx.say(serverHeading(server));
      for (const line of statusLines(view)) ctx.say(line);
    }
  ctx.exit(Object.values(views).every((v) => v.run.alive) ? EXIT.OK : EXIT.FAILURE);
}

/** `2h 3m`, `45s`: the two largest units. */
export function span(seconds: number | null): string {
  if (seconds === null) return "an unknown time (dated in the future)";
  const out: string[] = [];
  let rest = Math.max(0, Math.round(seconds));
  for (const [unit, n] of [
    ["d", 86_400],
    ["h", 3_600],
    ["m", 60],
    ["s", 1],
  ] as const) {
    if (rest >= n || (unit === "s" && !out.length)) {
      out.push(`${Math.floor(rest / n)}${unit}`);
      rest %= n;
    }
  }
  return out.slice(0, 2).join(" ");
}

const row = (label: string, text: string) => `${label.padEnd(12)} ${text}`;
const indent = (text: string) => `${"".padEnd(12)} ${text}`;

/** Times as the status says them, from the view's own clock. */
function clockOf(v: StatusView) {
  const now = Date.parse(v.now);
  const since = (iso: string) => span(Math.round((now - Date.parse(iso)) / 1000));
  const ago = (iso: string | null) => (iso ? `${since(iso)} ago` : "never");
  return { since, ago };
}

function statusLines(v: StatusView): string[] {
  return [...runLines(v), ...liveLines(v), ...storeLines(v), ...savedLines(v)];
}

/** Whether a run is alive on this store, and what it is doing or how the last one ended. */
function runLines(v: StatusView): string[] {
  const { since, ago } = clockOf(v);
  const s = v.snapshot;
  const lines: string[] = [];
  const h = v.run.holder;
  if (v.run.alive && h) {
    const started = s?.started_at ?? h.since;
    const state = !s
      ? "it has not saved its status yet"
      : s.state === "ready"
        ? `ready (server record from ${s.server_record === "cache" ? "the cache: the service did not answer at start" : "the service"})`
        : s.state === "starting"
          ? "starting: waiting for the server record"
          : s.state;
    lines.push(row("run", `alive: pid ${h.pid} on ${h.host}, up ${since(started)} (since ${started}); ${state}`));
  } else if (v.run.lock === "foreign" && h) {
    lines.push(
      row(
        "run",
        `held by pid ${h.pid} on host ${h.host} since ${h.since}: a run on another host can't be checked from here`,
      ),
    );
  } else {
    const which = s && `the last one${s.mode === "once" ? " (run --once)" : ""}, pid ${s.pid} on ${s.host}`;
    const last = !s
      ? "no run has saved its status in this storage directory yet"
      : s.state === "stopped"
        ? `${which}, stopped ${ago(s.written_at)}`
        : `${which}, ended without stopping (killed, crashed or the machine restarted); its last status is ${span(s.age_s)} old`;
    lines.push(row("run", `no hub-agent run is alive (storage ${v.storage_dir}); ${last}`));
  }

  return lines;
}

/** A live run's service, game, players and jobs. */
function liveLines(v: StatusView): string[] {
  const { ago } = clockOf(v);
  const s = v.snapshot;
  const lines: string[] = [];
  if (s && v.run.alive) {
    const svc = s.service;
    const reach = svc.reachable === null ? "not asked yet" : svc.reachable ? "reachable" : "unreachable";
    const key = svc.key_accepted === null ? "" : svc.key_accepted ? ", API key accepted" : ", API key refused (401)";
    const limited = svc.rate_limited_until
      ? `rate limited (429) until ${svc.rate_limited_until}`
      : `last 429: ${ago(svc.last_429_at)}`;
    lines.push(row("service", `${reach}${key}; last answer ${ago(svc.last_answer_at)}; ${limited}`));
    if (svc.last_error) lines.push(indent(`last error ${ago(svc.last_error.at)}: ${svc.last_error.message}`));
    const b = s.bridge;
    lines.push(row("game", `${b.kind}: ${b.state}${b.reason ? ` (${b.reason})` : ""}`));
    lines.push(row("players", playersOnline(s.players)));
    const width = Math.max(0, ...s.jobs.map((j) => j.name.length));
    s.jobs.forEach((j, i) => {
      const every = j.interval_s === null ? "once" : `every ${span(j.interval_s)}`;
      const success = j.last_success_at
        ? `last success ${ago(j.last_success_at)}`
        : j.runs
          ? "no success yet"
          : "not run yet";
      const error = j.last_error_at ? `; last error ${ago(j.last_error_at)}: ${j.last_error}` : "";
      const text = `${j.name.padEnd(width)}  ${every.padEnd(11)} ${j.running ? "running; " : ""}${success}${error}`;
      lines.push(i === 0 ? row("jobs", text) : indent(text));
    });
    if (!s.jobs.length) lines.push(row("jobs", "none yet (they start at hub_ready)"));
    if (s.unlocked)
      lines.push(indent("started without the instance lock (the store refused writes): rewards and playtime are off"));
  }

  return lines;
}

/** What the store holds: queues, the last long delivery round, caches, quarantine. */
function storeLines(v: StatusView): string[] {
  const { ago } = clockOf(v);
  const h = v.run.holder;
  const lines: string[] = [];
  const queues = v.queues.map((q) => {
    if (!q.entries) return `${q.queue} 0`;
    const parts = [`${q.waiting} waiting`, `oldest ${span(q.oldest_age_s)}`];
    if (q.uncertain) parts.push(`${q.uncertain} uncertain`);
    return `${q.queue} ${q.entries} (${parts.join(", ")})`;
  });
  lines.push(row("queues", queues.join(" · ")));
  const d = v.sanctions_drain;
  // A round still "running" by a run that is gone ended with it; its last figures are shown as such.
  if (d && (d.state === "done" || (v.run.alive && h?.pid === d.pid)))
    lines.push(
      indent(`${d.state === "running" ? "delivering now" : `last long round ${ago(d.updated_at)}`}: ${drainLine(d)}`),
    );
  else if (d) lines.push(indent(`a round interrupted ${ago(d.updated_at)} (its run is gone): ${drainLine(d)}`));
  lines.push(row("caches", v.caches.map((c) => `${c.name} ${span(c.age_s)}`).join(" · ") || "none"));
  const q = v.quarantine;
  lines.push(
    row(
      "quarantine",
      q.count
        ? `${q.count} unreadable record(s) moved to ${q.dir}, newest ${ago(q.newest[0]?.at ?? null)}: ${q.newest.map((f) => f.key).join(", ")}${q.count > q.newest.length ? ", …" : ""}`
        : `none (${q.dir})`,
    ),
  );
  return lines;
}

/** A live run's status page and how fresh its saved status is. */
function savedLines(v: StatusView): string[] {
  const s = v.snapshot;
  const lines: string[] = [];
  if (s && v.run.alive) {
    if (s.http) lines.push(row("http", s.http.url ?? `not listening: ${s.http.error}`));
    const stuck = s.age_s > STUCK_S;
    lines.push(
      row(
        "saved",
        `${span(s.age_s)} ago${stuck ? ": the run is alive but has stopped saving its status; it may be stuck (SIGSTOP, a paused machine) or its store refuses writes" : ""}`,
      ),
    );
  }
  return lines;
}
