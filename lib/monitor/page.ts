/**
 * The status page at `/`: one self-contained document (inline CSS and script, no external asset, so it works on a
 * machine without internet access and leaks nothing), which fetches /status.json every few seconds and shows what
 * `hub-agent status` shows. Every value goes into the page as text (textContent), never as markup: player names
 * and error messages are not ours to trust.
 */
import { PLAYERS_NAMED } from "./status.ts";

export const REFRESH_MS = 5_000;

export const STATUS_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>hub-agent status</title>
<style>
  :root { color-scheme: light dark; --ok: #1a7f37; --bad: #cf222e; --warn: #9a6700; --muted: #6e7781; }
  body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5rem auto; max-width: 60rem; padding: 0 1rem; }
  h1 { font-size: 1.3rem; margin: 0 0 .2rem; }
  h2 { font-size: 1rem; margin: 1.4rem 0 .4rem; border-bottom: 1px solid #8884; padding-bottom: .2rem; }
  table { border-collapse: collapse; }
  th, td { text-align: left; padding: .15rem 2rem .15rem 0; vertical-align: top; }
  th { font-weight: 600; color: var(--muted); }
  .ok { color: var(--ok); } .bad { color: var(--bad); } .warn { color: var(--warn); } .muted { color: var(--muted); }
  #summary { font-size: 1.05rem; margin: .2rem 0; }
  #updated { font-size: .85rem; }
  code { font-size: .9em; }
  .server { margin: 1.5rem 0 2.5rem; } .server h2 { font-size: .95rem; }
  h2.server-name { font-size: 1.2rem; border-bottom-width: 2px; }
</style>
</head>
<body>
<h1>hub-agent</h1>
<div id="summary">loading…</div>
<div id="updated" class="muted"></div>
<main id="main"></main>
<script>
"use strict";
const REFRESH_MS = ${REFRESH_MS};
const $ = (tag, text, cls) => {
  const el = document.createElement(tag);
  if (text !== undefined && text !== null) el.textContent = String(text);
  if (cls) el.className = cls;
  return el;
};
const span = (s) => {
  if (s === null || s === undefined) return "—";
  const out = [];
  for (const [unit, n] of [["d", 86400], ["h", 3600], ["m", 60], ["s", 1]]) {
    if (s >= n || (unit === "s" && !out.length)) { out.push(Math.floor(s / n) + unit); s %= n; }
  }
  return out.slice(0, 2).join(" ");
};
const ago = (iso, now) => iso ? span(Math.max(0, Math.round((Date.parse(now) - Date.parse(iso)) / 1000))) + " ago" : "never";
function section(title, ...children) {
  const frag = document.createDocumentFragment();
  frag.append($("h2", title), ...children);
  return frag;
}
function table(head, rows) {
  const t = $("table");
  if (head) {
    const tr = $("tr");
    for (const h of head) tr.append($("th", h));
    t.append(tr);
  }
  for (const row of rows) {
    const r = $("tr");
    for (const c of row) r.append(c instanceof Node ? c : $("td", c));
    t.append(r);
  }
  return t;
}
const cell = (text, cls) => { const td = $("td"); td.append($("span", text, cls)); return td; };

// One run's status (v), or a host's: { now, servers: { name: v, or { running: false, why } } }.
function render(data) {
  const summary = document.getElementById("summary");
  const main = document.getElementById("main");
  summary.replaceChildren();
  main.replaceChildren();
  document.getElementById("updated").textContent = "updated " + new Date(data.now).toLocaleTimeString() + " · refreshes every " + REFRESH_MS / 1000 + " s";
  if (!data.servers) {
    summary.append(...runLine(data));
    return renderRun(data, main);
  }
  const names = Object.keys(data.servers);
  const up = names.filter((n) => data.servers[n].run && data.servers[n].run.alive).length;
  summary.append($("span", up + " of " + names.length + " servers running", up === names.length ? "ok" : "bad"));
  for (const name of names) {
    const v = data.servers[name];
    const box = $("section", undefined, "server");
    const line = $("p");
    if (v.run) line.append(...runLine(v)); else line.append($("span", "not running: " + v.why, "bad"));
    box.append($("h2", name, "server-name"), line);
    if (v.run) renderRun(v, box);
    main.append(box);
  }
}

function runLine(v) {
  const s = v.snapshot;
  if (!(v.run.alive && s)) return [$("span", "no run is alive", "bad")];
  return [$("span", s.state === "ready" ? "running" : s.state, s.state === "ready" ? "ok" : "warn"),
    " — pid " + s.pid + " on " + s.host + ", up " + span(Math.round((Date.parse(v.now) - Date.parse(s.started_at)) / 1000))];
}

function renderRun(v, main) {
  const s = v.snapshot;
  if (s) {
    const svc = s.service;
    main.append(section("Service", table(null, [
      ["reachable", cell(svc.reachable === null ? "not asked yet" : svc.reachable ? "yes" : "no", svc.reachable === false ? "bad" : svc.reachable ? "ok" : "muted")],
      ["API key", cell(svc.key_accepted === null ? "not checked yet" : svc.key_accepted ? "accepted" : "refused (401)", svc.key_accepted === false ? "bad" : svc.key_accepted ? "ok" : "muted")],
      ["last answer", ago(svc.last_answer_at, v.now)],
      ["last error", svc.last_error ? ago(svc.last_error.at, v.now) + ": " + svc.last_error.message : "none"],
      ["rate limited (429)", svc.rate_limited_until ? cell("until " + svc.rate_limited_until, "warn") : svc.last_429_at ? "last " + ago(svc.last_429_at, v.now) : "never"],
      ["server record", s.server_record === "cache" ? cell("from the cache (service unreachable at start)", "warn") : s.server_record === "api" ? "from the service" : "not loaded yet"],
    ])));
    main.append(section("Game", table(null, [
      ["bridge", cell(s.bridge.kind + ": " + s.bridge.state + (s.bridge.reason ? " (" + s.bridge.reason + ")" : ""), s.bridge.state === "up" ? "ok" : s.bridge.state === "down" ? "bad" : "muted")],
      ["players online", s.players.length + (s.players.length ? ": " + s.players.slice(0, ${PLAYERS_NAMED}).map((p) => p.name).join(", ") : "") +
        (s.players.length > ${PLAYERS_NAMED} ? " … and " + (s.players.length - ${PLAYERS_NAMED}).toLocaleString("en-US") + " more" : "")],
    ])));
    main.append(section("Jobs", table(["job", "every", "last success", "last error"],
      s.jobs.map((j) => [j.name, j.interval_s === null ? "once" : span(j.interval_s),
        cell(j.last_success_at ? ago(j.last_success_at, v.now) : j.runs ? "never" : "not run yet", j.last_success_at ? "" : "muted"),
        cell(j.last_error_at ? ago(j.last_error_at, v.now) + ": " + j.last_error : "none", j.last_error_at && (!j.last_success_at || j.last_error_at > j.last_success_at) ? "bad" : "muted")]))));
  }
  main.append(section("Queues", table(["queue", "entries", "waiting", "uncertain", "oldest"],
    v.queues.map((q) => [q.queue, cell(q.entries, q.entries ? "warn" : ""), q.waiting, cell(q.uncertain, q.uncertain ? "warn" : ""), span(q.oldest_age_s)]))));
  const d = v.sanctions_drain;
  if (d) {
    // As hub-agent status says it: a round still "running" by a run that is gone ended with it.
    const n = (x) => x.toLocaleString("en-US");
    const live = d.state === "running" && v.run.alive && v.run.holder && v.run.holder.pid === d.pid;
    const state = d.state === "done" ? "done " + ago(d.updated_at, v.now) : live ? cell("delivering now", "warn") : cell("interrupted " + ago(d.updated_at, v.now) + " (its run is gone)", "bad");
    const rows = [["round of " + n(d.total), state], ["left", cell(n(d.left), d.left ? "warn" : "ok")], ["settled", n(d.settled)],
      [d.state === "done" ? "rate (whole round)" : "rate (last 10 s)", d.rate_per_s + "/s"]];
    if (d.state === "done") rows.push(["took", span(Math.round((Date.parse(d.updated_at) - Date.parse(d.started_at)) / 1000))]);
    else if (live) rows.push(["time to empty", d.eta_s === null ? cell("nothing settling", "warn") : "about " + span(d.eta_s)]);
    if (d.paused_until && live) rows.push(["service asked to wait", cell("until " + d.paused_until, "warn")]);
    if (d.ended_early) rows.push(["ended early", cell(d.ended_early, "warn")]);
    main.append(section("Sanction delivery", table(null, rows)));
  }
  main.append(section("Caches", table(["cache", "written"], v.caches.map((c) => [c.name, c.age_s === null ? "in the future" : span(c.age_s) + " ago"]))));
  const q = v.quarantine;
  main.append(section("Quarantine", $("p", q.count ? q.count + " unreadable record(s) in " + q.dir + ": " + q.newest.map((f) => f.key).join(", ") : "none (" + q.dir + ")", q.count ? "warn" : "")));
}

async function refresh() {
  try {
    const res = await fetch("status.json", { cache: "no-store" });
    if (!res.ok) throw new Error("HTTP " + res.status);
    render(await res.json());
  } catch (e) {
    const summary = document.getElementById("summary");
    summary.replaceChildren($("span", "hub-agent does not answer (" + e.message + ")", "bad"));
  }
}
refresh();
setInterval(refresh, REFRESH_MS);
</script>
</body>
</html>
`;
