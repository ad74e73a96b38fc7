/**
 * Per-player memory that forgets (docs/scale.md §3): the status body's size, the recently seen list
 * with a full server, playtime leftovers of players gone, reported rewards of players gone, the roster's identities.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { createApi, type User } from "../../lib/api/client.ts";
import { ManualClock } from "../../lib/clock.ts";
import { playtime } from "../../lib/features/playtime.ts";
import { RECENT_MAX_PLAYERS, RecentPlayers } from "../../lib/players/recent.ts";
import { statusBody, STATUS_MAX_BYTES } from "../../lib/features/status.ts";
import type { BridgeEvent } from "../../lib/game/bridge.ts";
import { Roster, ROSTER_UNMATCHED_MAX } from "../../lib/game/roster.ts";
import { silentLogger } from "../../lib/log.ts";
import { ExecutedRewards } from "../../lib/rewards/executed.ts";
import { SEED_IDS, startSandbox } from "../../lib/sandbox/index.ts";
import { openStore } from "../../lib/store/index.ts";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { harness, until, type Harness } from "../agent/harness.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe("status body", () => {
  test("stays under STATUS_MAX_BYTES: activities past it are left out, users_current counts everyone", () => {
    const players = Array.from({ length: 12_000 }, (_, i) => ({ id: `p${i}`, name: `Player number ${i}` }));
    const users = { get: (id: string) => ({ id: `${id}-6d608cd3-155d-4344-b9e8-7c0280165d73` }) as User };
    const body = statusBody({ players, maxPlayers: 12_000, map: "m" }, users);
    const size = new TextEncoder().encode(JSON.stringify(body)).byteLength;
    expect(size).toBeLessThanOrEqual(STATUS_MAX_BYTES);
    expect(size).toBeGreaterThan(STATUS_MAX_BYTES - 200);
    expect(body.users_current).toBe(12_000);
    expect(body.user_activities.length).toBeLessThan(12_000);
    expect(body.user_activities[0]).toEqual({ user_id: users.get("p0").id, extra: { Nickname: "Player number 0" } });
    const small = statusBody({ players: players.slice(0, 10), maxPlayers: 10 }, users);
    expect(small.user_activities).toHaveLength(10);
  });
});

describe("recently seen players", () => {
  test("with more than RECENT_MAX_PLAYERS online, who just left is still listed", () => {
    let now = 1_000_000;
    const recent = new RecentPlayers("STEAM", () => now);
    const online = Array.from({ length: 2 * RECENT_MAX_PLAYERS }, (_, i) => ({
      id: `o${i}`,
      name: `O${i}`,
      user_id: null,
    }));
    recent.seen({ id: "gone", name: "Leaver", user_id: "u" });
    now += 1000;
    for (const p of online) recent.seen(p);
    const listed = recent.snapshot(new Set(online.map((p) => p.id))).players;
    expect(listed.map((p) => p.id)).toContain("gone");
    expect(listed).toHaveLength(online.length + 1);
    // Those who left are bounded as before.
    for (let i = 0; i < 2 * RECENT_MAX_PLAYERS; i++) recent.seen({ id: `left${i}`, name: `L${i}`, user_id: null });
    expect(recent.snapshot(new Set()).players).toHaveLength(RECENT_MAX_PLAYERS);
  });
});

describe("playtime", () => {
  test("a leftover under 0.005 h of a player not online: kept through one report (and a restart), gone at the next", async () => {
    h = await harness({ features: [playtime] });
    const counters = h.store.counters("playtime");
    const { alice, bob } = SEED_IDS.users;
    await counters.add(alice, 10);
    await counters.add(bob, 3600 + 5); // sent; 5 s left over
    await h.agent.start(); // report 1: Bob's hour goes; both leftovers are kept
    await h.idle();
    expect(await counters.all()).toEqual({ [alice]: 10, [bob]: 5 });

    await h.agent.stop();
    h.restart();
    await h.agent.start(); // a restart's first report: a new process has seen no leftover yet
    await h.idle();
    expect(await counters.all()).toEqual({ [alice]: 10, [bob]: 5 });
    const before = h.sb.state.attributes.length;
    await h.clock.advance(h.config.intervals.playtime * 1000);
    await h.idle();
    expect(await counters.all()).toEqual({});
    expect(h.sb.state.attributes).toHaveLength(before); // nothing was sent for them
  });

  test("an online player's leftover is never dropped", async () => {
    h = await harness({ features: [playtime] });
    await h.agent.start();
    await h.idle();
    h.sim.join({ id: SEED_IDS.steamid64.alice, name: "Alice" });
    await until(() => h!.events.includes("hub_ply_initialized"), "Alice initialised");
    await h.idle();
    for (let i = 0; i < 3; i++) {
      await h.clock.advance(h.config.intervals.playtime * 1000 + 7_000);
      await h.idle();
    }
    const all = await h.store.counters("playtime").all();
    expect(Object.keys(all)).toEqual([SEED_IDS.users.alice]);
    expect(all[SEED_IDS.users.alice]).not.toBe(0); // a leftover of a few seconds, kept though it rounds to 0 h
  });
});

describe("reported rewards", () => {
  test("forgotten for users not online once no refresh that started before the PATCH is in flight", async () => {
    const sb = await startSandbox();
    try {
      const clock = new ManualClock();
      const store = await openStore({ dir: mkdtempSync(join(tmpdir(), "hub-exec-")), clock });
      const api = createApi({ url: sb.url, key: sb.key });
      const executed = new ExecutedRewards(store, api, sb.serverId, clock, silentLogger);
      await executed.load();
      const { alice } = SEED_IDS.users;
      const id = SEED_IDS.appliedRewards.alice_vip_command;
      const inFlight = executed.refreshStarted(); // a refresh that started before the PATCH
      const entry = await executed.claim({
        id,
        user_id: alice,
        player_id: "p",
        player: "Alice",
        reward: "r",
        packet: "p",
      });
      await executed.settle(entry, true);
      await executed.flush();
      expect(executed.has(id)).toBe(true);
      expect(executed.rememberedSize).toBe(1);

      executed.forgetOffline(new Set()); // Alice gone, but that refresh may still answer with the reward
      expect(executed.has(id)).toBe(true);
      executed.refreshEnded(inFlight);
      executed.forgetOffline(new Set([alice])); // online: kept until a refresh of hers
      expect(executed.has(id)).toBe(true);
      executed.forgetOffline(new Set());
      expect(executed.has(id)).toBe(false);
      expect(executed.rememberedSize).toBe(0);
    } finally {
      await sb.stop();
    }
  });
});

describe("roster", () => {
  test("identity lines of players who never connect: at most ROSTER_UNMATCHED_MAX names, the newest kept", () => {
    const events: BridgeEvent[] = [];
    const roster = new Roster((e) => events.push(e));
    const n = ROSTER_UNMATCHED_MAX + 10;
    for (let i = 0; i < n; i++) roster.identify({ name: `n${i}`, id: `id${i}`, slot: `s${i}` });
    expect(roster.resolveId({ name: "n0" })).toBeUndefined();
    expect(roster.resolveId({ slot: "s9" })).toBeUndefined();
    expect(roster.resolveId({ name: `n${n - 1}` })).toBe(`id${n - 1}`);
    expect(roster.resolveId({ slot: "s10" })).toBe("id10");
    // A connect right after its identity line still finds its id.
    expect(roster.connect({ name: `n${n - 1}` })).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: "player_connect", player: { id: `id${n - 1}` } });
  });
});
