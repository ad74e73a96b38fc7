/**
 * A process killed between an unban's delivery and its lift of the cached ban list: `run` lifts the cache in the
 * background, after the round has removed the unban's entry (lib/sanctions/banlist.ts cachedBanLifts; a list of
 * 80,000 bans takes seconds to rewrite, longer while a drain spaces its lifts), and a command lifts it after its own
 * round. The round here stands for that process: it delivers the unban and dies before lifting anything. `run`
 * restarted while the service is down enforces the cache: it must not kick the player VyHub has unbanned, and must
 * still kick the one it has not.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApi } from "../../lib/api/client.ts";
import type { Sandbox } from "../../lib/sandbox/index.ts";
import {
  banCheck,
  cachedBans,
  deliverQueues,
  fetchBanList,
  queueUnban,
  sanctionQueues,
} from "../../lib/sanctions/index.ts";
import { openStore } from "../../lib/store/index.ts";
import { actionsLog, jsonLines, logged, ready, startRun } from "../support/agent-run.ts";
import { useSandbox } from "../support/sandbox.ts";
import { until } from "../support/until.ts";

const BOB = { id: "76561198000000042", name: "Bob" };
const CAROL = { id: "76561198000000043", name: "Carol" };

let sb: Sandbox;
useSandbox((s) => (sb = s));
const root = mkdtempSync(join(tmpdir(), "unban-cache-kill-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const kicksOf = (dir: string, p: { id: string }) =>
  jsonLines(actionsLog(dir)).filter((a) => a.type === "kick" && a.player === p.id);

test("an unban delivered by a process killed before it lifted the cached list: not kicked from the cache", async () => {
  const dir = mkdtempSync(join(root, "t-"));
  const bans = new Map<string, string>();
  for (const p of [BOB, CAROL]) {
    const user = sb.state.findUser(p.id, "STEAM") ?? sb.state.addUser({ identifier: p.id, type: "STEAM" });
    const ban = sb.state.addBan({ user_id: user.id, serverbundle_id: sb.bundleId, reason: "r", length: null });
    bans.set(p.id, ban.id);
  }
  // `run` caches the server record and the list with both bans, and stops.
  const first = await startRun({ sb, dir, name: "first", players: [] });
  await ready(first);
  await until(() => Bun.file(join(dir, "store", "cache", "bans")).exists(), "the cached ban list");
  first.proc.kill("SIGTERM");
  await first.proc.exited;
  // Bob's unban, delivered, and nothing lifted: the kill.
  const store = await openStore({ dir: join(dir, "store"), fsync: false });
  const api = createApi({ url: sb.url, key: sb.key, retries: 0, timeoutMs: 2_000 });
  const target = { identifier: BOB.id, type: "STEAM", user_id: null, name: BOB.name };
  await queueUnban(store, { target, processor: null, serverbundleId: sb.bundleId });
  const report = await deliverQueues({ api, store }, {});
  expect(report.outcomes.map((o) => `${o.kind} ${o.result}`)).toEqual(["unban delivered"]);
  expect(sb.state.bans.get(bans.get(BOB.id) as string)?.status).toBe("UNBANNED");
  expect(await sanctionQueues(store).unban.size()).toBe(0);

  await sb.control.down();
  try {
    const run = await startRun({ sb, dir, name: "restart", players: [BOB, CAROL] });
    await ready(run);
    await logged(run, (l) => String(l.msg).startsWith("ban list not refreshed"), "the cached list enforced");
    // Carol, banned at VyHub, is kicked from the cache: the same check has then been made of Bob (listed first).
    await logged(run, () => kicksOf(dir, CAROL).length > 0, "Carol kicked from the cache");
    expect(kicksOf(dir, BOB)).toEqual([]);
    run.proc.kill("SIGTERM");
    await run.proc.exited;
  } finally {
    await sb.control.up();
  }
}, 60_000);

test("a list fetched before an unban, cached after a newer one: the unban still lifts it for whoever reads the cache", async () => {
  // A `warn` beside `run` fetches the list too (its service's auto-ban), in a process of its own: its answer can be
  // slow and land after `run` has cached the list that followed the unban.
  const dir = mkdtempSync(join(root, "t-"));
  const user = sb.state.findUser(BOB.id, "STEAM") ?? sb.state.addUser({ identifier: BOB.id, type: "STEAM" });
  sb.state.addBan({ user_id: user.id, serverbundle_id: sb.bundleId, reason: "r", length: null });
  const store = await openStore({ dir: join(dir, "store"), fsync: false });
  const api = createApi({ url: sb.url, key: sb.key, retries: 0, timeoutMs: 5_000 });
  const list = { method: "GET", path: /^\/server\/bundle\/[^/]+\/ban/ };
  let first: unknown;
  sb.control.latency(1_500, { ...list, where: (r) => (first ??= r) === r }, { after: true });
  let handled = false;
  const off = sb.control.onHandled(list, () => void (handled = true));
  try {
    const stale = fetchBanList(api, store, sb.bundleId); // answered with Bob's ban, 1.5 s late
    await until(() => handled, "the first list handled");
    const target = { identifier: BOB.id, type: "STEAM", user_id: null, name: BOB.name };
    await queueUnban(store, { target, processor: null, serverbundleId: sb.bundleId });
    await deliverQueues({ api, store }, {});
    expect((await fetchBanList(api, store, sb.bundleId)).list[BOB.id]).toBeUndefined();
    expect((await stale).list[BOB.id]).toHaveLength(1); // and cached last
  } finally {
    off();
    sb.control.reset();
  }
  const cached = await cachedBans(store, Date.now());
  expect((await banCheck(store, cached?.data ?? {}, Date.now()))(BOB.id).banned).toBe(false);
}, 60_000);
