/**
 * `hub-agent status` beside a run with thousands of players online (the CLI run in this process, which holds the
 * instance lock as a `run` would): the players line names the first PLAYERS_NAMED and counts the rest, whatever the
 * player count; `--json` lists every one.
 */
import { expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PLAYERS_NAMED, type RunSnapshot, runStatusCache } from "../../lib/monitor/status.ts";
import { openStore } from "../../lib/store/index.ts";
import { holdInstance } from "../../lib/store/instance.ts";
import { hub } from "./binary.ts";

function snapshot(players: RunSnapshot["players"]): RunSnapshot {
  const now = new Date().toISOString();
  return {
    pid: process.pid,
    host: "here",
    started_at: now,
    mode: "run",
    state: "ready",
    ready_at: now,
    server_record: "api",
    service: {
      reachable: true,
      key_accepted: true,
      last_answer_at: now,
      last_error: null,
      last_429_at: null,
      rate_limited_until: null,
    },
    requests: [],
    jobs: [],
    players,
    bridge: { kind: "sim", state: "up", reason: null },
    http: null,
    unlocked: false,
  };
}

test("5,000 players online: `status` names the first ones and counts the rest, in one short line", async () => {
  const dir = mkdtempSync(join(tmpdir(), "hub-status-many-"));
  const storage = join(dir, "store");
  const store = await openStore({ dir: storage, fsync: false });
  const players = Array.from({ length: 5_000 }, (_, i) => ({ id: String(76561198400000000 + i), name: `Player${i}` }));
  await runStatusCache(store).set(snapshot(players));
  const instance = await holdInstance(storage);
  try {
    const env = { HUB_API_URL: "http://127.0.0.1:9/v1", HUB_API_KEY: "k", HUB_STORAGE_DIR: storage };
    const text = await hub(["status"], { env, cwd: dir });
    expect(text.code).toBe(0);
    const line = text.stdout.split("\n").find((l) => l.startsWith("players "))!;
    const named = players.slice(0, PLAYERS_NAMED).map((p) => p.name);
    expect(line).toBe(`players      5000 online: ${named.join(", ")} … and 4,950 more`);
    expect(line.length).toBeLessThan(1_000);
    const json = JSON.parse((await hub(["status", "--json"], { env, cwd: dir })).stdout);
    expect(json.snapshot.players).toHaveLength(5_000);
  } finally {
    await instance.release();
  }
});
