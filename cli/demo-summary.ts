/** The closing summary of `hub-agent demo` as a person reads it (lib/app/demo-recorder.ts records it). */
import type { DemoSummary } from "../lib/app/demo.ts";

/** "200: 40, 404: 2" (a 404 is a player the service does not know yet: hub-agent then registers them). */
const statuses = (by: Record<string, number>) =>
  Object.entries(by)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([status, n]) => `${status === "0" ? "unanswered" : status}: ${n}`)
    .join(", ");

/** The summary as a person reads it. */
export function summaryLines(s: DemoSummary): string[] {
  const list = (items: string[]) => (items.length ? `${items.length}: ${items.join(", ")}` : "none");
  const length = (sec: number | null) =>
    sec === null ? "permanently" : sec % 3600 === 0 ? `for ${sec / 3600}h` : `for ${Math.round(sec / 60)}m`;
  const row = (label: string, text: string) => `  ${label.padEnd(15)} ${text}`;
  return [
    `what happened in ${s.duration_s} s:`,
    row("players joined", list(s.players_joined.map((p) => (p.joins > 1 ? `${p.name} (${p.joins}×)` : p.name)))),
    row("kicked", list(s.kicked.map((k) => k.name))),
    row(
      "bans issued",
      list(s.bans_issued.map((b) => `${b.player} ${length(b.length_s)} by ${b.by}${b.reason ? ` (${b.reason})` : ""}`)),
    ),
    row("rewards run", list(s.rewards_run.map((r) => `${r.reward} for ${r.player}`))),
    row("adverts shown", list(s.adverts_shown)),
    row("messages", `${s.messages_to_players} to players, ${s.broadcast_lines} broadcast lines`),
    row("service", `${s.requests.total} requests (${statuses(s.requests.by_status)})`),
    "",
    "try it yourself against the same service: see README.md, Getting started (`hub-agent sandbox`).",
  ];
}
