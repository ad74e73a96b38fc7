/**
 * lib/sanctions without the agent: the durable queues and one delivery round against the in-memory service,
 * row by row of the spec's client-side transition table and error table for bans, unbans and warnings.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApi, type Api } from "../../lib/api/client.ts";
import { loadMessages } from "../../lib/messages.ts";
import { memoryLogger, silentLogger } from "../../lib/log.ts";
import { SEED_IDS, startSandbox, type Sandbox } from "../../lib/sandbox/index.ts";
import {
  type Creator,
  type DeliveryOutcome,
  type PlayerRef,
  banCheck,
  banMessage,
  deliverQueues,
  fetchBanList,
  formatWarnings,
  isBanned,
  listWarnings,
  outcomeMessage,
  queueBan,
  queueUnban,
  queueWarning,
  sanctionQueues,
} from "../../lib/sanctions/index.ts";
import { openStore, type Store } from "../../lib/store/index.ts";
import { until } from "../support/until.ts";
import { spawn } from "../support/procs.ts";
import { systemClock } from "../../lib/clock.ts";

/** Queues a ban in a process of its own, as `hub-agent ban` does (fixtures/queue-ban.ts). */
const QUEUE_BAN = join(import.meta.dir, "fixtures", "queue-ban.ts");

/** A target known by its game id. */
type GameRef = PlayerRef & { identifier: string };
const DAVE: GameRef = { identifier: "76561198000000004", type: "STEAM", user_id: null, name: "Dave" };
const ERIN: GameRef = { identifier: "76561198000000005", type: "STEAM", user_id: null, name: "Erin" };
const CAROL: Creator = { name: "Carol", user_id: SEED_IDS.users.carol, identifier: null, type: null };
/** Alice holds no ban or warning permission in the bundle. */
const ALICE: Creator = { name: "Alice", user_id: null, identifier: SEED_IDS.steamid64.alice, type: "STEAM" };

let sb: Sandbox;
let api: Api;
let store: Store;
let dir: string;
beforeEach(async () => {
  sb = await startSandbox();
  api = createApi({ url: sb.url, key: sb.key, retries: 0, timeoutMs: 2000 });
  dir = mkdtempSync(join(tmpdir(), "hub-agent-sanctions-"));
  store = await openStore({ dir });
});
afterEach(() => sb.stop());

const ban = (target: PlayerRef = DAVE, creator: Creator | null = null, length: number | null = 600) =>
  queueBan(store, { target, length, reason: "cheating", creator, serverbundleId: sb.bundleId });
const deliver = async (s = store) => {
  const outcomes: DeliveryOutcome[] = [];
  // Rounds back to back: an uncertain entry (a 5xx) is looked up at once; test/features/reconcile.test.ts has the wait.
  const report = await deliverQueues({ api, store: s, settleMs: 0 }, { onOutcome: (o) => void outcomes.push(o) });
  expect(report.outcomes).toEqual(outcomes);
  return report;
};
const results = (r: { outcomes: DeliveryOutcome[] }) => r.outcomes.map((o) => [o.kind, o.result]);
const banPosts = () => sb.control.requests({ method: "POST", path: "/ban/" });
const unbanPatches = () => sb.control.requests({ method: "PATCH", path: /^\/user\/[^/]+\/ban$/ });
const size = async () => {
  const q = sanctionQueues(store);
  return { ban: await q.ban.size(), unban: await q.unban.size(), warning: await q.warning.size() };
};
const userOf = (p: GameRef) => sb.state.findUser(p.identifier, p.type);
const activeBans = (p: GameRef) =>
  [...sb.state.bans.values()].filter((b) => b.user_id === userOf(p)?.id && sb.state.banActive(b));

describe("ban queue (rule 10)", () => {
  test("ban not queued → queued: the entry is on disk before anything is sent, and isBanned counts it", async () => {
    const entry = await ban();
    expect(banPosts()).toHaveLength(0);
    const fresh = await openStore({ dir }); // another process sees it
    expect((await sanctionQueues(fresh).ban.get(entry.id))?.data).toMatchObject({
      target: DAVE,
      length: 600,
      reason: "cheating",
      creator: null,
      status: "ACTIVE",
      serverbundle_id: sb.bundleId,
    });
    expect(await isBanned(fresh, {}, DAVE.identifier, Date.now())).toMatchObject({
      banned: true,
      queued: { id: entry.id },
    });
  });

  test("200: removed; the unknown user is created first; the console sends no morph_user_id", async () => {
    await ban(DAVE, null, null);
    const r = await deliver();
    expect(results(r)).toEqual([["ban", "delivered"]]);
    expect(await size()).toEqual({ ban: 0, unban: 0, warning: 0 });
    expect(sb.control.requests({ method: "POST", path: "/user/" }).map((x) => x.body)).toEqual([
      { identifier: DAVE.identifier, type: "STEAM", username: "Dave" },
    ]);
    const [post] = banPosts();
    expect(post!.query).toEqual([]);
    expect(post!.body).toMatchObject({
      user_id: userOf(DAVE)!.id,
      serverbundle_id: sb.bundleId,
      length: null,
      status: "ACTIVE",
    });
    expect(activeBans(DAVE)).toHaveLength(1);
    expect(r.outcomes[0]).toMatchObject({ kind: "ban", ban: { user: { identifier: DAVE.identifier } } });
  });

  test("a user creator is sent as morph_user_id; one known only by game id is looked up first", async () => {
    await ban(DAVE, CAROL);
    await ban(ERIN, { name: "Carol", user_id: null, identifier: SEED_IDS.steamid64.carol, type: "STEAM" });
    const r = await deliver();
    expect(results(r)).toEqual([
      ["ban", "delivered"],
      ["ban", "delivered"],
    ]);
    for (const post of banPosts()) expect(post.query).toEqual([["morph_user_id", SEED_IDS.users.carol]]);
  });

  test("404 (user not found): removed, and the creator's message says so", async () => {
    await ban();
    sb.control.failNext({ method: "POST", path: "/ban/" }, 1, 404);
    const r = await deliver();
    expect(results(r)).toEqual([["ban", "not_found"]]);
    expect(await size()).toMatchObject({ ban: 0 });
    const messages = await loadMessages("en", { logger: silentLogger });
    expect(outcomeMessage(messages, r.outcomes[0]!)).toBe("Ban of Dave dropped: the player is not known to VyHub.");
  });

  test("other 4xx (missing permission): dropped, and the creator is told why", async () => {
    await ban(DAVE, ALICE);
    const r = await deliver();
    expect(results(r)).toEqual([["ban", "refused"]]);
    expect(r.outcomes[0]!.error).toContain("403");
    expect(await size()).toMatchObject({ ban: 0 });
    expect(activeBans(DAVE)).toHaveLength(0);
    const messages = await loadMessages("en", { logger: silentLogger });
    expect(outcomeMessage(messages, r.outcomes[0]!)).toMatch(/^VyHub refused the ban of Dave: POST \/ban\/: 403 /);
  });

  test.each([
    ["5xx", () => sb.control.failNext({ method: "POST", path: "/ban/" }, 1, 503)],
    ["429", () => sb.control.rateLimit(1, 0, { method: "POST", path: "/ban/" })],
    ["a 401 (the key was rotated)", () => sb.control.failNext({ method: "POST", path: "/ban/" }, 1, 401)],
  ])("%s: kept with attempts and last error, delivered by the next round", async (_, inject) => {
    const entry = await ban();
    inject();
    const r1 = await deliver();
    expect(results(r1)).toEqual([["ban", "kept"]]);
    const kept = await sanctionQueues(store).ban.get(entry.id);
    expect(kept?.attempts).toBe(1);
    expect(kept?.lastError).toBe(r1.outcomes[0]!.error!);
    expect(results(await deliver())).toEqual([["ban", "delivered"]]);
    expect(activeBans(DAVE)).toHaveLength(1);
  });

  test("service down: kept; delivered once it returns", async () => {
    await ban();
    await sb.control.down();
    const r1 = await deliver();
    expect(results(r1)).toEqual([["ban", "kept"]]);
    expect(r1.outcomes[0]!.error).toContain("network error");
    await sb.control.up();
    expect(results(await deliver())).toEqual([["ban", "delivered"]]);
    expect(results(await deliver())).toEqual([]);
    expect(banPosts()).toHaveLength(1);
  });

  test("the service's host not resolving at the send: kept, not uncertain (nothing left this machine)", async () => {
    const known = { ...DAVE, user_id: SEED_IDS.users.carol }; // no lookup before the POST
    const entry = await ban(known);
    const nowhere = createApi({ url: "http://no-such-host.invalid/v1/", key: sb.key, retries: 0, timeoutMs: 2000 });
    const r = await deliverQueues({ api: nowhere, store, settleMs: 0 }, {});
    expect(results(r)).toEqual([["ban", "kept"]]);
    expect(r.outcomes[0]!.error).toContain("does not resolve");
    expect((await sanctionQueues(store).ban.get(entry.id))?.uncertain).toBeFalsy();
  });

  test("409 on creating the user (another creator won), then its read fails (503): kept, banned next round", async () => {
    await ban();
    sb.control.failNext({ method: "POST", path: "/user/" }, 1, 409);
    sb.control.failNext({ method: "GET", path: `/user/${DAVE.identifier}` }, 1, 404); // the first look: unknown
    sb.control.failNext({ method: "GET", path: `/user/${DAVE.identifier}` }, 1, 503); // the read after the 409
    expect(results(await deliver())).toEqual([["ban", "kept"]]);
    expect(banPosts()).toHaveLength(0);
    expect(results(await deliver())).toEqual([["ban", "delivered"]]);
  });

  test("creating the unknown user fails with 5xx: kept, nothing banned", async () => {
    await ban();
    sb.control.failNext({ method: "POST", path: "/user/" }, 1, 500);
    expect(results(await deliver())).toEqual([["ban", "kept"]]);
    expect(banPosts()).toHaveLength(0);
    expect(results(await deliver())).toEqual([["ban", "delivered"]]);
  });
});

describe("unban queue (rule 11)", () => {
  test("an unban, the clock set back an hour, a ban from another process: the ban holds here and at VyHub", async () => {
    const t = Date.now();
    // `hub-agent unban Dave` while VyHub is away, this machine's clock an hour ahead.
    const ahead = await openStore({ dir, clock: { ...systemClock, now: () => t + 3600_000 } });
    await queueUnban(ahead, { target: DAVE, processor: null, serverbundleId: sb.bundleId }, t + 3600_000);
    // NTP steps the clock back; then `hub-agent ban Dave`, a process of its own.
    const child = spawn([process.execPath, QUEUE_BAN, dir, JSON.stringify(DAVE), sb.bundleId, String(t)]);
    expect(await child.exited).toBe(0);
    expect((await isBanned(store, {}, DAVE.identifier, t)).banned).toBe(true);
    await deliver();
    expect(activeBans(DAVE).map((b) => b.reason)).toEqual(["again"]);
  });

  test("a ban from a process an hour ahead, then the clock set back and an unban that leaves it queued: it lifts it", async () => {
    const t = Date.now();
    const child = spawn([process.execPath, QUEUE_BAN, dir, JSON.stringify(DAVE), sb.bundleId, String(t + 3600_000)]);
    expect(await child.exited).toBe(0);
    // Carol's unban (VyHub checks her rights) does not cancel the console's ban: it is sent first, then lifted.
    const unban = { target: DAVE, processor: CAROL, serverbundleId: sb.bundleId, enforce: "on_accept" as const };
    expect((await queueUnban(store, unban, t)).cancelled).toBe(0);
    await deliver();
    expect(banPosts()).toHaveLength(1);
    expect(activeBans(DAVE)).toEqual([]);
  });

  test("ban queued → unban: status UNBANNED, an unban entry with the processor; the ban is never sent", async () => {
    await ban(DAVE);
    await ban(DAVE, CAROL, null);
    await ban(ERIN);
    const { entry, cancelled } = await queueUnban(store, {
      target: DAVE,
      processor: CAROL,
      serverbundleId: sb.bundleId,
    });
    expect(cancelled).toBe(2);
    expect(entry.data.processor).toEqual(CAROL);
    const statuses = (await sanctionQueues(store).ban.list()).map((e) => [e.data.target.name, e.data.status]);
    expect(statuses).toEqual([
      ["Dave", "UNBANNED"],
      ["Dave", "UNBANNED"],
      ["Erin", "ACTIVE"],
    ]);
    expect((await isBanned(store, {}, DAVE.identifier, Date.now())).banned).toBe(false);
    expect((await isBanned(store, {}, ERIN.identifier, Date.now())).banned).toBe(true);

    const r = await deliver();
    expect(results(r).sort()).toEqual([
      ["ban", "cancelled"],
      ["ban", "cancelled"],
      ["ban", "delivered"],
      ["unban", "not_found"],
    ]);
    // Only Erin's ban was sent; Dave is unknown to the service, so there was nothing to unban and no user is made.
    expect(banPosts()).toHaveLength(1);
    expect(userOf(DAVE)).toBeUndefined();
    expect(await size()).toEqual({ ban: 0, unban: 0, warning: 0 });
  });

  test("PATCH succeeds: removed from the unban queue; the processor is morph, the bundle is named", async () => {
    const bob: PlayerRef = { identifier: SEED_IDS.steamid64.bob, type: "STEAM", user_id: null, name: "Bob" };
    await queueUnban(store, { target: bob, processor: CAROL, serverbundleId: sb.bundleId });
    expect(results(await deliver())).toEqual([["unban", "delivered"]]);
    const [patch] = unbanPatches();
    expect(patch!.path).toBe(`/user/${SEED_IDS.users.bob}/ban`);
    expect(patch!.query).toEqual([
      ["serverbundle_id", sb.bundleId],
      ["morph_user_id", SEED_IDS.users.carol],
    ]);
    expect(sb.state.bans.get(SEED_IDS.bans.bob_active)?.status).toBe("UNBANNED");
    expect(await size()).toMatchObject({ unban: 0 });
  });

  test("a global ban is among what the bundle's unban lifts; another bundle's ban is not", async () => {
    const bob: PlayerRef = { identifier: SEED_IDS.steamid64.bob, type: "STEAM", user_id: null, name: "Bob" };
    const other = sb.state.addServerbundle({ name: "Other" });
    const before = sb.state.now() - 60_000;
    sb.state.bans.get(SEED_IDS.bans.bob_active)!.status = "UNBANNED";
    const global = sb.state.addBan({ user_id: SEED_IDS.users.bob, reason: "global", created_on: before });
    const elsewhere = sb.state.addBan({ user_id: SEED_IDS.users.bob, serverbundle_id: other.id, created_on: before });
    await queueUnban(store, { target: bob, processor: CAROL, serverbundleId: sb.bundleId });
    // GET /ban/?serverbundle_id= filters on the bundle alone (global bans have none): the list is asked without it.
    expect(results(await deliver())).toEqual([["unban", "delivered"]]);
    expect(unbanPatches()).toHaveLength(1);
    expect(sb.state.bans.get(global.id)?.status).toBe("UNBANNED");
    expect(sb.state.bans.get(elsewhere.id)?.status).toBe("ACTIVE");
  });

  test("PATCH 5xx: kept; 4xx: dropped and the processor told why", async () => {
    const bob: PlayerRef = {
      identifier: SEED_IDS.steamid64.bob,
      type: "STEAM",
      user_id: SEED_IDS.users.bob,
      name: "Bob",
    };
    await queueUnban(store, { target: bob, processor: null, serverbundleId: sb.bundleId });
    sb.control.failNext({ method: "PATCH" }, 1, 502);
    expect(results(await deliver())).toEqual([["unban", "kept"]]);
    sb.control.failNext({ method: "PATCH" }, 1, 422);
    const r = await deliver();
    expect(results(r)).toEqual([["unban", "refused"]]);
    const messages = await loadMessages("en", { logger: silentLogger });
    expect(outcomeMessage(messages, r.outcomes[0]!)).toContain("VyHub refused the unban of Bob: PATCH");
    expect(await size()).toMatchObject({ unban: 0 });
  });

  test("one player's entries go in issue order, and a kept one holds back the later ones", async () => {
    await ban(DAVE);
    await sb.control.down();
    await queueUnban(store, { target: DAVE, processor: null, serverbundleId: sb.bundleId });
    await ban(DAVE, null, null); // re-banned after the unban: this one must be the final state
    await sb.control.up();
    sb.control.failNext({ method: "GET", path: `/user/${DAVE.identifier}` }, 1, 500);
    // The first ban was lifted (never sent); the unban's user lookup fails, so the newer ban waits behind it.
    expect(results(await deliver())).toEqual([
      ["ban", "cancelled"],
      ["unban", "kept"],
    ]);
    expect(banPosts()).toHaveLength(0);
    expect(results(await deliver())).toEqual([
      ["unban", "not_found"],
      ["ban", "delivered"],
    ]);
    expect(activeBans(DAVE).map((b) => b.length)).toEqual([null]);
  });
});

describe("warnings (rule 12)", () => {
  test("POST /warning/ with morph for a user, without for the console; the service may auto-ban", async () => {
    sb.state.setWarningPolicy({ autoBan: { threshold: 2, lengthMinutes: 60 } });
    await queueWarning(store, { target: DAVE, reason: "spam", creator: CAROL, serverbundleId: sb.bundleId });
    await queueWarning(store, { target: DAVE, reason: "more spam", creator: null, serverbundleId: sb.bundleId });
    const r = await deliver();
    expect(results(r)).toEqual([
      ["warning", "delivered"],
      ["warning", "delivered"],
    ]);
    const posts = sb.control.requests({ method: "POST", path: "/warning/" });
    expect(posts.map((p) => p.query)).toEqual([[["morph_user_id", SEED_IDS.users.carol]], []]);
    expect(posts[0]!.body).toEqual({ user_id: userOf(DAVE)!.id, serverbundle_id: sb.bundleId, reason: "spam" });
    const list = await fetchBanList(api, store, sb.bundleId);
    expect((await isBanned(store, list.list, DAVE.identifier, Date.now())).banned).toBe(true);
  });

  test("403: dropped and the creator told; 5xx: kept", async () => {
    await queueWarning(store, { target: DAVE, reason: "spam", creator: ALICE, serverbundleId: sb.bundleId });
    sb.control.failNext({ method: "POST", path: "/warning/" }, 1, 500);
    expect(results(await deliver())).toEqual([["warning", "kept"]]);
    const r = await deliver();
    expect(results(r)).toEqual([["warning", "refused"]]);
    const messages = await loadMessages("en", { logger: silentLogger });
    expect(outcomeMessage(messages, r.outcomes[0]!)).toContain(
      "VyHub refused the warning for Dave: POST /warning/: 403",
    );
  });

  test("warns: active and inactive, newest first, with reason, creator and date", async () => {
    const alice: PlayerRef = { identifier: SEED_IDS.steamid64.alice, type: "STEAM", user_id: null, name: "Alice" };
    sb.state.addWarning({
      user_id: SEED_IDS.users.alice,
      serverbundle_id: sb.bundleId,
      reason: "Old",
      created_on: Date.UTC(2020, 0, 2, 3, 4),
      disabled: true,
    });
    const res = await listWarnings(api, alice, sb.bundleId);
    if (!res.ok) throw new Error(res.error.message);
    const messages = await loadMessages("en", { logger: silentLogger });
    const lines = formatWarnings(messages, "Alice", res.warnings, res.total);
    expect(lines).toHaveLength(3);
    expect(lines[0]).toBe("Warnings of Alice (2):");
    expect(lines[1]).toMatch(/^\[active\] \d{4}-\d\d-\d\d \d\d:\d\d UTC: Mic spam \(by Carol\)$/);
    expect(lines[2]).toBe("[inactive] 2020-01-02 03:04 UTC: Old (by Console)");
    // A player the service does not know has none, and is not created by reading.
    const none = await listWarnings(api, DAVE, sb.bundleId);
    expect(none).toEqual({ ok: true, warnings: [], total: 0 });
    expect(formatWarnings(messages, "Dave", [])).toEqual(["Dave has no warnings."]);
    expect(userOf(DAVE)).toBeUndefined();
  });
});

describe("concurrency", () => {
  test("two processes' stores on one directory, three rounds at once: each ban is sent exactly once", async () => {
    const other = await openStore({ dir });
    const third = await openStore({ dir });
    const players = Array.from({ length: 8 }, (_, i) => ({
      ...DAVE,
      identifier: `7656119800000010${i}`,
      name: `P${i}`,
    }));
    for (const p of players) {
      await ban(p);
      await queueBan(other, { target: p, length: null, reason: "again", creator: null, serverbundleId: sb.bundleId });
    }
    sb.control.latency(5, { method: "POST" });
    const reports = await Promise.all([deliver(store), deliver(other), deliver(third)]);
    const delivered = reports.flatMap((r) => r.outcomes).filter((o) => o.result === "delivered");
    expect(delivered).toHaveLength(16);
    expect(banPosts()).toHaveLength(16);
    expect(new Set(delivered.map((o) => o.entry.id)).size).toBe(16);
    expect(await size()).toEqual({ ban: 0, unban: 0, warning: 0 });
  });

  test("one send in flight per player", async () => {
    const inFlight = new Map<string, number>();
    let worst = 0;
    const counted: Api = {
      ...api,
      createBan: async (body, o) => {
        const n = (inFlight.get(body.user_id) ?? 0) + 1;
        inFlight.set(body.user_id, n);
        worst = Math.max(worst, n);
        try {
          return await api.createBan(body, o);
        } finally {
          inFlight.set(body.user_id, (inFlight.get(body.user_id) ?? 1) - 1);
        }
      },
    };
    for (let i = 0; i < 4; i++) {
      await ban(DAVE);
      await ban(ERIN);
    }
    sb.control.latency(10, { method: "POST", path: "/ban/" });
    const other = await openStore({ dir });
    const rounds = await Promise.all(
      [store, other, store].map((s) => deliverQueues({ api: counted, store: s, logger: memoryLogger() })),
    );
    expect(rounds.flatMap((r) => r.outcomes).filter((o) => o.result === "delivered")).toHaveLength(8);
    expect(worst).toBe(1);
  });

  test("a round held by another process longer than lockTimeoutMs: busy, nothing sent", async () => {
    await ban();
    const other = await openStore({ dir });
    let release: (() => void) | undefined;
    const held = other.withLock("sanctions", () => new Promise<void>((r) => (release = r)));
    await until(() => release !== undefined, "the other store to hold the lock");
    const r = await deliverQueues({ api, store }, { lockTimeoutMs: 50 });
    expect(r).toEqual({ busy: true, outcomes: [] });
    expect(banPosts()).toHaveLength(0);
    release?.();
    await held;
    expect(results(await deliver())).toEqual([["ban", "delivered"]]);
  });
});

describe("isBanned and the ban message", () => {
  test("the list, a queued ban, a queued unban (wins over older bans), expiry", async () => {
    const list = (await fetchBanList(api, store, sb.bundleId)).list;
    const bob = SEED_IDS.steamid64.bob;
    const now = Date.now();
    const verdict = await isBanned(store, list, bob, now);
    expect(verdict).toMatchObject({ banned: true, ban: { id: SEED_IDS.bans.bob_active } });
    expect((await isBanned(store, list, bob, now + 8 * 86_400_000)).banned).toBe(false); // the 7-day ban ended
    expect((await isBanned(store, list, SEED_IDS.steamid64.alice, now)).banned).toBe(false);

    const bobRef: PlayerRef = { identifier: bob, type: "STEAM", user_id: null, name: "Bob" };
    await queueUnban(store, { target: bobRef, processor: null, serverbundleId: sb.bundleId });
    expect((await isBanned(store, list, bob, now)).banned).toBe(false);
    await ban(bobRef, CAROL, 60); // a ban after the unban counts again
    const check = await banCheck(store, list, Date.now());
    expect(check(bob)).toMatchObject({ banned: true, queued: { data: { reason: "cheating" } } });
    expect(check(bob.toUpperCase())).toMatchObject({ banned: true });
  });

  test("a queued unban does not hide a listed ban issued after it (on the web, while the unban waits)", async () => {
    const user = sb.state.addUser({ identifier: DAVE.identifier, type: "STEAM", username: "Dave" });
    const t = Date.now();
    sb.state.addBan({ user_id: user.id, serverbundle_id: sb.bundleId, reason: "old", created_on: t - 60_000 });
    await queueUnban(store, { target: DAVE, processor: null, serverbundleId: sb.bundleId }, t);
    const before = (await fetchBanList(api, store, sb.bundleId)).list;
    expect((await isBanned(store, before, DAVE.identifier, t + 1000)).banned).toBe(false);
    // A minute later an admin bans Dave on the web; the list refresh has it.
    sb.state.addBan({ user_id: user.id, serverbundle_id: sb.bundleId, reason: "web", created_on: t + 60_000 });
    const list = (await fetchBanList(api, store, sb.bundleId)).list;
    expect(list[DAVE.identifier]?.map((b) => b.reason).sort()).toEqual(["old", "web"]);
    expect(await isBanned(store, list, DAVE.identifier, t + 61_000)).toMatchObject({
      banned: true,
      ban: { reason: "web" },
    });
  });

  test("the message: reason, creator, end date or never, ban id", async () => {
    const messages = await loadMessages("en", { logger: silentLogger });
    const list = (await fetchBanList(api, store, sb.bundleId)).list;
    const verdict = await isBanned(store, list, SEED_IDS.steamid64.bob, Date.now());
    if (!verdict.banned) throw new Error("Bob is banned in the seed");
    const ends = verdict.ban!.ends_on!;
    expect(banMessage(messages, verdict)).toBe(
      `You are banned from this server. Reason: RDM x3 | Banned by: Carol | Until: ${new Date(ends).toISOString().slice(0, 16).replace("T", " ")} UTC | Ban ID: ${SEED_IDS.bans.bob_active}`,
    );
    const queued = await ban(DAVE, null, null);
    const v2 = await isBanned(store, {}, DAVE.identifier, Date.now());
    if (!v2.banned) throw new Error("queued ban");
    expect(v2.queued?.id).toBe(queued.id);
    expect(banMessage(messages, v2)).toBe(
      "You are banned from this server. Reason: cheating | Banned by: Console | Until: never | Ban ID: pending",
    );
  });

  test("the service unreachable: the cached list; nothing cached: an empty list with the reason", async () => {
    await sb.control.down();
    const none = await fetchBanList(api, store, sb.bundleId);
    expect(none.source).toBe("none");
    expect(none.error).toContain("network error");
    await sb.control.up();
    expect((await fetchBanList(api, store, sb.bundleId)).source).toBe("api");
    await sb.control.down();
    const cached = await fetchBanList(api, store, sb.bundleId);
    expect(cached.source).toBe("cache");
    expect(Object.keys(cached.list)).toEqual([SEED_IDS.steamid64.bob]);
  });
});
