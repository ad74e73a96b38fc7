import { afterEach, describe, expect, test } from "bun:test";
import { Agent } from "../../lib/agent.ts";
import { type ApiError, AttributeDefinitionSchema } from "../../lib/api/client.ts";
import type { Feature } from "../../lib/feature.ts";
import { hoursOf, playtime } from "../../lib/features/playtime.ts";
import { SEED_IDS } from "../../lib/sandbox/seed.ts";
import type { Counters } from "../../lib/store/index.ts";
import { harness, until, type Harness } from "../agent/harness.ts";

const MIN = 60_000;
const HOUR = 60 * MIN;
const ALICE = { id: SEED_IDS.steamid64.alice, name: "Alice" };
const BOB = { id: SEED_IDS.steamid64.bob, name: "Bob" };
const { alice, bob, carol } = SEED_IDS.users;
const DEFINITION_ID = SEED_IDS.attributeDefinitions.playtime;

let h: Harness;
afterEach(() => h?.close());

const setup = () => harness({ features: [playtime] });
const counter = (userId: string) => h.store.counters("playtime").get(userId);
const seed = (userId: string, seconds: number) => h.store.counters("playtime").add(userId, seconds);
const sends = () => h.sb.control.requests({ method: "POST", path: "/user/attribute/" });
const sentBodies = () => sends().map((r) => r.body as Record<string, unknown>);
const logged = (text: string) => h.logger.lines.some((l) => l.msg.includes(text));
/** Hours the service holds for a user (the sum of the values it stored). */
const hoursAt = (userId: string) =>
  h.sb.state.attributes.filter((a) => a.user_id === userId).reduce((sum, a) => sum + Number(a.value), 0);

async function start() {
  await h.agent.start();
  await h.idle();
}

/** A player joins and is initialised (their service user known): counting starts now. */
async function join(player: { id: string; name: string }) {
  const before = h.events.filter((e) => e === "hub_ply_initialized").length;
  h.sim.join(player);
  await until(() => h.events.filter((e) => e === "hub_ply_initialized").length > before, `${player.name} initialised`);
  await h.idle();
}

/** Moves the clock and waits for every job it woke. */
async function advance(ms: number) {
  await h.clock.advance(ms);
  await h.idle();
}

describe("hoursOf", () => {
  test("rounds to 2 decimals and says how many seconds that is", () => {
    expect(hoursOf(4000)).toEqual({ hours: 1.11, seconds: 3996 });
    expect(hoursOf(5418)).toEqual({ hours: 1.51, seconds: 5436 });
    expect(hoursOf(17)).toEqual({ hours: 0, seconds: 0 });
    expect(hoursOf(3600 * 7 + 1)).toEqual({ hours: 7, seconds: 25200 });
  });
});

describe("playtime definition", () => {
  test("404: created with exactly the spec's fields, cached, and used for the values", async () => {
    h = await setup();
    h.sb.state.attributeDefinitions.delete(DEFINITION_ID);
    await seed(alice, 7200);
    await start();
    const creates = h.sb.control.requests({ method: "POST", path: "/user/attribute/definition" });
    expect(creates).toHaveLength(1);
    expect(creates[0]!.body).toEqual({
      name: "playtime",
      title: "Play Time",
      unit: "HOURS",
      type: "ACCUMULATED",
      accumulation_interval: "day",
      unspecific: true,
    });
    const created = [...h.sb.state.attributeDefinitions.values()].find((d) => d.name === "playtime");
    expect(created).toBeDefined();
    expect((await h.store.cache("playtime_definition", AttributeDefinitionSchema).get())?.data.id).toBe(created!.id);
    expect(sentBodies()).toEqual([
      { definition_id: created!.id, user_id: alice, serverbundle_id: h.sb.bundleId, value: "2" },
    ]);
  });

  test("an existing definition is not created again", async () => {
    h = await setup();
    await start();
    expect(h.sb.control.requests({ path: "/user/attribute/definition/playtime" })).toHaveLength(1);
    expect(h.sb.control.requests({ method: "POST", path: "/user/attribute/definition" })).toHaveLength(0);
  });

  test("service failing on the definition: the cached one is used, nothing is created", async () => {
    h = await setup();
    await start(); // caches the definition
    await h.agent.stop();
    await seed(alice, 3600);
    h.sb.control.failNext({ path: "/user/attribute/definition/playtime" }, 1, 503);
    h.restart();
    await start();
    expect(logged("using the cached one")).toBe(true);
    expect(h.sb.control.requests({ method: "POST", path: "/user/attribute/definition" })).toHaveLength(0);
    expect(sentBodies()).toEqual([
      { definition_id: DEFINITION_ID, user_id: alice, serverbundle_id: h.sb.bundleId, value: "1" },
    ]);
    expect(await counter(alice)).toBe(0);
  });

  test("no definition and none cached: nothing is sent and the counters stay", async () => {
    h = await setup();
    await seed(alice, 3600);
    h.sb.control.failNext({ path: "/user/attribute/definition/playtime" }, 1, 503);
    await start();
    expect(logged("none cached")).toBe(true);
    expect(sends()).toHaveLength(0);
    expect(await counter(alice)).toBe(3600);
  });
});

describe("counting", () => {
  test("online time is persisted every minute, from hub_ply_initialized to disconnect", async () => {
    h = await setup();
    await start();
    await join(ALICE);
    await advance(MIN);
    expect(await counter(alice)).toBe(60);
    await advance(MIN);
    expect(await counter(alice)).toBe(120);
    await advance(30_000);
    h.sim.leave(ALICE.id);
    await h.idle();
    expect(await counter(alice)).toBe(150);
    await advance(5 * MIN);
    expect(await counter(alice)).toBe(150);
    expect(sends()).toHaveLength(0); // the report is hourly
  });

  test("a quick reconnect while the disconnect is still being written: the new visit is counted", async () => {
    h = await setup();
    // Hold the disconnect's counter write (a persist of thousands of players holds the same chain in a real run).
    let release: (() => void) | undefined;
    let gate: Promise<void> | undefined;
    const real = h.store.counters.bind(h.store);
    h.store.counters = (name: string): Counters => {
      const c = real(name);
      return { ...c, addMany: async (d) => (await gate, c.addMany(d)) };
    };
    await start();
    await join(ALICE);
    for (let i = 0; i < 10; i++) await advance(MIN);
    await advance(30_000); // half a minute since the last persist
    gate = new Promise((r) => (release = r));
    h.sim.leave(ALICE.id);
    await new Promise((r) => setTimeout(r, 50)); // the disconnect waits on its write
    const before = h.events.filter((e) => e === "hub_ply_initialized").length;
    h.sim.join(ALICE); // she is back at once (a client reconnect, a map change)
    await until(() => h.events.filter((e) => e === "hub_ply_initialized").length > before, "Alice initialised again");
    gate = undefined;
    release?.();
    await h.idle();
    for (let i = 0; i < 20; i++) await advance(MIN); // she plays 20 more minutes
    // Counted, and online for every other feature too (group sync, rewards).
    expect({ seconds: await counter(alice), online: h.agent.players.has(ALICE.id) }).toEqual({
      seconds: 630 + 20 * 60,
      online: true,
    });
  });

  test("a lookup that ends after the player left (another feature's disconnect still running) counts nothing", async () => {
    // Another feature's disconnect handler takes its time (a DISCONNECT reward's console command).
    let release: (() => void) | undefined;
    const slowGoodbye: Feature = (ctx) =>
      ctx.onGame("player_disconnect", () => new Promise<void>((r) => (release = r)));
    h = await harness({ features: [playtime, slowGoodbye] });
    await start();
    h.sb.control.latency(200, { method: "GET", path: `/user/${BOB.id}` });
    h.sim.join(BOB);
    await until(() => h.sb.control.requests({ method: "GET", path: `/user/${BOB.id}` }).length === 1, "the lookup");
    h.sim.leave(BOB.id); // gone before his lookup answered
    await until(() => h.events.includes("hub_ply_initialized"), "the lookup's answer");
    release?.();
    await h.idle();
    for (let i = 0; i < 3; i++) await advance(MIN);
    expect(await counter(bob)).toBe(0);
  });

  test("agent stop counts up to the moment of stopping", async () => {
    h = await setup();
    await start();
    await join(ALICE);
    await advance(90_000);
    await h.agent.stop();
    expect(await counter(alice)).toBe(90);
  });

  test("a player whose user is not known yet is not counted until initialised", async () => {
    h = await setup();
    await start();
    h.sb.control.failNext({ method: "GET", path: `/user/${BOB.id}` }, 1, 503);
    h.sim.join(BOB);
    await until(() => logged("user lookup failed"), "the failed lookup");
    await advance(MIN); // the user retry initialises Bob now
    await until(() => h.events.includes("hub_ply_initialized"), "Bob initialised");
    await h.idle();
    expect(await counter(bob)).toBe(0);
    await advance(MIN);
    expect(await counter(bob)).toBe(60);
  });
});

describe("reports", () => {
  test("at start: each user's hours as a number with 2 decimals; what was sent is subtracted, the remainder stays", async () => {
    h = await setup();
    await seed(alice, 4000); // 1.11 h sent, 4 s stay
    await seed(bob, 5418); // 1.505 h → 1.51 h sent, -18 s stay
    await seed(carol, 17); // rounds to 0: not sent, stays
    await start();
    const bodies = sentBodies();
    expect(bodies).toHaveLength(2);
    expect(bodies).toContainEqual({
      definition_id: DEFINITION_ID,
      user_id: alice,
      serverbundle_id: h.sb.bundleId,
      value: "1.11",
    });
    expect(bodies).toContainEqual({
      definition_id: DEFINITION_ID,
      user_id: bob,
      serverbundle_id: h.sb.bundleId,
      value: "1.51",
    });
    expect(await counter(alice)).toBeCloseTo(4, 9);
    expect(await counter(bob)).toBeCloseTo(-18, 9);
    expect(await counter(carol)).toBe(17);
    expect(h.sb.state.attributes.map((a) => [a.user_id, a.value]).sort()).toEqual([
      [alice, "1.11"],
      [bob, "1.51"],
    ]);
  });

  test("every intervals.playtime: the hour played is reported", async () => {
    h = await setup();
    await start();
    await join(ALICE);
    await advance(HOUR);
    expect(sentBodies()).toEqual([
      { definition_id: DEFINITION_ID, user_id: alice, serverbundle_id: h.sb.bundleId, value: "1" },
    ]);
    expect(await counter(alice)).toBe(0);
  });

  test("503 (the service turning requests away): nothing is subtracted; the next report sends it with what was played since", async () => {
    h = await setup();
    await seed(alice, 1800);
    h.sb.control.failNext({ method: "POST", path: "/user/attribute/" }, 1, 503);
    await start();
    expect(sends()).toHaveLength(1);
    expect(await counter(alice)).toBe(1800);
    expect(logged("kept for the next report")).toBe(true);
    await join(ALICE);
    await advance(HOUR);
    expect(sentBodies().at(-1)?.value).toBe("1.5");
    expect(h.sb.state.attributes.map((a) => a.value)).toEqual(["1.5"]);
    expect(await counter(alice)).toBe(0);
  });

  test("service down during a report: counters kept, sent once it is back", async () => {
    h = await setup();
    await start();
    await join(ALICE);
    await h.sb.control.down();
    await advance(HOUR);
    expect(logged("kept for the next report")).toBe(true);
    expect(await counter(alice)).toBe(3600);
    await h.sb.control.up();
    await advance(HOUR);
    expect(h.sb.state.attributes.map((a) => [a.user_id, a.value])).toEqual([[alice, "2"]]);
    expect(await counter(alice)).toBe(0);
  });

  test("time counted while a send is in flight is kept (subtract, not reset)", async () => {
    h = await setup();
    await start();
    await join(ALICE);
    await advance(HOUR - MIN); // counter: 59 min
    h.sb.control.latency(300, { method: "POST", path: "/user/attribute/" });
    await h.clock.advance(MIN); // the report starts: 1 h
    await until(() => sends().some((r) => r.status === 0), "the send in flight");
    await h.clock.advance(MIN); // a persist while the send is in flight
    await h.idle();
    expect(h.sb.state.attributes.map((a) => a.value)).toEqual(["1"]);
    expect(await counter(alice)).toBe(60);
  });

  test("answer lost (timeout) after the service stored it: never sent again; a line says what may be missing", async () => {
    h = await harness({ features: [playtime], timeoutMs: 300 });
    await seed(alice, 3600); // one hour played, not yet reported
    // The service stores the value at once; only its answer is late (a slow proxy, a lost packet).
    h.sb.control.latency(1000, { method: "POST", path: "/user/attribute/" }, { after: true });
    await start();
    await until(() => h.sb.state.attributes.length === 1, "the service stored the hour");
    expect(logged("up to 3600 s may be missing")).toBe(true);
    h.sb.control.latency(0);
    await advance(HOUR); // the next report
    expect(hoursAt(alice)).toBe(1); // she played one hour: VyHub holds one
  });

  test("killed the moment the service stored the hours: the restart does not send them again", async () => {
    h = await setup();
    await seed(alice, 3600);
    // From the moment the service has handled the POST, nothing this process writes reaches the disk (kill -9).
    let killed = false;
    const stop = h.sb.control.onHandled({ method: "POST", path: "/user/attribute/" }, () => void (killed = true));
    const real = h.store.counters.bind(h.store);
    h.store.counters = (name: string): Counters => {
      const c = real(name);
      const dead = () => Promise.reject(new Error("killed"));
      return {
        ...c,
        add: (k, d) => (killed ? dead() : c.add(k, d)),
        addMany: (d) => (killed ? dead() : c.addMany(d)),
        remove: (k) => (killed ? dead() : c.remove(k)),
      };
    };
    await start();
    expect(hoursAt(alice)).toBe(1);
    await h.agent.stop();
    stop();
    killed = false;
    h.restart();
    await start();
    expect(logged("a playtime report was cut short: up to 3600 s of playtime may be missing")).toBe(true);
    await advance(HOUR);
    expect(hoursAt(alice)).toBe(1);
  });

  test("the remainder survives a restart and is reported with the next hours", async () => {
    h = await setup();
    await start();
    await join(ALICE);
    await advance(HOUR);
    await advance(10_000);
    await h.agent.stop(); // counts the last 10 s
    expect(await counter(alice)).toBe(10);
    h.sim.leave(ALICE.id);

    h.restart();
    h.sb.control.failNext({ method: "POST", path: "/user/attribute/" }, 1, 503);
    await start(); // 10 s round to 0 h: nothing to send
    expect(await counter(alice)).toBe(10);
    await join(ALICE);
    await advance(HOUR);
    expect(await counter(alice)).toBe(3610); // the first try was turned away (503): all kept
    await advance(HOUR);
    expect(h.sb.state.attributes.map((a) => a.value)).toEqual(["1", "2"]);
    expect(await counter(alice)).toBe(10);
  });

  test("the service stored the hour, a gateway in front answered 502: counted as sent, never twice", async () => {
    h = await setup();
    await seed(alice, 3600);
    // nginx: "upstream prematurely closed connection while reading response header" after VyHub stored it.
    const real = h.api.sendAttribute.bind(h.api);
    let first = true;
    (h.api as { sendAttribute: typeof real }).sendAttribute = async (body) => {
      const res = await real(body);
      if (!first) return res;
      first = false;
      const error: ApiError = {
        kind: "ServerError",
        status: 502,
        endpoint: "POST /user/attribute/",
        message: "Bad Gateway",
      };
      return { ok: false, error };
    };
    await start();
    expect(logged("may be missing")).toBe(true);
    await advance(HOUR);
    const hours = h.sb.state.attributes.filter((a) => a.user_id === alice).reduce((s, a) => s + Number(a.value), 0);
    expect(hours).toBe(1);
    expect(await counter(alice)).toBe(0);
  });

  test("404 for an unknown user: that counter is dropped and logged, the others are sent", async () => {
    h = await setup();
    const stranger = "00000000-0000-4000-8000-000000000001";
    await seed(stranger, 7200);
    await seed(alice, 3600);
    await start();
    expect(await counter(stranger)).toBe(0);
    expect(await h.store.counters("playtime").all()).toEqual({ [alice]: 0 });
    expect(logged("playtime dropped: user unknown")).toBe(true);
    expect(h.sb.state.attributes.map((a) => [a.user_id, a.value])).toEqual([[alice, "1"]]);
  });

  test("404 because the definition was deleted: every counter stays; the definition is created again", async () => {
    h = await setup();
    await start(); // caches the definition
    await seed(alice, 3600);
    h.sb.state.attributeDefinitions.delete(DEFINITION_ID);
    // The fetch answers from the old state once (as if deleted right after it), so the send meets the 404.
    h.sb.control.failNext({ path: "/user/attribute/definition/playtime" }, 1, 503);
    await advance(HOUR);
    expect(logged("no longer exists")).toBe(true);
    expect(await counter(alice)).toBe(3600);
    await advance(HOUR);
    const created = [...h.sb.state.attributeDefinitions.values()].find((d) => d.name === "playtime");
    expect(h.sb.state.attributes.map((a) => [a.definition_id, a.value])).toEqual([[created!.id, "1"]]);
    expect(await counter(alice)).toBe(0);
  });

  test("404 and the definition check fails (503): every counter stays, the round ends, sent next time", async () => {
    h = await setup();
    await start(); // caches the definition
    await seed(alice, 3600);
    await seed(carol, 7200);
    h.sb.state.attributeDefinitions.delete(DEFINITION_ID);
    // As above, so every POST meets 404; then the check of the definition by id meets a 503.
    h.sb.control.failNext({ path: "/user/attribute/definition/playtime" }, 1, 503);
    h.sb.control.failNext({ path: `/user/attribute/definition/${DEFINITION_ID}` }, 1, 503);
    await advance(HOUR);
    expect(logged("could not tell whether the definition exists")).toBe(true);
    expect(await counter(alice)).toBe(3600);
    expect(await counter(carol)).toBe(7200);
    await advance(HOUR);
    expect(h.sb.state.attributes.map((a) => [a.user_id, a.value]).sort()).toEqual([
      [alice, "1"],
      [carol, "2"],
    ]);
  });

  test("run --once: one report round through runOnce, no timers", async () => {
    h = await setup();
    const agent = new Agent({ ...h.agent.deps, once: true });
    h.agent = agent;
    await seed(alice, 3600);
    expect(await agent.start()).toBe(true);
    await h.idle();
    expect(sends()).toHaveLength(0);
    await agent.runOnce();
    expect(h.sb.state.attributes.map((a) => [a.user_id, a.value])).toEqual([[alice, "1"]]);
    expect(await counter(alice)).toBe(0);
  });
});
