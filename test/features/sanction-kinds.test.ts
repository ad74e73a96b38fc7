/**
 * Each kind's protocol on its own (lib/sanctions/kinds/), one attempt at a time, against the in-memory service over
 * loopback and a real store: what reaches the service, what the entry records before its write goes out, and how a
 * lost answer is found again instead of sent twice. The round around them (order, pace, pauses) is
 * test/features/sanctions.test.ts's and delivery-rounds.test.ts's.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApi, type Api } from "../../lib/api/client.ts";
import { startSandbox, type Sandbox } from "../../lib/sandbox/index.ts";
import { Attempt, type Item, type RoundServices, type SendResult } from "../../lib/sanctions/attempt.ts";
import type { OutcomeBase } from "../../lib/sanctions/deliver.ts";
import { sendBan } from "../../lib/sanctions/kinds/ban.ts";
import { sendUnban } from "../../lib/sanctions/kinds/unban.ts";
import { sendWarning } from "../../lib/sanctions/kinds/warning.ts";
import { findUser } from "../../lib/sanctions/round.ts";
import { type PlayerRef, queueBan, queueUnban, queueWarning, sanctionQueues } from "../../lib/sanctions/index.ts";
import { isUncertain, openStore, type Store } from "../../lib/store/index.ts";
import { entryUncertain } from "../../lib/queues.ts";

const DAVE: PlayerRef = { identifier: "76561198000000004", type: "STEAM", user_id: null, name: "Dave" };

let sb: Sandbox;
let api: Api;
let store: Store;
let reports: (OutcomeBase & { id: string })[];
/** Deliveries told before their entry is removed (RoundServices.known), and whether it was still queued then. */
let known: (OutcomeBase & { id: string; queued: boolean })[];
beforeEach(async () => {
  sb = await startSandbox();
  // An answer slower than this is lost: the request may have been carried out.
  api = createApi({ url: sb.url, key: sb.key, retries: 0, timeoutMs: 500 });
  store = await openStore({ dir: mkdtempSync(join(tmpdir(), "hub-agent-kinds-")) });
  reports = [];
  known = [];
});
afterEach(() => sb.stop());

/** The round's part, as a command's round has it (no pauses), with the queue entry read as a round reads it. */
async function attempt<K extends Item["kind"]>(kind: K, id: string): Promise<Attempt<Extract<Item, { kind: K }>>> {
  const queues = sanctionQueues(store);
  const services: RoundServices = {
    api,
    queues,
    now: Date.now,
    waitsOutRateLimits: false,
    rateLimited: () => "rate_limited",
    heard: () => {},
    report: async (item, base) => void reports.push({ id: item.entry.id, ...base }),
    known: async (item, base) => {
      const queued = (await queues[item.kind].get(item.entry.id)) !== undefined;
      known.push({ id: item.entry.id, ...base, queued });
    },
    userOf: (p, create) =>
      p.user_id
        ? Promise.resolve({ ok: true, id: p.user_id })
        : findUser(api, { ...p, identifier: p.identifier! }, create),
    claimed: new Set(),
  };
  const entry = await queues[kind].get(id);
  if (!entry) throw new Error(`no ${kind} entry ${id}`);
  const item = { kind, entry: { ...entry, uncertain: isUncertain(entry) } } as Extract<Item, { kind: K }>;
  return new Attempt(services, item);
}

const userId = () => sb.state.findUser(DAVE.identifier!, "STEAM")?.id;
const bansOfDave = () => [...sb.state.bans.values()].filter((b) => b.user_id === userId());
const warningsOfDave = () => [...sb.state.warnings.values()].filter((w) => w.user_id === userId());
/** The entry as the store had it when the service received the first matching request. */
function recordAtArrival(kind: Item["kind"], id: string, path: string) {
  let seen: Promise<unknown> | undefined;
  sb.control.onHandled({ method: "POST", path }, () => {
    seen ??= sanctionQueues(store)[kind].get(id);
  });
  return () => seen;
}

describe("ban", () => {
  test("the target is created, the attempt recorded before POST /ban/, the answer settles it", async () => {
    const entry = await queueBan(store, {
      target: DAVE,
      length: 600,
      reason: "aimbot",
      creator: null,
      serverbundleId: sb.bundleId,
    });
    const atArrival = recordAtArrival("ban", entry.id, "/ban/");
    const result: SendResult = await sendBan(await attempt("ban", entry.id));
    expect(result).toBe("delivered");
    expect(await atArrival()).toMatchObject({ attempts: 1, uncertain: true });
    expect(bansOfDave().map((b) => [b.reason, b.length, b.serverbundle_id])).toEqual([["aimbot", 600, sb.bundleId]]);
    expect(await sanctionQueues(store).ban.get(entry.id)).toBeUndefined();
    expect(reports).toEqual([{ id: entry.id, result: "delivered" }]);
    // Told while the entry (its attempt on record) was still queued: a waiting command need not wait for the removal.
    expect(known).toEqual([{ id: entry.id, result: "delivered", queued: true }]);
  });

  test("a removal that fails after the service has the ban: told delivered, the entry found later, not resent", async () => {
    const entry = await queueBan(store, {
      target: DAVE,
      length: 60,
      reason: "x",
      creator: null,
      serverbundleId: sb.bundleId,
    });
    const queue = sanctionQueues(store).ban;
    const remove = queue.remove;
    queue.remove = () => Promise.reject(Object.assign(new Error("EIO: i/o error, unlink"), { code: "EIO" }));
    try {
      await expect(sendBan(await attempt("ban", entry.id))).rejects.toThrow("EIO");
    } finally {
      queue.remove = remove;
    }
    expect(known).toEqual([{ id: entry.id, result: "delivered", queued: true }]);
    // Left with its attempt on record: the next attempt looks it up and finds it.
    expect(await queue.get(entry.id)).toMatchObject({ attempts: 1, uncertain: true });
    expect(await sendBan(await attempt("ban", entry.id))).toBe("delivered");
    expect(reports.at(-1)).toEqual({ id: entry.id, result: "delivered", found: true });
    expect(sb.control.requests({ method: "POST", path: "/ban/" })).toHaveLength(1);
  });

  test("cancelled, or refused: not told before the entry is removed", async () => {
    const cancelled = await queueBan(store, {
      target: DAVE,
      length: 60,
      reason: "c",
      creator: null,
      serverbundleId: sb.bundleId,
    });
    await sanctionQueues(store).ban.update(cancelled.id, { data: { ...cancelled.data, status: "UNBANNED" } });
    const a = await attempt("ban", cancelled.id);
    expect(await a.done("cancelled")).toBe("cancelled");
    const refused = await queueBan(store, {
      target: DAVE,
      length: 60,
      reason: "r",
      creator: null,
      serverbundleId: sb.bundleId,
    });
    sb.control.failNext({ method: "POST", path: "/ban/" }, 1, 403);
    expect(await sendBan(await attempt("ban", refused.id))).toBe("refused");
    expect(known).toEqual([]);
    expect(reports.map((r) => r.result)).toEqual(["cancelled", "refused"]);
  });

  test("an answer lost: kept uncertain, then found at the service and not sent again", async () => {
    const entry = await queueBan(store, {
      target: DAVE,
      length: null,
      reason: "lost",
      creator: null,
      serverbundleId: sb.bundleId,
    });
    sb.control.latency(1_500, { method: "POST", path: "/ban/" }, { after: true });
    expect(await sendBan(await attempt("ban", entry.id))).toBe("kept");
    expect(await sanctionQueues(store).ban.get(entry.id)).toMatchObject({ attempts: 1, uncertain: true });
    await Bun.sleep(1_600); // the service has finished its work
    expect(await sendBan(await attempt("ban", entry.id))).toBe("delivered");
    expect(reports.at(-1)).toEqual({ id: entry.id, result: "delivered", found: true });
    expect(bansOfDave()).toHaveLength(1);
    expect(sb.control.requests({ method: "POST", path: "/ban/" })).toHaveLength(1);
  });
});

describe("unban", () => {
  test("lifts the bans issued before it, never one issued after it", async () => {
    const user = await findUser(api, { identifier: DAVE.identifier!, type: "STEAM", name: "Dave" }, true);
    if (!user.ok) throw new Error("no user");
    const t = Date.now();
    const ban = (created: number, reason: string) =>
      api.createBan({
        user_id: user.id,
        serverbundle_id: sb.bundleId,
        length: null,
        reason,
        created_on: new Date(created).toISOString(),
        status: "ACTIVE",
      });
    expect((await ban(t - 60_000, "older")).ok).toBe(true);
    // Queued half a minute ago (the service was down); a ban issued on the web since.
    const unban = { target: DAVE, processor: null, serverbundleId: sb.bundleId };
    const { entry } = await queueUnban(store, unban, t - 30_000);
    expect((await ban(t, "newer, from the web")).ok).toBe(true);
    expect(await sendUnban(await attempt("unban", entry.id))).toBe("delivered");
    const active = bansOfDave().filter((b) => sb.state.banActive(b));
    expect(active.map((b) => b.reason)).toEqual(["newer, from the web"]);
    expect(await sanctionQueues(store).unban.get(entry.id)).toBeUndefined();
  });

  test("a ban dated an hour ahead (by our clock, before NTP set it back) is lifted with the older ones", async () => {
    const user = await findUser(api, { identifier: DAVE.identifier!, type: "STEAM", name: "Dave" }, true);
    if (!user.ok) throw new Error("no user");
    const t = Date.now();
    const created_on = new Date(t + 3600_000).toISOString();
    const body = { user_id: user.id, serverbundle_id: sb.bundleId, length: null, reason: "ahead", created_on };
    expect((await api.createBan({ ...body, status: "ACTIVE" })).ok).toBe(true);
    const { entry } = await queueUnban(store, { target: DAVE, processor: null, serverbundleId: sb.bundleId }, t);
    expect(await sendUnban(await attempt("unban", entry.id))).toBe("delivered");
    expect(bansOfDave().filter((b) => sb.state.banActive(b))).toEqual([]);
  });

  test("an older ban lifted, then a PATCH refused unsent (429, 401): the unban stays uncertain, never 'dropped unsent'", async () => {
    const user = await findUser(api, { identifier: DAVE.identifier!, type: "STEAM", name: "Dave" }, true);
    if (!user.ok) throw new Error("no user");
    const t = Date.now();
    const ban = async (created: number, reason: string) => {
      const body = { user_id: user.id, serverbundle_id: sb.bundleId, length: null, reason };
      const res = await api.createBan({ ...body, created_on: new Date(created).toISOString(), status: "ACTIVE" });
      if (!res.ok) throw new Error("no ban");
      return res.value.id;
    };
    // Two older bans and a newer one: the unban lifts the older ones one PATCH at a time.
    const older = [await ban(t - 120_000, "first"), await ban(t - 90_000, "second")];
    const { entry } = await queueUnban(
      store,
      { target: DAVE, processor: null, serverbundleId: sb.bundleId },
      t - 30_000,
    );
    await ban(t, "newer, from the web");
    for (const [status, kind, waits] of [
      [429, "rate limited", false],
      [429, "rate limited, waited out (run)", true],
      [401, "a rotated key", false],
    ] as const) {
      // Whichever older ban is patched first goes through; the next PATCH is refused without being carried out.
      let patched = 0;
      const second = { method: "PATCH", where: () => patched === 1 };
      const stop = sb.control.onHandled({ method: "PATCH" }, () => void patched++);
      if (status === 429) sb.control.rateLimit(1, 1, second);
      else sb.control.failNext(second, 1, status);
      const a = await attempt("unban", entry.id);
      a.round.waitsOutRateLimits = waits;
      expect(await sendUnban(a)).toBe(waits ? "rate_limited" : "kept");
      stop();
      const lifted = older.filter((id) => !sb.state.banActive(sb.state.bans.get(id)!));
      expect({ kind, lifted: lifted.length }).toEqual({ kind, lifted: 1 });
      // What `queue drop` would say of it: it was partly carried out, so it may not be called unsent.
      const now = await sanctionQueues(store).unban.get(entry.id);
      expect({ kind, uncertain: now && entryUncertain("unban", now) }).toEqual({ kind, uncertain: true });
      for (const id of older) sb.state.bans.get(id)!.status = "ACTIVE";
      if (status === 429) await Bun.sleep(1_100); // the client's own gate stays shut for the Retry-After
    }
  });

  test("nothing to lift: delivered without a write", async () => {
    await findUser(api, { identifier: DAVE.identifier!, type: "STEAM", name: "Dave" }, true);
    const { entry } = await queueUnban(store, { target: DAVE, processor: null, serverbundleId: sb.bundleId });
    sb.control.clearRequests();
    expect(await sendUnban(await attempt("unban", entry.id))).toBe("delivered");
    expect(reports).toEqual([{ id: entry.id, result: "delivered", nothingToLift: true }]);
    // Nothing on record: an entry left behind would be looked at afresh, so nobody is told before it is removed.
    expect(known).toEqual([]);
    expect(sb.control.requests().filter((r) => r.method !== "GET")).toEqual([]);
  });
});

describe("warning", () => {
  test("the service's like warnings recorded with the attempt; a lost answer matched by id, not sent twice", async () => {
    const entry = await queueWarning(store, {
      target: DAVE,
      reason: "spam",
      creator: null,
      serverbundleId: sb.bundleId,
    });
    const atArrival = recordAtArrival("warning", entry.id, "/warning/");
    sb.control.latency(1_500, { method: "POST", path: "/warning/" }, { after: true });
    expect(await sendWarning(await attempt("warning", entry.id))).toBe("kept");
    expect(await atArrival()).toMatchObject({ attempts: 1, uncertain: true, data: { seen: [] } });
    await Bun.sleep(1_600);
    expect(await sendWarning(await attempt("warning", entry.id))).toBe("delivered");
    expect(reports.at(-1)).toEqual({ id: entry.id, result: "delivered", found: true });
    expect(warningsOfDave().map((w) => w.reason)).toEqual(["spam"]);
    expect(sb.control.requests({ method: "POST", path: "/warning/" })).toHaveLength(1);
  });
});
