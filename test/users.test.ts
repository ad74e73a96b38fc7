/**
 * The player → user map forgets: online players and those gone less than USER_KEEP_MS (at most USER_KEEP_MAX) are
 * kept. A player forgotten and back is looked up again (found, not created), gets no `once` reward twice and keeps
 * counting playtime on the same user.
 */
import { afterEach, expect, test } from "bun:test";
import { playtime } from "../lib/features/playtime.ts";
import { rewards } from "../lib/features/rewards.ts";
import { GENERATED_ID_BASE } from "../lib/game/sim.ts";
import { SEED_IDS } from "../lib/sandbox/index.ts";
import { USER_KEEP_MAX, USER_KEEP_MS } from "../lib/users.ts";
import { harness, until, type Harness } from "./agent/harness.ts";

let h: Harness;
afterEach(() => h?.close());

const ALICE = { id: SEED_IDS.steamid64.alice, name: "Alice" };
const BOB = { id: SEED_IDS.steamid64.bob.replace(/2$/, "9"), name: "Bob" };
const VIP = SEED_IDS.appliedRewards.alice_vip_command;
const initialised = () => h.events.filter((e) => e === "hub_ply_initialized").length;

async function join(p: { id: string; name: string }) {
  const before = initialised();
  h.sim.join(p);
  await until(() => initialised() > before, `${p.name} initialised`);
  await h.idle();
}
async function leave(id: string) {
  h.sim.leave(id);
  await h.idle();
}

test("a player gone longer than USER_KEEP_MS is forgotten; back, they are found again, nothing runs twice", async () => {
  h = await harness({ features: [rewards, playtime] });
  await h.agent.start();
  await h.idle();
  await join(ALICE);
  expect(h.sim.actionsOf("exec")).toHaveLength(1); // her VIP (CONNECT, once)
  await h.clock.advance(30 * 60_000); // half an hour played
  await h.idle();
  await leave(ALICE.id);
  expect(h.agent.users.get(ALICE.id)?.id).toBe(SEED_IDS.users.alice); // a quick rejoin needs no lookup

  await h.clock.advance(USER_KEEP_MS - 1000);
  await join(BOB);
  expect(h.agent.users.get(ALICE.id)).toBeDefined();
  await h.clock.advance(2000);
  await leave(BOB.id); // any join or leave sweeps
  expect(h.agent.users.get(ALICE.id)).toBeUndefined();
  expect(h.agent.users.size).toBe(1); // Bob, gone a moment ago

  h.sb.control.clearRequests();
  await join(ALICE);
  const lookups = h.sb.control.requests({ path: /^\/user\/?/ }).map((r) => `${r.method} ${r.path} ${r.status}`);
  expect(lookups).toEqual([`GET /user/${ALICE.id} 200`]);
  expect(h.agent.users.get(ALICE.id)?.id).toBe(SEED_IDS.users.alice);
  expect(h.sim.actionsOf("exec")).toHaveLength(1);
  expect(h.sb.state.appliedRewards.get(VIP)!.executed_on).toEqual([h.sb.serverId]);
  await h.clock.advance(30 * 60_000);
  await h.idle();
  await leave(ALICE.id);
  await h.clock.advance(h.config.intervals.playtime * 1000);
  await h.idle();
  // Both half hours, on her one user.
  const sent = h.sb.state.attributes.filter((a) => a.user_id === SEED_IDS.users.alice);
  expect(sent.reduce((sum, a) => sum + Number(a.value), 0)).toBeCloseTo(1, 2);
});

test("at most USER_KEEP_MAX players who left are kept, the oldest forgotten first", async () => {
  h = await harness({ sim: { maxPlayers: 10 }, pace: { perSecond: 100_000, burst: 100_000 }, timeoutMs: 30_000 });
  await h.agent.start();
  await h.idle();
  const n = USER_KEEP_MAX + 50;
  const player = (i: number) => ({ id: String(GENERATED_ID_BASE + BigInt(i)), name: `P${i}` });
  for (let i = 0; i < n; i++) {
    h.sim.join(player(i));
    await until(() => h.agent.users.get(player(i).id) !== undefined, `P${i}'s user`);
    h.sim.leave(player(i).id);
  }
  await h.idle();
  expect(h.agent.users.size).toBe(USER_KEEP_MAX);
  expect(h.agent.users.get(player(49).id)).toBeUndefined();
  expect(h.agent.users.get(player(50).id)).toBeDefined();
}, 60_000);

test("a player another request registers between our 404 and our create is said as found, not as registered by us", async () => {
  h = await harness({ features: [] });
  await h.agent.start();
  await h.idle();
  const newcomer = { id: "76561198000000079", name: "Newcomer" };
  const stop = h.sb.control.onHandled({ method: "GET", path: `/user/${newcomer.id}` }, (e) => {
    if (e.status === 404 && !h.sb.state.findUser(newcomer.id, "STEAM"))
      h.sb.state.addUser({ identifier: newcomer.id, type: "STEAM" });
  });
  await join(newcomer);
  stop();
  expect(h.agent.users.get(newcomer.id)?.id).toBe(h.sb.state.findUser(newcomer.id, "STEAM")!.id);
  const said = h.logger.lines.filter((l) => l.data?.id === newcomer.id).map((l) => l.msg);
  expect(said).toContain("found the user another request had just registered");
  expect(said).not.toContain("registered a new user");
});
