import { afterEach, describe, expect, test } from "bun:test";
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
