/**
 * Rewards of many players: asked in chunks under the URL limit (the sandbox refuses a request line over 8 KiB, as
 * nginx does), each chunk standing for its own players, every reward run exactly once.
 */
import { afterEach, expect, test } from "bun:test";
import { MAX_URL_BYTES } from "../../lib/api/client.ts";
import { rewards } from "../../lib/features/rewards.ts";
import { GENERATED_ID_BASE } from "../../lib/game/sim.ts";
import { SEED_IDS } from "../../lib/sandbox/index.ts";
import { harness, until, type Harness } from "../agent/harness.ts";

const MIN = 60_000;
const N = 300;
let h: Harness;
afterEach(() => h?.close());

const steam = (i: number) => String(GENERATED_ID_BASE + BigInt(i));
const execs = () => h.sim.actionsOf("exec").map((a) => a.command ?? "");
const gets = () => h.sb.control.requests({ method: "GET", path: "/packet/reward/applied/user" });
const usersIn = (r: { query: [string, string][] }) => r.query.filter(([k]) => k === "user_id").map(([, v]) => v);

async function fullServer() {
  // A long request timeout: 300 lookups at once on a busy machine must not fail (and wait a minute to be retried).
  h = await harness({
    features: [rewards],
    sim: { maxPlayers: N },
    pace: { perSecond: 100_000, burst: 100_000 },
    timeoutMs: 30_000,
  });
  await h.agent.start();
  for (let i = 0; i < N; i++) h.sim.join({ id: steam(i), name: `P${i}` });
  await until(() => h.events.filter((e) => e === "hub_ply_initialized").length === N, `${N} players`, 60_000);
  await h.idle();
}
const userOf = (i: number) => h.agent.users.get(steam(i))!.id;
function give(i: number, command: string, once: boolean) {
  return h.sb.state.addReward({
    user_id: userOf(i),
    reward: { serverbundle_id: SEED_IDS.serverbundle, on_event: "DIRECT", once, data: { command } },
  });
}

test("300 players: a round is several requests under 4 KiB of URL, each user once, every reward run once", async () => {
  await fullServer();
  const first = give(0, "first", true);
  const middle = give(150, "middle", true);
  const last = give(N - 1, "last", true);
  h.sb.control.clearRequests();
  await h.clock.advance(MIN);
  await h.idle();

  const round = gets();
  expect(round.length).toBeGreaterThanOrEqual(Math.ceil((N * 45) / MAX_URL_BYTES));
  expect(round.map((r) => r.status)).toEqual(round.map(() => 200));
  const base = new URL(h.sb.url).pathname;
  for (const r of round)
    expect(`${base}${r.path}?${new URLSearchParams(r.query)}`.length).toBeLessThanOrEqual(MAX_URL_BYTES);
  const asked = round.flatMap(usersIn);
  expect(asked).toHaveLength(N);
  expect(new Set(asked).size).toBe(N);
  expect(execs().sort()).toEqual(["first", "last", "middle"]);
  for (const r of [first, middle, last])
    expect(h.sb.state.appliedRewards.get(r.id)!.executed_on).toEqual([h.sb.serverId]);

  await h.clock.advance(MIN);
  await h.idle();
  expect(execs()).toHaveLength(3);
}, 60_000);

test("a chunk that fails: its players keep their last known rewards, nothing runs twice, the others are refreshed", async () => {
  await fullServer();
  const repeating = give(150, "repeating", false);
  const once = give(151, "once", true);
  await h.clock.advance(MIN);
  await h.idle();
  expect(execs().sort()).toEqual(["once", "repeating"]);
  expect(h.sb.state.appliedRewards.get(once.id)!.executed_on).toEqual([h.sb.serverId]);

  // From now on the chunk holding players 150 and 151 fails (a 502 from a proxy), the others answer.
  const failing = userOf(150);
  const real = h.api.getAppliedRewards;
  h.api.getAppliedRewards = (q) =>
    q.userIds.includes(failing)
      ? Promise.resolve({
          ok: false,
          error: {
            kind: "ServerError",
            status: 502,
            endpoint: "GET /packet/reward/applied/user",
            message: "bad gateway",
          },
        })
      : real(q);
  // Their last known list (from before the once reward's PATCH) still holds it: only the agent's memory of the
  // PATCH stops it, which a failed chunk must not clear.
  const elsewhere = give(0, "elsewhere", true);
  await h.clock.advance(MIN);
  await h.idle();
  expect(execs().sort()).toEqual(["elsewhere", "once", "repeating", "repeating"]);
  expect(h.logger.lines.some((l) => /applied rewards not refreshed for \d+ of 300 players: .*502/.test(l.msg))).toBe(
    true,
  );
  expect(h.sb.state.appliedRewards.get(elsewhere.id)!.executed_on).toEqual([h.sb.serverId]);
  void repeating;

  // Back: the chunk is refreshed again; still nothing twice.
  h.api.getAppliedRewards = real;
  await h.clock.advance(MIN);
  await h.idle();
  expect(execs().filter((c) => c === "once")).toHaveLength(1);
  expect(execs().filter((c) => c === "elsewhere")).toHaveLength(1);
}, 60_000);

test("the service away: a round's refresh stops at the first network failure, not one wait per chunk", async () => {
  await fullServer();
  const real = h.api.getAppliedRewards;
  let asked = 0;
  h.api.getAppliedRewards = (q) => {
    asked++;
    return real(q);
  };
  await h.sb.control.down();
  await h.clock.advance(MIN);
  await h.idle();
  // Every chunk would wait out its own timeouts and retries: a full server's round would last many minutes.
  expect(asked).toBe(1);
  expect(h.logger.lines.some((l) => /applied rewards not refreshed for 300 of 300 players/.test(l.msg))).toBe(true);

  await h.sb.control.up();
  const back = give(299, "back", true);
  await h.clock.advance(MIN);
  await h.idle();
  expect(execs()).toEqual(["back"]);
  expect(h.sb.state.appliedRewards.get(back.id)!.executed_on).toEqual([h.sb.serverId]);
}, 60_000);
