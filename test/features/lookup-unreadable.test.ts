/**
 * A lookup with an item this build cannot read (left out by the client) fails only where that item could be the one
 * looked for: a readable hit stands, and an unreadable old warning never stops a user's new warnings. (The cases
 * where it must fail are in reconcile.test.ts.)
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApi, type Api } from "../../lib/api/client.ts";
import { startSandbox, type Sandbox } from "../../lib/sandbox/index.ts";
import {
  type DeliveryOutcome,
  type PlayerRef,
  deliverQueues,
  queueBan,
  queueWarning,
} from "../../lib/sanctions/index.ts";
import { openStore, type Store } from "../../lib/store/index.ts";
import { until } from "../support/until.ts";

const DAVE_ID = "76561198000000004";
const DAVE: PlayerRef = { identifier: DAVE_ID, type: "STEAM", user_id: null, name: "Dave" };
let sb: Sandbox,
  api: Api,
  store: Store,
  dir = "",
  clock = Date.now();
beforeEach(async () => {
  sb = await startSandbox({ seed: "empty" });
  api = createApi({ url: sb.url, key: sb.key, retries: 0, timeoutMs: 300 });
  dir = mkdtempSync(join(tmpdir(), "hub-agent-lookup-"));
  store = await openStore({ dir });
  clock = Date.now();
});
afterEach(async () => {
  await sb.stop();
  rmSync(dir, { recursive: true, force: true });
});
const deliver = async () => {
  const out: DeliveryOutcome[] = [];
  await deliverQueues({ api, store, now: () => clock, settleMs: 10_000 }, { onOutcome: (o) => void out.push(o) });
  return out.map((o) => [o.kind, o.result, o.found ?? false]);
};
const dave = () => sb.state.findUser(DAVE_ID, "STEAM");
const user = () => ({ id: dave()!.id, username: "Dave", type: "STEAM", identifier: DAVE_ID, avatar: null });
/** An old ban of Dave's this build cannot read (created_on without offset). */
const unreadableBan = () => ({
  id: "00000000-0000-4000-8000-000000000001",
  length: null,
  reason: "old",
  creator: null,
  created_on: new Date(clock - 86_400_000).toISOString().replace("Z", ""),
  status: "UNBANNED",
  ends_on: null,
  active: false,
  user: user(),
  serverbundle: null,
  protests: [],
});

test("an uncertain ban: ours readable on the page, an old item not: found at once", async () => {
  await queueBan(
    store,
    { target: DAVE, length: 3600, reason: "aimbot", creator: null, serverbundleId: sb.bundleId },
    clock,
  );
  sb.control.latency(1200, { method: "POST", path: "/ban/" }, { after: true });
  expect(await deliver()).toEqual([["ban", "kept", false]]);
  sb.control.latency(0);
  await until(() => [...sb.state.bans.values()].length === 1, "VyHub made it");
  const raw = (await (
    await fetch(`${sb.url.replace(/\/$/, "")}/ban/?user_id=${dave()!.id}&serverbundle_id=${sb.bundleId}`, {
      headers: { authorization: `Bearer ${sb.key}` },
    })
  ).json()) as { items: unknown[] };
  const page = { items: [...raw.items, unreadableBan()], total: 2, page: 1, size: 50 };
  clock += 10_000;
  sb.control.failNext({ method: "GET", path: "/ban/" }, 1, 200, page);
  expect(await deliver()).toEqual([["ban", "delivered", true]]);
  expect(sb.control.requests({ method: "POST", path: "/ban/" })).toHaveLength(1);
});

test("a new warning for a user with an unreadable old warning is sent, once", async () => {
  sb.state.addUser({ identifier: DAVE_ID, type: "STEAM", username: "Dave" });
  await queueWarning(store, { target: DAVE, reason: "spam", creator: null, serverbundleId: sb.bundleId }, clock);
  const old = {
    id: "00000000-0000-4000-8000-000000000002",
    reason: "old",
    creator: null,
    created_on: "2020-01-01T00:00:00",
    active: false,
    disabled: false,
    user: user(),
    serverbundle: null,
  };
  sb.control.failNext({ method: "GET", path: "/warning/" }, 5, 200, { items: [old], total: 1, page: 1, size: 50 });
  expect(await deliver()).toEqual([["warning", "delivered", false]]);
  expect(await deliver()).toEqual([]);
  expect(sb.control.requests({ method: "POST", path: "/warning/" })).toHaveLength(1);
});
