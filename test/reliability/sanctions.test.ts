/**
 * Exactly once, whatever crashes around it: the compiled binary is SIGKILLed the moment the service has handled its
 * ban, warning or unban and before the answer arrives (and `run` in the same window for bans): 50 times each where
 * the service carried it out (sent again, it would be a duplicate), 25 times each where it did nothing (settled
 * unsent, it would be lost). One delivery round later the service holds every intent exactly once. Answers slower
 * than api.timeout leave exactly one ban and one warning. The figures are printed as one summary line
 * (bench/reliability.ts runs more).
 */
import { beforeAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Sandbox } from "../../lib/sandbox/index.ts";
import { useSandbox } from "../support/sandbox.ts";
import { binary, hubBinary } from "../cli/binary.ts";
import { TIMEOUT_S, killScenarios, summary } from "./scenarios.ts";

const KILLS = 50;
/** Kills where the service did nothing: enough to catch an entry settled unsent, which no lookup would find. */
const KILLS_NOT_DONE = 25;

let sb: Sandbox;
let bin: string;
useSandbox((s) => (sb = s));
beforeAll(async () => void (bin = await binary()));

test(`SIGKILL after the service handled the request, ${KILLS}× (done) and ${KILLS_NOT_DONE}× (not done) each for ban, warn, unban and run: 0 lost, 0 duplicates`, async () => {
  const kills = { done: KILLS, "not done": KILLS_NOT_DONE };
  const figures = await killScenarios({ sb, bin, lanes: 4 }, kills);
  console.log(summary(figures));
  expect(figures).toHaveLength(8);
  for (const f of figures)
    expect(f).toEqual({ kind: f.kind, window: f.window, kills: kills[f.window], missed: 0, duplicates: 0, lost: 0 });
}, 240_000);

test("answers slower than api.timeout: exit 6, uncertain; queue retry finds them: exactly one ban and one warning", async () => {
  sb.control.reset();
  const env = {
    HUB_API_URL: sb.url,
    HUB_API_KEY: sb.key,
    HUB_API_SERVER_ID: sb.serverId,
    HUB_GAME_BRIDGE: "sim",
    HUB_API_TIMEOUT: String(TIMEOUT_S),
    HUB_STORAGE_DIR: mkdtempSync(join(tmpdir(), "hub-reliability-slow-")),
  };
  // Two players: a kept entry holds back its player's later ones, which would hide the warning's own fate.
  const [banned, warned] = ["76561198299999998", "76561198299999999"];
  // The service does the work at once and answers after three timeouts.
  for (const path of ["/ban/", "/warning/"])
    sb.control.latency(3 * TIMEOUT_S * 1000, { method: "POST", path }, { after: true });
  const [ban, warn] = await Promise.all([
    hubBinary(["ban", banned, "1h", "slow service ban", "--json"], { env }),
    hubBinary(["warn", warned, "slow service warning", "--json"], { env }),
  ]);
  for (const r of [ban, warn]) {
    expect(r.code).toBe(6);
    const out = JSON.parse(r.stdout);
    expect(out.status).toBe("queued");
    expect(out.error).toStartWith("uncertain: will be checked before it is sent again; POST /");
  }
  const status = JSON.parse((await hubBinary(["queue", "status", "--json"], { env })).stdout);
  const items = status.queues.flatMap((q: { items: unknown[] }) => q.items);
  expect(items).toHaveLength(2);
  for (const item of items) expect(item).toMatchObject({ attempts: 1, uncertain: true, last_lookup: null });

  // retry waits out the settle time by itself, then looks each up instead of sending it again.
  const retried = await Promise.all(
    [ban, warn].map((r) => hubBinary(["queue", "retry", JSON.parse(r.stdout).entry_id, "--json"], { env })),
  );
  for (const r of retried) expect([r.code, JSON.parse(r.stdout).status]).toEqual([0, "delivered"]);
  const userId = (id: string) => sb.state.findUser(id, "STEAM")?.id;
  const sent = (path: string, id: string) =>
    sb.control
      .requests({ method: "POST", path })
      .filter((r) => (r.body as { user_id?: string }).user_id === userId(id));
  expect([...sb.state.bans.values()].filter((b) => b.user_id === userId(banned))).toHaveLength(1);
  expect([...sb.state.warnings.values()].filter((w) => w.user_id === userId(warned))).toHaveLength(1);
  expect([sent("/ban/", banned).length, sent("/warning/", warned).length]).toEqual([1, 1]);
}, 60_000);
