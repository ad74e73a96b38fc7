import { afterEach, describe, expect, test } from "bun:test";
import { bans } from "../../lib/features/bans.ts";
import { online } from "../../lib/features/online.ts";
import { onlineCache } from "../../lib/players/online.ts";
import { recentCache } from "../../lib/players/recent.ts";
import { SEED_IDS } from "../../lib/sandbox/index.ts";
import { harness, until, type Harness } from "../agent/harness.ts";

const ALICE = { id: SEED_IDS.steamid64.alice, name: "Alice" };
const NEWBIE = { id: "76561198000000042", name: "Newbie" };
let h: Harness;
afterEach(() => h?.close());

const cached = async () => (await onlineCache(h.store).get())!;
const names = async () => (await cached()).data.players.map((p) => [p.name, p.user_id]);

describe("online: the list of online players one-shot commands resolve nicks from", () => {
  test("players online at start, connects (with their service user once known) and disconnects", async () => {
    h = await harness({ features: [online] });
    h.sim.join(ALICE);
    await h.agent.start();
    await until(() => h.agent.users.get(ALICE.id) !== undefined, "Alice's user");
    await h.idle();
    expect(await names()).toEqual([["Alice", SEED_IDS.users.alice]]);
    expect((await cached()).data.user_type).toBe("STEAM");

    h.sim.join(NEWBIE);
    await until(() => h.agent.users.get(NEWBIE.id) !== undefined, "Newbie's user (created)");
    await h.idle();
    expect(await names()).toEqual([
      ["Alice", SEED_IDS.users.alice],
      ["Newbie", h.agent.users.get(NEWBIE.id)!.id],
    ]);

    h.sim.leave(ALICE.id);
    await h.idle();
    expect(await names()).toEqual([["Newbie", h.agent.users.get(NEWBIE.id)!.id]]);
  });

  test("a player whose user lookup fails is listed without a user id", async () => {
    h = await harness({ features: [online] });
    await h.agent.start();
    await h.idle();
    h.sb.control.failNext({ method: "GET", path: `/user/${NEWBIE.id}` }, 1, 500);
    h.sim.join(NEWBIE);
    await h.idle();
    expect(await names()).toEqual([["Newbie", null]]);
  });

  test("who left stays in the list of recently seen players, with the time they left, across restarts", async () => {
    h = await harness({ features: [online] });
    h.sim.join(ALICE);
    await h.agent.start();
    await until(() => h.agent.users.get(ALICE.id) !== undefined, "Alice's user");
    await h.idle();
    await h.clock.advance(60_000);
    const left = h.clock.now();
    h.sim.leave(ALICE.id);
    await h.idle();
    expect(await names()).toEqual([]);
    const recent = async () => (await recentCache(h.store).get())!.data;
    expect((await recent()).players).toEqual([
      { id: ALICE.id, name: "Alice", user_id: SEED_IDS.users.alice, last_seen: left },
    ]);

    // The next run (same store) keeps her and adds whoever it sees.
    await h.agent.stop();
    const next = h.restart();
    await h.clock.advance(1000);
    h.sim.join(NEWBIE);
    await next.start();
    await h.idle();
    expect((await recent()).players.map((p) => p.name)).toEqual(["Newbie", "Alice"]);
  });

  test("every status round rewrites the list, so its age tells whether `run` keeps it current", async () => {
    h = await harness({ features: [online] });
    await h.agent.start();
    await h.idle();
    const first = (await cached()).savedAt;
    await h.clock.advance(h.config.intervals.status * 1000);
    await h.idle();
    expect((await cached()).savedAt).toBe(first + h.config.intervals.status * 1000);
  });
});

describe("online: a player kicked the moment he joins", () => {
  const BOB = { id: SEED_IDS.steamid64.bob, name: "Bob" }; // banned in the sandbox's seed
  const CAROL = { id: SEED_IDS.steamid64.carol, name: "Carol" };
  const recentNames = async () => (await recentCache(h.store).get())?.data.players.map((p) => p.name).sort();

  test("is remembered as seen when the first ban refresh kicks him (the README's walk), so `unban Bob` finds him", async () => {
    h = await harness(); // every feature, as `run` installs them
    for (const p of [ALICE, BOB, CAROL]) h.sim.join(p);
    await h.agent.start();
    await until(() => h.sim.actionsOf("kick").length === 1, "Bob kicked");
    await h.idle();
    expect(await recentNames()).toEqual(["Alice", "Bob", "Carol"]);
  });

  test("is remembered as seen when only the ban refresh meets him (a game that reports no joins)", async () => {
    h = await harness({ features: [online, bans], sim: { events: ["player_disconnect"] } });
    await h.agent.start();
    await h.idle();
    h.sim.join(BOB);
    await h.clock.advance(h.config.intervals.bans * 1000);
    await until(() => h.sim.actionsOf("kick").length === 1, "Bob kicked");
    await h.idle();
    expect(await recentNames()).toEqual(["Bob"]);
  });

  for (const when of ["online when the agent starts", "joining later"] as const)
    test(`is remembered as seen when the connect check kicks him (${when})`, async () => {
      h = await harness({ features: [online, bans] });
      if (when === "online when the agent starts") h.sim.join(BOB);
      await h.agent.start();
      if (when === "joining later") h.sim.join(BOB);
      await until(() => h.sim.actionsOf("kick").length === 1, "Bob kicked");
      await h.idle();
      expect(h.agent.players.has(BOB.id)).toBe(false);
      expect(await names()).toEqual([]);
      expect(await recentNames()).toEqual(["Bob"]);
    });
});
