/**
 * A community's whole ban list in `run` (docs/scale.md): the checks made per player and per sanction look their
 * player up in the list, and never walk it: a list of 100,000 bans costs a connect what a list of ten does; a drain
 * of unbans lifts them in the cached list a batch at a time, never one read and write of the list per unban.
 */
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BanList, BanReduced } from "../../lib/api/client.ts";
import { bans } from "../../lib/features/bans.ts";
import { SEED_IDS } from "../../lib/sandbox/index.ts";
import {
  addListedBan,
  banCache,
  banCheck,
  cachedBanLifts,
  isBanned,
  queueUnban,
  sanctionQueues,
} from "../../lib/sanctions/index.ts";
import type { Clock } from "../../lib/clock.ts";
import { openStore, type Store } from "../../lib/store/index.ts";
import { harness, until, type Harness } from "../agent/harness.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const NOW = Date.UTC(2026, 10, 21, 12);
const steam = (i: number) => String(76561198300000000n + BigInt(i));

function listed(identifier: string, at = NOW - 3_600_000): BanReduced {
  return {
    id: crypto.randomUUID(),
    length: 86_400,
    reason: "cheating",
    creator: null,
    created_on: new Date(at).toISOString(),
    status: "ACTIVE",
    ends_on: new Date(at + 86_400_000).toISOString(),
    active: true,
    user: { id: crypto.randomUUID(), username: identifier, type: "STEAM", identifier },
    serverbundle: null,
  } as BanReduced;
}

/** `n` players' bans, and how often the list was walked (its keys listed) since. */
function bigList(n: number): { list: BanList; walks: () => number } {
  const raw: BanList = {};
  for (let i = 0; i < n; i++) raw[steam(i)] = [listed(steam(i))];
  let walks = 0;
  const list = new Proxy(raw, {
    ownKeys(target) {
      walks++;
      return Reflect.ownKeys(target);
    },
  });
  return { list, walks: () => walks };
}

const emptyStore = () => openStore({ dir: mkdtempSync(join(tmpdir(), "hub-banlist-")), fsync: false });

test("200 connects against a list of 20,000 players: the list is walked once, not once per connect", async () => {
  const store = await emptyStore();
  const { list, walks } = bigList(20_000);
  for (let i = 0; i < 200; i++) {
    const banned = i % 2 === 0 ? steam(i * 50) : steam(100_000 + i); // every other one is listed
    expect((await isBanned(store, list, banned, NOW)).banned).toBe(i % 2 === 0);
  }
  expect(walks()).toBeLessThanOrEqual(1);
  // The kick after a refresh: every player online at once, the same.
  const check = await banCheck(store, list, NOW, [steam(7), steam(100_007)]);
  expect([check(steam(7)).banned, check(steam(100_007)).banned]).toEqual([true, false]);
  expect(walks()).toBeLessThanOrEqual(1);
});

test("a listed game id matches in any case, also one added to the list after it was first looked at", async () => {
  const store = await emptyStore();
  const uuid = "069A79F4-44E9-4726-A5BE-FCA90E38AAF5";
  const list: BanList = { [uuid]: [listed(uuid)] };
  expect((await isBanned(store, list, uuid.toLowerCase(), NOW)).banned).toBe(true);
  expect((await isBanned(store, list, "0000", NOW)).banned).toBe(false);
  // A ban `run` just delivered joins the list in place (lib/features/bans.ts): found at the player's next connect.
  addListedBan(list, listed("0000"));
  expect((await isBanned(store, list, "0000", NOW)).banned).toBe(true);
});

/** Counts the writes of the cached ban list that `lifting` says lift something; the first of them waits for `held`. */
function holdFirstLift(store: Store, lifting: (list: BanList) => boolean, held: Promise<void>): () => number {
  let lifts = 0;
  const cache = store.cache.bind(store);
  store.cache = ((name: string, ...rest: [never]) => {
    const c = cache(name, ...rest);
    if (name !== "bans") return c;
    const set = c.set.bind(c);
    return {
      ...c,
      async set(list: BanList, ...more: unknown[]) {
        if (lifting(list) && ++lifts === 1) await held;
        return (set as (...a: unknown[]) => Promise<void>)(list, ...more);
      },
    };
  }) as Store["cache"];
  return () => lifts;
}

test("a drain of 100 unbans lifts them in the cached list in a few writes, not one per unban, one of them held", async () => {
  h = await harness({ features: [bans] });
  const { sb, store, clock, logger } = h;
  const users = new Set<string>();
  for (let i = 0; i < 1_000; i++) {
    const user = sb.state.addUser({ identifier: steam(i), type: "STEAM", username: `P${i}` });
    sb.state.addBan({
      user_id: user.id,
      serverbundle_id: sb.bundleId,
      reason: "r",
      created_on: clock.now() - 3_600_000,
    });
    if (i < 100) users.add(user.id);
  }
  const unbanned = [...Array(100).keys()].map(steam);
  for (const identifier of unbanned) {
    const target = { identifier, type: "STEAM", user_id: null, name: "" };
    await queueUnban(store, { target, processor: null, serverbundleId: sb.bundleId }, clock.now());
  }
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const lifts = holdFirstLift(store, (list) => unbanned.some((id) => !list[id]?.length), held);
  await h.agent.start();
  // Every unban reaches the service while the first write of the cached list is held.
  const active = () => [...sb.state.bans.values()].filter((b) => users.has(b.user_id) && b.status === "ACTIVE");
  // And every outcome taken in by the agent (its log line comes after the lift it asks for): under load, the
  // service's state changes well before the agent has read each answer.
  const delivered = () => logger.lines.filter((l) => (l.data as { result?: string })?.result === "delivered");
  await until(() => active().length === 0 && delivered().length >= 100, "every unban at the service", 30_000);
  release();
  const queue = sanctionQueues(store).unban;
  await until(() => lifts() > 1, "the held write and the next");
  await h.idle();
  expect(await queue.size()).toBe(0);
  // The held write, one for the 99 delivered meanwhile, the refresh after the round: not one per unban.
  expect(lifts()).toBeLessThanOrEqual(3);
  const cached = (await banCache(store).get())?.data ?? {};
  const listed = [...Array(1_000).keys()].map(steam).filter((id) => cached[id]?.length);
  expect(listed).toEqual([...Array(1_000).keys()].slice(100).map(steam));
});

test("a list too large to cache is still enforced (a player banned on the web is kicked), and said to be uncached", async () => {
  h = await harness({ features: [bans] });
  const cache = h.store.cache.bind(h.store);
  // What the store says of a list over its record cap (64 MiB: some 80,000 bans of 800 bytes, lib/store/records.ts).
  const tooLarge = "store: refusing to write record cache:bans: 81389690 bytes, larger than the 67108864-byte cap";
  h.store.cache = ((name: string, ...rest: [never]) => {
    const c = cache(name, ...rest);
    return name === "bans" ? { ...c, set: () => Promise.reject(new Error(tooLarge)) } : c;
  }) as Store["cache"];
  await h.agent.start();
  await h.idle();
  const bob = { id: SEED_IDS.steamid64.bob, name: "Bob" }; // banned at the service
  await h.join(bob);
  expect(h.sim.actionsOf("kick").map((k) => k.player)).toEqual([bob.id]);
  expect(h.logger.lines.filter((l) => l.level === "warn").map((l) => l.msg)).toContainEqual(
    expect.stringContaining(`the ban list is enforced but could not be cached (${tooLarge}`),
  );
  expect(h.logger.lines.filter((l) => l.level === "error")).toEqual([]);
});

test("a round's end does not wait out the spacing between lifts: it writes the rest at once", async () => {
  // Each unban a command hands to `run` is a round of its own, and `run` waits for that round's lift before the next
  // one: waiting out LIFT_SPACING there cost each such unban nine writes of the list (7 s a command at 25,000 bans).
  const store = await emptyStore();
  await banCache(store).set({ [steam(1)]: [listed(steam(1))], [steam(2)]: [listed(steam(2))] });
  let monotonic = 0;
  // Every reading a second later (so each write "took" a second); a sleep ends only when it is cut short.
  const clock: Clock = {
    now: () => NOW,
    monotonic: () => (monotonic += 1_000),
    sleep: (_ms, signal) =>
      new Promise((_resolve, reject) => signal?.addEventListener("abort", () => reject(signal.reason), { once: true })),
  };
  const lifts = cachedBanLifts(store, clock);
  const unban = (identifier: string) => ({
    target: { identifier, type: "STEAM", user_id: null, name: "" },
    processor: null,
    created_on: new Date(NOW).toISOString(),
    serverbundle_id: SEED_IDS.serverbundle,
  });
  lifts.lift(unban(steam(1)));
  await lifts.settled();
  lifts.lift(unban(steam(2))); // due nine "seconds" after the first write, by a clock that never gets there
  const settled = await Promise.race([lifts.settled().then(() => true), Bun.sleep(5_000).then(() => false)]);
  expect(settled).toBe(true);
  expect((await banCache(store).get())?.data).toEqual({ [steam(1)]: [], [steam(2)]: [] });
});
