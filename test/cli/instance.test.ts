/**
 * One `run` per storage directory, with real processes: two `run`s (or `run --once` from cron beside a service
 * `run`) on one store, `once` rewards open, counted in the sim game's actions log; and a `run` killed with SIGKILL.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { startSandbox, type Sandbox } from "../../lib/sandbox/index.ts";
import { actionsLog, jsonLines, logged, ready, startRun, type AgentRun } from "../support/agent-run.ts";
import { until } from "../support/until.ts";
import { binary, hubBinary } from "./binary.ts";

const PLAYERS = Array.from({ length: 3 }, (_, i) => ({ id: `765611980000001${10 + i}`, name: `Q${i}` }));
const FAST = { HUB_INTERVALS_REWARDS: "0.1", HUB_INTERVALS_QUEUES: "0.1", HUB_INTERVALS_STATUS: "0.2" };

let root: string;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "instance-proc-"));
  await binary();
}, 120_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The sandbox with users for PLAYERS and `n` open once rewards (DIRECT and CONNECT), whose ids it returns. */
async function withRewards(n: number): Promise<{ sb: Sandbox; once: string[] }> {
  const sb = await startSandbox({ seed: "empty" });
  const users = PLAYERS.map((p) => sb.state.addUser({ identifier: p.id, username: p.name }));
  const once: string[] = [];
  for (let i = 0; i < n; i++) {
    const a = sb.state.addReward({
      user_id: users[i % users.length]!.id,
      reward: { once: true, on_event: i % 3 ? "DIRECT" : "CONNECT", data: { command: "" } },
    });
    a.reward.data = { command: `once ${a.id}` };
    once.push(a.id);
  }
  return { sb, once };
}

/** How often each once reward's command reached the game. */
function onceCounts(dir: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const a of jsonLines(actionsLog(dir))) {
    const m = a.type === "exec" ? /^once (\S+)/.exec(String(a.command)) : null;
    if (m) counts.set(m[1]!, (counts.get(m[1]!) ?? 0) + 1);
  }
  return counts;
}

const exited = (r: AgentRun) => r.proc.exitCode !== null || r.proc.signalCode !== null;

/** The refused start's error lines (the log lines around it are JSON). */
const errorLines = (r: AgentRun) => r.lines().flatMap((l) => (typeof l.text === "string" ? [l.text] : []));

const holderLine = (pid: number) =>
  new RegExp(
    `^error: another hub-agent run holds this storage directory: pid ${pid} on host ${hostname()} since \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z \\(.*instance\\.lock\\); stop it first, or give this one its own storage\\.dir$`,
  );

test("two runs started together on one store: one serves, the other exits 7 naming it; every once reward runs once", async () => {
  const dir = mkdtempSync(join(root, "two-"));
  const { sb, once } = await withRewards(15);
  try {
    const runs = await Promise.all(["a", "b"].map((name) => startRun({ sb, dir, name, players: PLAYERS, env: FAST })));
    await until(() => runs.some(exited), "one of the two to give up");
    const loser = runs.find(exited)!;
    const winner = runs.find((r) => r !== loser)!;
    expect(await loser.proc.exited).toBe(7);
    expect(errorLines(loser)).toEqual([expect.stringMatching(holderLine(winner.proc.pid))]);
    await ready(winner);

    // `run --once` from cron beside it: refused the same way, and nothing of it reaches the game or the service.
    const cron = await startRun({ sb, dir, name: "cron", players: PLAYERS, args: ["--once"], env: FAST });
    expect(await cron.proc.exited).toBe(7);
    expect(errorLines(cron)).toEqual([expect.stringMatching(holderLine(winner.proc.pid))]);
    // One-shot commands do not take the instance lock: they work beside `run`.
    const status = await hubBinary(["queue", "status", "--json"], {
      env: {
        HUB_STORAGE_DIR: join(dir, "store"),
        HUB_API_URL: sb.url,
        HUB_API_KEY: sb.key,
        HUB_API_SERVER_ID: sb.serverId,
        HUB_GAME_BRIDGE: "sim",
      },
    });
    expect(status.code).toBe(0);

    const reported = () => once.every((id) => sb.state.appliedRewards.get(id)?.executed_on.includes(sb.serverId));
    await until(reported, "every once reward reported", { timeoutMs: 30_000 });
    winner.proc.kill("SIGTERM");
    expect(await winner.proc.exited).toBe(0);
    const counts = onceCounts(dir);
    expect(once.map((id) => counts.get(id) ?? 0)).toEqual(once.map(() => 1));
    // Only the winner ever spoke to the service as this server.
    expect(loser.lines().some((l) => l.msg === "ready")).toBe(false);
    expect(cron.lines().some((l) => l.msg === "ready")).toBe(false);
  } finally {
    await sb.stop();
  }
}, 90_000);

test("a run killed with SIGKILL leaves its lock; the next run takes over at once and says from whom", async () => {
  const dir = mkdtempSync(join(root, "killed-"));
  const { sb } = await withRewards(0);
  try {
    const first = await startRun({ sb, dir, name: "first", players: PLAYERS });
    await ready(first);
    first.proc.kill("SIGKILL");
    await first.proc.exited;
    const next = await startRun({ sb, dir, name: "next", players: PLAYERS });
    // Well under the short lock's minute: the dead pid is seen as dead, not waited out.
    await ready(next, 15_000);
    await logged(
      next,
      (l) =>
        String(l.msg).startsWith(
          `took over the storage directory from a run that is gone (pid ${first.proc.pid} on ${hostname()}`,
        ),
      "the take-over line",
    );
    next.proc.kill("SIGTERM");
    expect(await next.proc.exited).toBe(0);
    // A clean stop removes the lock: the run after it takes over from nobody.
    const third = await startRun({ sb, dir, name: "third", players: PLAYERS, args: ["--once"] });
    expect(await third.proc.exited).toBe(0);
    expect(third.lines().some((l) => String(l.msg).startsWith("took over"))).toBe(false);
  } finally {
    await sb.stop();
  }
}, 60_000);
