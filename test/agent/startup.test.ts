import { afterEach, describe, expect, test } from "bun:test";
import { ServerSchema } from "../../lib/api/client.ts";
import { SERVER_CACHE_MAX_AGE_MS } from "../../lib/agent.ts";
import type { Feature } from "../../lib/feature.ts";
import { harness, until, type Harness } from "./harness.ts";
import { SEED_IDS } from "../../lib/sandbox/seed.ts";

const DAY = 24 * 3600_000;
let h: Harness;
afterEach(() => h?.close());

describe("startup (rules 1–4)", () => {
  test("online: loading start, loading finish, api ready, ready; the record is cached", async () => {
    h = await harness();
    await h.agent.start();
    expect(h.events).toEqual(["hub_loading_start", "hub_loading_finish", "hub_api_ready", "hub_ready"]);
    expect(h.agent.server?.name).toBe("TTT #1 | example.org");
    expect(h.agent.bundleId).toBe(h.sb.bundleId);
    const cached = await h.store.cache("server", ServerSchema).get();
    expect(cached?.data.id).toBe(h.sb.serverId);
    expect(cached?.savedAt).toBe(h.clock.now());
  });

  test("offline with a cache younger than a week: api failed, then ready from the cache; the live record is fetched once back", async () => {
    h = await harness();
    await h.agent.start();
    await h.agent.stop();
    h.events.length = 0;
    h.clock.advance(6 * DAY);
    await h.sb.control.down();
    const agent = h.restart();
    await agent.start();
    expect(h.events).toEqual(["hub_loading_start", "hub_loading_finish", "hub_api_failed", "hub_ready"]);
    expect(agent.server?.id).toBe(h.sb.serverId);
    expect(h.logger.lines.some((l) => l.msg.includes("using the server record cached 144 h ago"))).toBe(true);

    await h.sb.control.up();
    await h.idle();
    await h.clock.advance(60_000);
    await until(() => h.events.includes("hub_api_ready"), "the live record after the service returned");
    const cached = await h.store.cache("server", ServerSchema).get();
    expect(cached?.savedAt).toBe(h.clock.now());
  });

  test("offline with another server's record cached (api.server_id changed since): not used, no hub_ready", async () => {
    h = await harness();
    await h.agent.start();
    await h.agent.stop();
    const cache = h.store.cache("server", ServerSchema);
    const cached = await cache.get();
    await cache.set({ ...cached!.data, id: "00000000-0000-4000-8000-000000000001" });
    h.events.length = 0;
    await h.sb.control.down();
    const agent = h.restart();
    void agent.start();
    await until(() => h.logger.lines.some((l) => l.msg.includes("no cached server record of this server")), "the why");
    expect(h.events).not.toContain("hub_ready");
    expect(agent.server).toBeUndefined();
    await agent.stop();
  });

  test("offline with a cache older than a week: no hub_ready until the service returns, retrying every minute", async () => {
    h = await harness();
    await h.store
      .cache("server", ServerSchema)
      .set((await fetchRecord(h)) as never, h.clock.now() - SERVER_CACHE_MAX_AGE_MS - 1);
    await h.sb.control.down();
    const started = h.agent.start();
    await until(() => h.logger.lines.some((l) => l.msg.includes("older than a week")), "the first failed attempt");
    const attempts = () => h.logger.lines.filter((l) => l.msg.includes("older than a week")).length;
    for (let i = 1; i < 4; i++) {
      await until(() => attempts() === i, `attempt ${i}`);
      await h.clock.advance(60_000);
    }
    await until(() => attempts() === 4, "four attempts");
    // hub_api_failed once (an operator's alert hook fires), and no hub_ready.
    expect(h.events).toEqual(["hub_loading_start", "hub_loading_finish", "hub_api_failed"]);

    await h.sb.control.up();
    await h.clock.advance(60_000);
    await started;
    expect(h.events).toEqual([
      "hub_loading_start",
      "hub_loading_finish",
      "hub_api_failed",
      "hub_api_ready",
      "hub_ready",
    ]);
  });

  test("offline with a cache dated in the future (the clock was set back): stale, not fresh", async () => {
    h = await harness();
    await h.store.cache("server", ServerSchema).set((await fetchRecord(h)) as never, h.clock.now() + DAY);
    await h.sb.control.down();
    const started = h.agent.start();
    await until(() => h.logger.lines.some((l) => l.msg.includes("dated in the future")), "the first failed attempt");
    expect(h.events).toEqual(["hub_loading_start", "hub_loading_finish", "hub_api_failed"]);
    await h.agent.stop();
    await started;
    expect(h.events).not.toContain("hub_ready");
  });

  test("stop() while waiting for the service ends start() without hub_ready", async () => {
    h = await harness();
    await h.sb.control.down();
    const started = h.agent.start();
    await until(() => h.logger.lines.some((l) => l.msg.includes("no cached server record")), "a failed attempt");
    await h.agent.stop();
    await started;
    expect(h.events).not.toContain("hub_ready");
  });
});

async function fetchRecord(x: Harness) {
  const r = await fetch(`${x.sb.url}/server/${x.sb.serverId}`, { headers: { authorization: `Bearer ${x.sb.key}` } });
  return r.json();
}

describe("status (rule 5)", () => {
  test("sent at hub_ready and every interval, numbers and booleans, only players with a user", async () => {
    h = await harness({ sim: { maxPlayers: 32, map: "gm_construct" } });
    await h.agent.start();
    const patches = () => h.sb.control.requests({ method: "PATCH", path: `/server/${h.sb.serverId}` });
    await until(() => patches().length === 1, "the first status");
    expect(patches()[0]?.body).toEqual({
      users_max: 32,
      users_current: 0,
      map: "gm_construct",
      is_alive: true,
      user_activities: [],
    });

    h.sim.join({ id: "76561198012345671", name: "Alice", extra: { score: 12 } });
    await until(() => h.events.includes("hub_ply_initialized"), "Alice initialised");
    await h.idle();
    await h.clock.advance(59_000);
    expect(patches()).toHaveLength(1);
    await h.clock.advance(1_000);
    await until(() => patches().length === 2, "the second status");
    const alice = h.agent.users.get("76561198012345671");
    expect(patches()[1]?.body).toEqual({
      users_max: 32,
      users_current: 1,
      map: "gm_construct",
      is_alive: true,
      user_activities: [{ user_id: alice?.id, extra: { Nickname: "Alice", score: 12 } }],
    });
    await h.idle();
    await h.clock.advance(60_000);
    await until(() => patches().length === 3, "the third status");
  });

  test("the map comes from game.map when the game cannot tell, and is always a string", async () => {
    h = await harness({ sim: { map: undefined }, env: { HUB_GAME_MAP: "de_dust2" } });
    await h.agent.start();
    const patches = () => h.sb.control.requests({ method: "PATCH" });
    await until(() => patches().length === 1, "the first status");
    expect(patches()[0]?.body).toMatchObject({ map: "de_dust2" });
  });
});

describe("users (rule 6)", () => {
  test("an unknown player is created on 404, then initialised", async () => {
    h = await harness();
    await h.agent.start();
    h.sim.join({ id: "76561198000000001", name: "Newbie" });
    await until(() => h.events.includes("hub_ply_initialized"), "initialised");
    const posts = h.sb.control.requests({ method: "POST", path: "/user/" });
    expect(posts.map((r) => r.body)).toEqual([{ identifier: "76561198000000001", type: "STEAM", username: "Newbie" }]);
    expect(h.agent.users.get("76561198000000001")?.identifier).toBe("76561198000000001");
  });

  test("another creator registered the player between our 404 and our POST (the service's 500); the user is read, then initialised", async () => {
    h = await harness();
    await h.agent.start();
    const dave = { id: "76561198000000042", name: "Dave" };
    // Another creator (a sanctions round of this or another process) registers Dave just after our GET said 404.
    const stop = h.sb.control.onHandled({ method: "GET", path: `/user/${dave.id}` }, (e) => {
      if (e.status === 404 && !h.sb.state.findUser(dave.id, "STEAM"))
        h.sb.state.addUser({ identifier: dave.id, type: "STEAM" });
    });
    h.sim.join(dave);
    await until(() => h.events.includes("hub_ply_initialized"), "Dave initialised", 2000);
    stop();
    const lookups = h.sb.control.requests({ path: new RegExp(`^/user/(${dave.id})?$`) });
    const asked = lookups.map((r) => `${r.method} ${r.path} ${r.status}`);
    expect(asked).toEqual([`GET /user/${dave.id} 404`, "POST /user/ 500", `GET /user/${dave.id} 200`]);
    expect(h.agent.users.get(dave.id)?.id).toBe(h.sb.state.findUser(dave.id, "STEAM")!.id);
  });

  test("concurrent connects of the same player make one request", async () => {
    h = await harness();
    await h.agent.start();
    h.sb.control.latency(50, { path: /^\/user\// });
    const alice = { id: "76561198012345671", name: "Alice" };
    const users = await Promise.all([1, 2, 3].map(() => h.agent.users.ensure(alice)));
    expect(new Set(users.map((u) => u?.id)).size).toBe(1);
    expect(h.sb.control.requests({ method: "GET", path: "/user/76561198012345671" })).toHaveLength(1);
    const newbie = { id: "76561198000000009", name: "New" };
    await Promise.all([h.agent.users.ensure(newbie), h.agent.users.ensure(newbie)]);
    expect(h.sb.control.requests({ method: "POST", path: "/user/" })).toHaveLength(1);
  });

  test("a 500 on the lookup is retried after intervals.user_retry, not before", async () => {
    h = await harness();
    await h.agent.start();
    h.sb.control.failNext({ method: "GET", path: "/user/76561198000000002" }, 1, 500);
    h.sim.join({ id: "76561198000000002", name: "Unlucky" });
    const gets = () => h.sb.control.requests({ method: "GET", path: "/user/76561198000000002" });
    await until(() => gets().length === 1 && gets()[0]?.status === 500, "the failed lookup");
    await h.idle();
    await h.clock.advance(59_000);
    expect(gets()).toHaveLength(1);
    await h.clock.advance(1_000);
    await until(() => h.events.includes("hub_ply_initialized"), "initialised on the retry");
    expect(gets()).toHaveLength(2);
  });

  test("a timeout on the lookup is retried too; a player who left is not", async () => {
    h = await harness({ timeoutMs: 150 });
    await h.agent.start();
    h.sb.control.latency(400, { path: /^\/user\/76561198000000003/ });
    h.sim.join({ id: "76561198000000003", name: "Slow" });
    h.sim.join({ id: "76561198000000004", name: "Gone" });
    h.sb.control.failNext({ method: "GET", path: "/user/76561198000000004" }, 1, 503);
    await until(() => h.agent.users.pending.size === 2, "both lookups failed");
    h.sb.control.latency(0);
    h.sim.leave("76561198000000004");
    await h.idle();
    await h.clock.advance(60_000);
    await until(() => h.events.includes("hub_ply_initialized"), "Slow initialised");
    expect(h.agent.users.get("76561198000000003")).toBeDefined();
    expect(h.sb.control.requests({ method: "GET", path: "/user/76561198000000004" })).toHaveLength(1);
  });
});

describe("players online at start (initial players)", () => {
  test("one who leaves and is back while the disconnect's handlers still run is a new connection: not resumed", async () => {
    const alice = { id: SEED_IDS.steamid64.alice, name: "Alice" };
    let release: (() => void) | undefined;
    const slowGoodbye: Feature = (ctx) =>
      ctx.onGame("player_disconnect", () => new Promise<void>((r) => (release = r)));
    h = await harness({ sim: { players: [alice] }, features: [slowGoodbye] });
    const flags: [string, boolean][] = [];
    h.agent.events.on("hub_ply_initialized", ({ player, resumed }) => void flags.push([player.name, resumed]));
    await h.agent.start();
    await until(() => flags.length === 1, "Alice initialised");
    h.sim.leave(alice.id);
    await until(() => release !== undefined, "the disconnect's handler running");
    h.sim.join(alice); // a client's reconnect: seen connecting
    await until(() => flags.length === 2, "Alice initialised again");
    release?.();
    await h.idle();
    expect(flags).toEqual([
      ["Alice", true],
      ["Alice", false],
    ]);
  });

  test("initialised with resumed: true, unlike one seen connecting or reconnecting; the previous run's list is read first", async () => {
    const alice = { id: SEED_IDS.steamid64.alice, name: "Alice" };
    const carol = { id: SEED_IDS.steamid64.carol, name: "Carol" };
    h = await harness({ sim: { players: [alice] } });
    const seen = () => {
      const flags: [string, boolean][] = [];
      h.agent.events.on("hub_ply_initialized", ({ player, resumed }) => void flags.push([player.name, resumed]));
      return flags;
    };
    let flags = seen();
    await h.agent.start();
    await until(() => flags.length === 1, "Alice initialised");
    h.sim.join(carol);
    await until(() => flags.length === 2, "Carol initialised");
    h.sim.leave(alice.id);
    await h.idle();
    h.sim.join(alice);
    await until(() => flags.length === 3, "Alice initialised again");
    await h.idle();
    expect(flags).toEqual([
      ["Alice", true],
      ["Carol", false],
      ["Alice", false],
    ]);
    expect([...h.agent.previousOnline]).toEqual([]);

    // The next run: both are online from the start; the online feature's list told who the last run saw.
    await h.agent.stop();
    const agent = h.restart();
    flags = seen();
    await agent.start();
    await until(() => flags.length === 2, "both initialised");
    expect(flags.sort()).toEqual([
      ["Alice", true],
      ["Carol", true],
    ]);
    expect([...agent.previousOnline].sort()).toEqual([alice.id, carol.id].sort());
  });

  test("a banned player online at start is kicked once: gone by the time the initial players get to them", async () => {
    const alice = { id: SEED_IDS.steamid64.alice, name: "Alice" };
    const bob = { id: SEED_IDS.steamid64.bob, name: "Bob" }; // banned in the seed data
    h = await harness({ sim: { players: [alice, bob] } });
    await h.agent.start();
    await until(() => h.events.includes("hub_ply_initialized"), "Alice initialised");
    await h.idle();
    expect(h.sim.actionsOf("kick").map((k) => k.player)).toEqual([bob.id]);
    expect(h.events.filter((e) => e === "hub_ply_connected").length).toBe(1);
  });
});

describe("before hub_ready", () => {
  test("a banned player joining and a console command typed while the service is being asked are handled once ready", async () => {
    h = await harness();
    await h.agent.start(); // caches the server record and the ban list
    await h.agent.stop();
    h.sb.control.clearRequests();
    await h.sb.control.down();
    const agent = h.restart();
    const starting = agent.start();
    const bob = { id: SEED_IDS.steamid64.bob, name: "Bob" };
    h.sim.join(bob); // banned in the seed data
    h.sim.operatorInput("dashboard");
    await starting;
    await until(() => h.sim.actionsOf("kick").length === 1, "Bob kicked from the cached ban list");
    await until(() => h.logger.lines.some((l) => l.tag === "console"), "the console command answered");
  });

  test("a player the ban check refuses at connect is not initialized: no user lookup, no hub_ply_initialized", async () => {
    h = await harness();
    await h.agent.start();
    await h.idle();
    h.sb.control.clearRequests();
    h.sim.join({ id: SEED_IDS.steamid64.bob, name: "Bob" });
    await until(() => h.sim.actionsOf("kick").length === 1, "Bob kicked");
    await h.idle();
    expect(h.events.filter((e) => e === "hub_ply_initialized")).toEqual([]);
    expect(h.sb.control.requests({ path: /^\/user\// })).toEqual([]);
  });
});

test("users: a registration the service refuses (4xx) is not retried every minute", async () => {
  h = await harness();
  await h.agent.start();
  h.sb.control.failNext({ method: "POST", path: "/user/" }, 1, 422, { detail: "invalid identifier" });
  h.sim.join({ id: "76561198000000042", name: "Odd" });
  await until(() => h.logger.lines.some((l) => l.msg.includes("refused to register")), "the refusal logged");
  await h.idle();
  await h.clock.advance(60_000);
  await h.idle();
  expect(h.sb.control.requests({ method: "POST", path: "/user/" })).toHaveLength(1);
});
