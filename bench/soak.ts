/**
 * A day of a busy server in fast motion: the compiled agent (`run` with the sim bridge) with 5,000 players online, a
 * player replaced every so often so that 100,000 distinct players come by over 24 simulated hours, against the
 * in-memory service. Every interval and the request pace are divided by `--scale`. Some players hold a reward (once,
 * DIRECT), a VIP membership or a ban, so every job has work. Every half simulated hour the agent collects all its
 * garbage and reports its heap and RSS; the bench prints them as a table, writes them as an SVG plot (`--svg`,
 * default docs/soak.svg) and says whether the heap after the last hour is within 10 % of the heap after the first.
 *
 * The scale must be one the machine can serve: ×12 (two real hours for a day) is what bench/load.ts finds for 5,000
 * players on two cores. At a higher one the agent falls behind, and its heap then holds the work waiting (pending
 * requests and handlers), growing without telling anything about what it keeps per player: the bench checks the
 * status and group rounds against those due and says so. BENCH_HEAP_TYPES=1 adds the heap's object counts by type to
 * each sample (bench/agent-sim.ts), to find what grows.
 *
 * Run: npm run bench:soak [-- --hours 24 --scale 12 --online 5000 --distinct 100000 --svg docs/soak.svg]
 */
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { SPEC_INTERVALS } from "../lib/config/schema.ts";
import { GENERATED_ID_BASE } from "../lib/game/sim.ts";
import { SEED_IDS, startSandbox } from "../lib/sandbox/index.ts";
import { agentEnv, build, freePort, jobTally, refusals, root } from "./agent-env.ts";

const arg = (name: string, fallback: number) => Number(process.argv[process.argv.indexOf(`--${name}`) + 1]) || fallback;
const hours = arg("hours", 24);
const scale = arg("scale", 12);
const online = arg("online", 5000);
const distinct = arg("distinct", 100_000);
const svgAt = process.argv.includes("--svg") ? process.argv[process.argv.indexOf("--svg") + 1]! : "docs/soak.svg";
const seconds = (hours * 3600) / scale;
const hourSeconds = 3600 / scale;

const agent = build("bench/agent-sim.ts", "agent");
const sb = await startSandbox({ requestLog: 100 });
// The players are known to the service (a server's regulars); one in 50 holds a reward, one in 100 VIP, one in 1,000
// is banned (kicked at every join, the place filled by the next).
const steam = (k: number) => String(GENERATED_ID_BASE + BigInt(k));
for (let k = 0; k < distinct; k++) {
  const user = sb.state.addUser({ identifier: steam(k), username: `Player${k}` });
  if (k % 50 === 7)
    sb.state.addReward({
      user_id: user.id,
      reward: {
        serverbundle_id: SEED_IDS.serverbundle,
        on_event: "DIRECT",
        once: true,
        data: { command: `give %steamid64% ${k}` },
      },
    });
  if (k % 100 === 3)
    sb.state.addMembership({ user_id: user.id, group_id: SEED_IDS.groups.vip, serverbundle_id: SEED_IDS.serverbundle });
  if (k % 1000 === 500) sb.state.addBan({ user_id: user.id, reason: "soak" });
}

const port = await freePort();
const env = agentEnv(sb, {
  players: { online, churn: (distinct - online) / (hours * 3600), distinct },
  scale,
  seconds,
  port,
  sampleSeconds: hourSeconds / 2,
});
const refused = refusals(sb);
const tally = Bun.sleep((seconds - 3) * 1000).then(() => jobTally(port));
console.error(`soak: ${hours} simulated hours in ${(seconds / 60).toFixed(1)} real minutes (×${scale})…`);
const p = Bun.spawn([agent], { env, stdout: "pipe", stderr: "inherit" });
// Each sample is echoed to stderr as it comes, so a long run shows its course.
let out = "";
for await (const chunk of p.stdout.pipeThrough(new TextDecoderStream())) {
  out += chunk;
  process.stderr.write(chunk);
}
const code = await p.exited;
refused.stop();
const jobs = await tally;
await sb.stop();
if (code !== 0) throw new Error(`the agent exited ${code}`);

interface Sample {
  t: number;
  heap: number;
  rss: number;
  online: number;
  distinct: number;
}
const samples = out
  .split("\n")
  .filter((l) => l.startsWith("{"))
  .map((l) => JSON.parse(l) as Sample)
  .map((s) => ({ ...s, hour: s.t / hourSeconds }));
const MB = 1024 * 1024;
const first = samples.find((s) => s.hour >= 0.99) ?? samples[0]!;
const last = samples.at(-1)!;
const drift = (last.heap - first.heap) / first.heap;

console.log(`${hours} simulated hours (×${scale}), ${online} online, ${last.distinct} distinct players\n`);
console.log(
  "sim. hour".padStart(9) +
    "distinct".padStart(10) +
    "online".padStart(8) +
    "heap MB".padStart(9) +
    "RSS MB".padStart(8),
);
for (const s of samples)
  console.log(
    s.hour.toFixed(1).padStart(9) +
      String(s.distinct).padStart(10) +
      String(s.online).padStart(8) +
      (s.heap / MB).toFixed(1).padStart(9) +
      (s.rss / MB).toFixed(1).padStart(8),
  );
console.log(
  `\nheap after full GC: ${(first.heap / MB).toFixed(1)} MB after the first hour, ${(last.heap / MB).toFixed(1)} MB at the end (${drift >= 0 ? "+" : ""}${(drift * 100).toFixed(1)} %): ${Math.abs(drift) <= 0.1 ? "within" : "NOT within"} 10 %`,
);
const failed = jobs.filter((j) => j.failures);
console.log(
  `jobs: ${failed.length ? failed.map((j) => `${j.job} ${j.failures}/${j.runs} failed`).join(", ") : `all ${jobs.length} succeeded (${jobs.map((j) => `${j.job} ${j.runs}`).join(", ")})`}`,
);
// A machine that cannot serve the scale falls behind: then the heap holds queued work, not what the agent keeps.
const pace = ["status", "groups"].map((job) => {
  const due = Math.floor((hours * 3600) / SPEC_INTERVALS[job as "status" | "groups"]);
  return { job, runs: jobs.find((j) => j.job === job)?.runs ?? 0, due };
});
const behind = pace.some((j) => j.runs < 0.8 * j.due);
console.log(
  `rounds: ${pace.map((j) => `${j.job} ${j.runs} of ${j.due}`).join(", ")}: ${behind ? "FELL BEHIND (use a lower --scale)" : "kept up"}`,
);
console.log(`requests refused: ${[...refused.counts].map(([k, n]) => `${k} ×${n}`).join(", ") || "none"}`);

writeFileSync(resolve(root, svgAt), plot(samples, { hours, scale, online, distinct: last.distinct }));
console.log(`plot: ${svgAt}`);

/** The samples as an SVG line chart, written by hand: heap after full GC and RSS (MB) over simulated hours. */
function plot(
  points: (Sample & { hour: number })[],
  o: { hours: number; scale: number; online: number; distinct: number },
) {
  const W = 720;
  const H = 360;
  const m = { left: 56, right: 20, top: 40, bottom: 48 };
  const maxMb = Math.ceil(Math.max(...points.map((s) => s.rss / MB)) / 20) * 20;
  const x = (h: number) => m.left + (h / o.hours) * (W - m.left - m.right);
  const y = (mb: number) => H - m.bottom - (mb / maxMb) * (H - m.top - m.bottom);
  const line = (pick: (s: Sample) => number) =>
    points.map((s, i) => `${i ? "L" : "M"}${x(s.hour).toFixed(1)},${y(pick(s) / MB).toFixed(1)}`).join(" ");
  const grid: string[] = [];
  for (let mb = 0; mb <= maxMb; mb += 20)
    grid.push(
      `<line x1="${m.left}" x2="${W - m.right}" y1="${y(mb)}" y2="${y(mb)}" stroke="#ddd"/>`,
      `<text x="${m.left - 8}" y="${y(mb) + 4}" text-anchor="end">${mb}</text>`,
    );
  for (let h = 0; h <= o.hours; h += Math.max(1, Math.round(o.hours / 8)))
    grid.push(`<text x="${x(h)}" y="${H - m.bottom + 18}" text-anchor="middle">${h}</text>`);
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" font-family="sans-serif" font-size="12">
<rect width="${W}" height="${H}" fill="#fff"/>
<text x="${m.left}" y="20" font-size="14">hub-agent run: ${o.online} online, ${o.distinct} distinct players over ${o.hours} simulated hours (×${o.scale})</text>
${grid.join("\n")}
<line x1="${m.left}" x2="${m.left}" y1="${m.top}" y2="${H - m.bottom}" stroke="#333"/>
<line x1="${m.left}" x2="${W - m.right}" y1="${H - m.bottom}" y2="${H - m.bottom}" stroke="#333"/>
<text x="${(m.left + W - m.right) / 2}" y="${H - 8}" text-anchor="middle">simulated hours</text>
<text transform="translate(14 ${(m.top + H - m.bottom) / 2}) rotate(-90)" text-anchor="middle">MB</text>
<path d="${line((s) => s.rss)}" fill="none" stroke="#d9822b" stroke-width="2"/>
<path d="${line((s) => s.heap)}" fill="none" stroke="#2b6cb0" stroke-width="2"/>
<text x="${W - m.right - 200}" y="${m.top + 4}" fill="#d9822b">RSS</text>
<text x="${W - m.right - 200}" y="${m.top + 20}" fill="#2b6cb0">heap after a full GC</text>
</svg>
`;
}
