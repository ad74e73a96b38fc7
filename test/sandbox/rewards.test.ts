// Applied rewards: filters, keying, for_server_id and the executed_on union.
import { expect, test } from "bun:test";
import { SEED_IDS as ID, start } from "./helpers.ts";

const { alice: ALICE, bob: BOB, carol: CAROL } = ID.users;
const BUNDLE = ID.serverbundle;
const AR1 = ID.appliedRewards.alice_vip_command;
const AR2 = ID.appliedRewards.carol_starter_script;

const rewards = async (sb: Awaited<ReturnType<typeof start>>, query: Record<string, string | string[]>) =>
  (await sb.call("GET", "/packet/reward/applied/user", { query })).body;

const ids = (body: Record<string, { id: string }[]>) =>
  Object.values(body)
    .flat()
    .map((r) => r.id)
    .sort();

test("keyed by identifier with foreign_ids=true, else by user id; repeated user_id filters", async () => {
  const sb = await start();
  expect(Object.keys(await rewards(sb, { foreign_ids: "true" })).sort()).toEqual([
    ID.steamid64.alice,
    ID.steamid64.carol,
  ]);
  expect(Object.keys(await rewards(sb, {})).sort()).toEqual([ALICE, CAROL].sort());
  expect(Object.keys(await rewards(sb, { user_id: [CAROL, BOB] }))).toEqual([CAROL]);
});

test("filters by status, active, serverbundle; bundle-less rewards apply to every bundle", async () => {
  const sb = await start();
  const other = sb.state.addServerbundle({ name: "Other" });
  const elsewhere = sb.state.addReward({ user_id: BOB, reward: { serverbundle_id: other.id } });
  const everywhere = sb.state.addReward({ user_id: BOB, reward: { serverbundle_id: null } });
  const inactive = sb.state.addReward({ user_id: BOB, active: false, reward: { serverbundle_id: BUNDLE } });
  const done = sb.state.addReward({ user_id: BOB, status: "EXECUTED", reward: { serverbundle_id: BUNDLE } });
  expect(ids(await rewards(sb, { serverbundle_id: BUNDLE, status: "OPEN", active: "true" }))).toEqual(
    [AR1, AR2, everywhere.id].sort(),
  );
  expect(ids(await rewards(sb, { serverbundle_id: other.id, user_id: BOB }))).toEqual(
    [elsewhere.id, everywhere.id].sort(),
  );
  expect(ids(await rewards(sb, { active: "false" }))).toEqual([inactive.id]);
  expect(ids(await rewards(sb, { status: ["EXECUTED", "FAILED"] }))).toEqual([done.id]);
  expect((await sb.call("GET", "/packet/reward/applied/user", { query: { status: "DONE" } })).status).toBe(422);
});

test("for_server_id drops rewards executed there and types a game server cannot run", async () => {
  const sb = await start();
  const credits = sb.state.addReward({
    user_id: BOB,
    reward: { type: "CREDITS", data: { amount: 5 }, serverbundle_id: BUNDLE },
  });
  expect(ids(await rewards(sb, {}))).toContain(credits.id);
  const query = { for_server_id: sb.serverId, foreign_ids: "true" };
  expect(ids(await rewards(sb, query))).toEqual([AR1, AR2].sort());
  const marked = await sb.call("PATCH", `/packet/reward/applied/${AR1}`, { body: { executed_on: [sb.serverId] } });
  expect(marked.body).toMatchObject({ id: AR1, status: "OPEN", executed_on: [sb.serverId] });
  expect(ids(await rewards(sb, query))).toEqual([AR2]);
  // Another server still gets it.
  const second = sb.state.addServer({ serverbundle_id: BUNDLE });
  expect(ids(await rewards(sb, { for_server_id: second.id }))).toEqual([AR1, AR2].sort());
});

test("PATCH unions executed_on (no duplicates), sets status only when asked, 404s unknown ids", async () => {
  const sb = await start();
  const other = crypto.randomUUID();
  await sb.call("PATCH", `/packet/reward/applied/${AR2}`, { body: { executed_on: [sb.serverId] } });
  const merged = await sb.call("PATCH", `/packet/reward/applied/${AR2}`, {
    body: { executed_on: [other, sb.serverId] },
  });
  expect(merged.body.executed_on).toEqual([sb.serverId, other]);
  expect(merged.body.status).toBe("OPEN");
  const executed = await sb.call("PATCH", `/packet/reward/applied/${AR2}`, { body: { status: "EXECUTED" } });
  expect(executed.body.status).toBe("EXECUTED");
  expect((await sb.call("PATCH", `/packet/reward/applied/${crypto.randomUUID()}`, { body: {} })).status).toBe(404);
  const bad = await sb.call("PATCH", `/packet/reward/applied/${AR2}`, { body: { executed_on: ["nope"] } });
  expect(bad.body.detail[0].loc).toEqual(["body", "executed_on", 0]);
});
