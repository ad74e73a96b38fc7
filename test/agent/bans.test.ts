/**
 * Bans in `run` (rules 9–11): the ban list at hub_ready, on the interval and from the cache; the kick at connect and
 * after every refresh; the queue job; chat and console commands end to end (sandbox over loopback, SimGame,
 * ManualClock).
 */
import { afterEach, describe, expect, test } from "bun:test";
import { BanListSchema, ServerSchema } from "../../lib/api/client.ts";
import { bans } from "../../lib/features/bans.ts";
import { SEED_IDS } from "../../lib/sandbox/seed.ts";
import { banCache, sanctionQueues } from "../../lib/sanctions/index.ts";
import { harness, until, type Harness } from "./harness.ts";

const MIN = 60_000;
const ALICE = { id: SEED_IDS.steamid64.alice, name: "Alice" };
const BOB = { id: SEED_IDS.steamid64.bob, name: "Bob" };
const CAROL = { id: SEED_IDS.steamid64.carol, name: "Carol" };
const DAVE = { id: "76561198000000004", name: "Dave" };

let h: Harness;
afterEach(() => h?.close());

const setup = () => harness({ features: [bans] });
const start = async () => {
  await h.agent.start();
  await h.idle();
};
const join = (p: { id: string; name: string }) => h.join(p);
const advance = async (ms: number) => {
  await h.clock.advance(ms);
  await h.idle();
};
const chat = (p: { id: string }, text: string) => h.chat(p, text);
const consoleLine = (line: string) => h.consoleLine(line);
const kicks = (p?: { id: string }) => h.sim.actionsOf("kick").filter((k) => !p || k.player === p.id);
const said = (p: { id: string }) => h.said(p);
const logged = (text: string) => h.logger.lines.some((l) => l.msg.includes(text));
const banFetches = () => h.sb.control.requests({ method: "GET", path: `/server/bundle/${h.sb.bundleId}/ban` });
const banPosts = () => h.sb.control.requests({ method: "POST", path: "/ban/" });
const unbans = () => h.sb.control.requests({ method: "PATCH", path: /^\/user\/[^/]+\/ban$/ });
const queued = async () => {
  const q = sanctionQueues(h.store);
  return { ban: await q.ban.list(), unban: await q.unban.list() };
};
const userId = (steamid: string) => h.sb.state.findUser(steamid, "STEAM")?.id;

describe("ban list and enforcement (rule 9)", () => {
  test("hub_ready: the active bans are fetched and cached; a banned player online at start is kicked with the ban message", async () => {
    h = await setup();
    h.sim.join(BOB); // online before the agent starts
    h.sim.join(ALICE);
    await start();
    expect(banFetches().map((r) => r.query)).toEqual([[["active", "true"]]]);
    const cached = await h.store.cache("bans", BanListSchema).get();
    expect(Object.keys(cached!.data)).toEqual([BOB.id]);
    expect(kicks().map((k) => k.player)).toEqual([BOB.id]);
    const text = kicks()[0]!.text!;
    expect(text).toContain("Reason: RDM x3");
    expect(text).toContain("Banned by: Carol");
    expect(text).toMatch(/Until: \d{4}-\d\d-\d\d \d\d:\d\d UTC/);
    expect(text).toContain(`Ban ID: ${SEED_IDS.bans.bob_active}`);
    expect(h.sim.isOnline(ALICE.id)).toBe(true);
  });

  test("every intervals.bans the list is refreshed and newly banned online players are kicked", async () => {
    h = await setup();
    await start();
    await join(ALICE);
    h.sb.state.addBan({ user_id: SEED_IDS.users.alice, serverbundle_id: h.sb.bundleId, reason: "Web ban" });
    await advance(MIN - 1);
    expect(kicks()).toHaveLength(0);
    await advance(1);
    expect(banFetches()).toHaveLength(2);
    expect(kicks(ALICE)).toHaveLength(1);
    expect(kicks(ALICE)[0]!.text).toContain("Reason: Web ban | Banned by: Console | Until: never");
  });

  test("a player whose kick the game ignored is kicked again a refresh later, also when the clock was set back an hour", async () => {
    h = await setup();
    await start();
    await join(ALICE);
    // A game that takes the kick command and leaves the player on.
    const ignored: string[] = [];
    h.sim.kick = async (player) => void ignored.push(player.id);
    h.sb.state.addBan({ user_id: SEED_IDS.users.alice, serverbundle_id: h.sb.bundleId, reason: "Web ban" });
    await advance(MIN);
    expect(ignored).toEqual([ALICE.id]);
    h.clock.jump(-60 * MIN); // NTP steps the wall clock back an hour
    await advance(MIN);
    expect(ignored).toEqual([ALICE.id, ALICE.id]);
  });

  test("a ban of absurd length (end in year 192159) no longer voids the list: every ban is enforced", async () => {
    h = await setup();
    await start();
    await join(ALICE);
    await join(CAROL);
    // What `ban X 99999999999 r` stored before lengths were bounded: the service still holds such bans.
    const absurd = h.sb.state.addBan({ user_id: SEED_IDS.users.alice, length: 99_999_999_999 * 60, reason: "typo" });
    h.sb.state.addBan({ user_id: SEED_IDS.users.carol, serverbundle_id: h.sb.bundleId, reason: "Web ban" });
    const raw = await fetch(`${h.sb.url}/server/bundle/${h.sb.bundleId}/ban?active=true`, {
      headers: { authorization: `Bearer ${h.sb.key}` },
    }).then((r) => r.json() as Promise<Record<string, { id: string; ends_on: string | null }[]>>);
    expect(raw[ALICE.id]?.find((b) => b.id === absurd.id)?.ends_on).toStartWith("+192159-");
    await advance(MIN);
    expect(kicks(CAROL)).toHaveLength(1);
    expect(kicks(ALICE)).toHaveLength(1);
    expect(kicks(ALICE)[0]!.text).toContain("Reason: typo");
    expect(h.logger.lines.filter((l) => l.level === "warn")).toEqual([]);
    expect(h.logger.lines.some((l) => l.tag === "api")).toBe(true); // the client's lines are seen here
  });

  test("one unreadable ban in the list is skipped and reported once; the others are enforced", async () => {
    h = await setup();
    await start();
    await join(ALICE);
    await join(CAROL);
    h.sb.state.addBan({ user_id: SEED_IDS.users.alice, serverbundle_id: h.sb.bundleId, reason: "bad" });
    h.sb.state.addBan({ user_id: SEED_IDS.users.carol, serverbundle_id: h.sb.bundleId, reason: "Web ban" });
    const list = await fetch(`${h.sb.url}/server/bundle/${h.sb.bundleId}/ban?active=true`, {
      headers: { authorization: `Bearer ${h.sb.key}` },
    }).then((r) => r.json() as Promise<Record<string, Record<string, unknown>[]>>);
    const bad = list[ALICE.id]![0]!;
    bad.created_on = "yesterday";
    const banPath = `/server/bundle/${h.sb.bundleId}/ban`;
    h.sb.control.failNext({ method: "GET", path: banPath }, 2, 200, JSON.stringify(list));
    await advance(MIN);
    expect(kicks(CAROL)).toHaveLength(1);
    expect(kicks(ALICE)).toHaveLength(0);
    await advance(MIN); // a second refresh with the same bad item: not reported again
    expect(banFetches().length).toBeGreaterThanOrEqual(3); // both bad answers were read
    const reports = h.logger.lines.filter((l) => l.msg.startsWith("skipped an unreadable item"));
    expect(reports.map((l) => l.msg)).toEqual([
      `skipped an unreadable item of a list answer, the rest is used: GET ${banPath} ${ALICE.id}[0] (id ${bad.id}): created_on: Expected an ISO-8601 timestamp with offset`,
    ]);
  });

  test("connect with the service down: the cached list kicks before the service has answered", async () => {
    h = await setup();
    await start(); // caches server record and bans
    await h.agent.stop();
    await h.sb.control.down();
    h.restart();
    await start();
    h.sb.control.clearRequests();
    await join(BOB);
    expect(kicks(BOB)).toHaveLength(1);
    expect(kicks(BOB)[0]!.text).toContain("Reason: RDM x3");
    expect(h.sb.control.requests()).toEqual([]); // it never answered
    expect(logged("ban list not refreshed")).toBe(true);
    await join(ALICE);
    expect(h.sim.isOnline(ALICE.id)).toBe(true);
  });

  test("an expired ban in the cache is not enforced", async () => {
    h = await setup();
    await start();
    await h.agent.stop();
    await h.sb.control.down();
    await h.clock.advance(8 * 24 * 60 * MIN); // Bob's 7-day ban has ended; the server record is re-cached to stay usable
    await h.store.cache("server", ServerSchema).set(h.agent.server!);
    h.restart();
    await start();
    await join(BOB);
    expect(kicks(BOB)).toHaveLength(0);
  });
});

describe("ban queue in run (rule 10)", () => {
  test("console ban while the service is down: queued, enforced, delivered once it returns; the console is told in the log", async () => {
    h = await setup();
    await start();
    await join(DAVE);
    await h.sb.control.down();
    await consoleLine(`ban ${DAVE.id} 30m cheating`);
    const { ban } = await queued();
    expect(ban.map((e) => e.data)).toEqual([
      {
        target: { identifier: DAVE.id, type: "STEAM", user_id: userId(DAVE.id)!, name: "Dave" },
        length: 1800,
        reason: "cheating",
        creator: null,
        created_on: new Date(h.clock.now()).toISOString(),
        status: "ACTIVE",
        serverbundle_id: h.sb.bundleId,
        enforce: "now",
      },
    ]);
    expect(logged("Ban of Dave (for 30m) is queued and will be sent to VyHub. Reason: cheating")).toBe(true);
    // The ban applies before delivery: Dave is kicked and cannot come back.
    expect(kicks(DAVE)).toHaveLength(1);
    expect(kicks(DAVE)[0]!.text).toContain("Banned by: Console | Until: 2026-11-21 12:30 UTC | Ban ID: pending");
    await join(DAVE);
    expect(kicks(DAVE)).toHaveLength(2);

    await h.sb.control.up();
    await advance(MIN);
    await until(() => banPosts().length === 1, "the ban to be sent");
    await h.idle();
    expect(banPosts()[0]!.query).toEqual([]);
    expect(banPosts()[0]!.body).toMatchObject({ user_id: userId(DAVE.id), length: 1800, reason: "cheating" });
    expect((await queued()).ban).toEqual([]);
    expect(logged("Dave has been banned for 30m. Reason: cheating")).toBe(true);
    await advance(MIN);
    expect(banPosts()).toHaveLength(1);
  });

  test("a game that knows its players by name: the console bans an offline player never seen by the name", async () => {
    h = await harness({ features: [bans], sim: { userType: "CENTRAL" } });
    // What the preset bridge of such a game (OpenArena, Xonotic, Teeworlds) gives: the game's id of a name.
    Object.assign(h.sim, { nameId: (name: string) => name.replace(/\^\d/g, "").trim() || undefined });
    await start();
    await consoleLine("ban ^1Gri^7efer 30m spawn camping");
    await until(() => banPosts().length === 1, "the ban to be sent");
    await h.idle();
    const user = h.sb.state.findUser("Griefer", "CENTRAL");
    expect(user).toBeDefined();
    expect(banPosts()[0]!.body).toMatchObject({ user_id: user!.id, length: 1800, reason: "spawn camping" });
    expect((await queued()).ban).toEqual([]);
  });

  test("a player's ban is sent with their user as morph_user_id; they are told; the target is kicked with the service's ban", async () => {
    h = await setup();
    await start();
    await join(CAROL);
    await join(DAVE);
    await chat(CAROL, "!ban dave 10 griefing the spawn");
    expect(banPosts()).toHaveLength(1);
    expect(banPosts()[0]!.query).toEqual([["morph_user_id", SEED_IDS.users.carol]]);
    expect(said(CAROL)).toEqual([
      "Ban of Dave (for 10m) is queued; it takes effect once VyHub accepts it. Reason: griefing the spawn",
      "Dave has been banned for 10m. Reason: griefing the spawn",
    ]);
    const ban = [...h.sb.state.bans.values()].find((b) => b.user_id === userId(DAVE.id))!;
    expect(kicks(DAVE)).toHaveLength(1);
    expect(kicks(DAVE)[0]!.text).toContain(`Banned by: Carol | Until: 2026-11-21 12:10 UTC | Ban ID: ${ban.id}`);
    expect(banFetches().length).toBeGreaterThanOrEqual(2); // refreshed after the ban
  });

  test("4xx (no permission): dropped, the creator is told why, the target stays", async () => {
    h = await setup();
    await start();
    await join(ALICE);
    await join(DAVE);
    await chat(ALICE, `!ban ${DAVE.id} perm nope`);
    expect(banPosts()).toHaveLength(1);
    expect(said(ALICE)[1]).toMatch(/^VyHub refused the ban of Dave: POST \/ban\/: 403 Missing properties: ban_edit/);
    expect((await queued()).ban).toEqual([]);
    expect(kicks()).toHaveLength(0);
    await advance(MIN);
    expect(banPosts()).toHaveLength(1);
  });

  test("404: dropped, the creator is told the player is unknown", async () => {
    h = await setup();
    await start();
    await join(CAROL);
    await join(DAVE);
    h.sb.control.failNext({ method: "POST", path: "/ban/" }, 1, 404);
    await chat(CAROL, `!ban ${DAVE.id} 5 x`);
    expect(said(CAROL)[1]).toBe("Ban of Dave dropped: the player is not known to VyHub.");
    expect((await queued()).ban).toEqual([]);
  });

  test("5xx: kept and retried every intervals.queues, once per round", async () => {
    h = await setup();
    await start();
    await join(CAROL);
    h.sb.control.failNext({ method: "POST", path: "/ban/" }, 2, 500);
    // Dave is offline: named by his id.
    await chat(CAROL, `!ban ${DAVE.id} 5 x`);
    expect(said(CAROL)).toHaveLength(1); // queued; nothing settled yet
    const [entry] = (await queued()).ban;
    expect(entry).toMatchObject({ attempts: 1, lastError: "POST /ban/: 500 Internal server error." });
    await advance(MIN);
    expect(banPosts()).toHaveLength(2);
    await advance(MIN);
    expect(banPosts()).toHaveLength(3);
    expect(said(CAROL)[1]).toBe(`${DAVE.id} has been banned for 5m. Reason: x`);
    await advance(MIN);
    expect(banPosts()).toHaveLength(3);
  });

  test("an answer lost, then the clock set an hour ahead: looked up only after the settle time, never sent twice", async () => {
    h = await harness({ features: [bans], env: { HUB_API_TIMEOUT: "1" }, timeoutMs: 1_000 });
    await start();
    // VyHub takes 2.5 s over the ban: the agent gives up after 1 s, and VyHub makes it all the same.
    h.sb.control.latency(2_500, { method: "POST", path: "/ban/" });
    await consoleLine(`ban ${DAVE.id} 1d griefing`);
    expect((await queued()).ban).toEqual([expect.objectContaining({ uncertain: true })]);
    h.clock.jump(60 * MIN); // NTP steps the wall clock an hour ahead: no time has passed
    await consoleLine(`warn ${DAVE.id} spam`); // a round for Dave's sanctions now
    h.sb.control.latency(0);
    const bansOfDave = () => [...h.sb.state.bans.values()].filter((b) => b.user_id === userId(DAVE.id));
    await until(() => bansOfDave().length > 0, "VyHub to make the ban");
    await Bun.sleep(3_000); // a second POST, had one gone out, would be made by now
    expect(bansOfDave()).toHaveLength(1);
    expect(banPosts()).toHaveLength(1);
  }, 20_000);

  test("queued bans survive a restart and are delivered at the next start", async () => {
    h = await setup();
    await start();
    await h.sb.control.down();
    await consoleLine(`ban ${DAVE.id} 0 evading`);
    await h.agent.stop();
    await h.sb.control.up();
    h.restart();
    await start();
    expect(banPosts()).toHaveLength(1);
    expect(banPosts()[0]!.body).toMatchObject({ length: null, reason: "evading" });
    expect((await queued()).ban).toEqual([]);
  });
});

describe("unban (rule 11)", () => {
  test("unban of a still-queued ban: the ban is never sent, the unban is; the player may join meanwhile", async () => {
    h = await setup();
    await start();
    await h.sb.control.down();
    await consoleLine(`ban ${BOB.id} 60 again`);
    expect((await queued()).ban.map((e) => e.data.status)).toEqual(["ACTIVE"]);
    await consoleLine(`unban ${BOB.id}`);
    // Marked UNBANNED, then dropped by the delivery round without a request.
    const { ban, unban } = await queued();
    expect(ban).toEqual([]);
    expect(logged(`The queued ban of ${BOB.id} was lifted before it reached VyHub; it will not be sent.`)).toBe(true);
    expect(unban.map((e) => e.data)).toEqual([
      {
        target: { identifier: BOB.id, type: "STEAM", user_id: null, name: "" },
        processor: null,
        created_on: new Date(h.clock.now()).toISOString(),
        serverbundle_id: h.sb.bundleId,
        enforce: "now",
      },
    ]);
    // The queued unban wins over the cached service ban too.
    await join(BOB);
    expect(kicks(BOB)).toHaveLength(0);

    await h.sb.control.up();
    await advance(MIN);
    await until(() => unbans().length === 1, "the unban");
    await h.idle();
    expect(banPosts()).toHaveLength(0);
    const [patch] = unbans();
    expect(patch!.path).toBe(`/user/${SEED_IDS.users.bob}/ban`);
    expect(patch!.query).toEqual([["serverbundle_id", h.sb.bundleId]]);
    expect(h.sb.state.bans.get(SEED_IDS.bans.bob_active)?.status).toBe("UNBANNED");
    expect(await queued()).toEqual({ ban: [], unban: [] });
    expect(logged(`${BOB.id} has been unbanned.`)).toBe(true);
    await advance(MIN);
    expect(kicks(BOB)).toHaveLength(0);
  });

  test("the clock set back an hour between a ban and its unban: the unban lifts it, the player may join", async () => {
    h = await setup();
    await start();
    await consoleLine(`ban ${DAVE.id} 1d griefing`);
    const user = userId(DAVE.id)!;
    const active = () => [...h.sb.state.bans.values()].filter((b) => b.user_id === user && h.sb.state.banActive(b));
    expect(active()).toHaveLength(1);
    h.clock.jump(-60 * MIN); // the clock ran an hour ahead; NTP steps it back
    await advance(5 * MIN);
    await consoleLine(`unban ${DAVE.id}`);
    await h.idle();
    expect(active()).toEqual([]);
    expect(logged(`${DAVE.id} has been unbanned.`)).toBe(true);
    await join(DAVE);
    expect(kicks(DAVE)).toHaveLength(0);
  });

  test("the clock set back an hour, then an unban queued while the service is down: the player may join meanwhile", async () => {
    h = await setup();
    await start();
    await consoleLine(`ban ${DAVE.id} 1d griefing`);
    h.clock.jump(-60 * MIN);
    await advance(5 * MIN);
    await h.sb.control.down();
    await consoleLine(`unban ${DAVE.id}`);
    await join(DAVE);
    expect(kicks(DAVE)).toHaveLength(0);
    await h.sb.control.up();
    await advance(MIN);
    await until(() => unbans().length === 1, "the unban");
    await advance(MIN);
    expect(kicks(DAVE)).toHaveLength(0);
  });

  test("a player's unban: morph_user_id is theirs, they are told", async () => {
    h = await setup();
    await start();
    await join(CAROL);
    await chat(CAROL, `!unban ${BOB.id}`);
    const [patch] = unbans();
    expect(patch!.query).toEqual([
      ["serverbundle_id", h.sb.bundleId],
      ["morph_user_id", SEED_IDS.users.carol],
    ]);
    expect(said(CAROL)).toEqual([
      `Unban of ${BOB.id} is queued; it takes effect once VyHub accepts it.`,
      `${BOB.id} has been unbanned.`,
    ]);
  });
});

describe("the cached ban list", () => {
  test("a delivered unban lifts the ban there too, when no refresh follows: a restart would not kick them", async () => {
    h = await setup();
    await start();
    const cachedBans = async (p: { id: string }) => (await banCache(h.store).get())?.data[p.id] ?? [];
    expect((await cachedBans(BOB)).length).toBeGreaterThan(0);
    // The refresh after the unban fails: only the unban's own outcome can change the cache.
    h.sb.control.failNext({ method: "GET", path: `/server/bundle/${h.sb.bundleId}/ban` }, 5, 503);
    await consoleLine(`unban ${BOB.id}`);
    await until(() => unbans().length === 1, "the unban");
    await h.idle();
    expect(logged("ban list not refreshed")).toBe(true);
    expect(await cachedBans(BOB)).toEqual([]);
  });
});

describe("command input", () => {
  test("bad input is answered to the invoker with the accepted forms; nothing is queued", async () => {
    h = await setup();
    await start();
    await join(CAROL);
    await join(DAVE);
    await h.typed(CAROL, "!ban");
    await h.typed(CAROL, "!ban Dave soon griefing");
    await h.typed(CAROL, "!ban Dave 99999999999 griefing");
    await h.typed(CAROL, "!ban Dave 10");
    await h.typed(CAROL, "!ban Nobody 10 x");
    await h.typed(CAROL, "!warn Dave");
    expect(said(CAROL)).toEqual([
      "Usage: ban <player> <length> <reason>",
      "Invalid ban length soon: use minutes (90), a duration (30m, 1d12h, 2w) or 0/perm for a permanent ban.",
      "Ban length 99999999999 is too long: the longest ban is 10 years (3650d); use 0/perm for a permanent ban.",
      "A reason is required.",
      "No player matches Nobody.",
      "A reason is required.",
    ]);
    expect(await queued()).toEqual({ ban: [], unban: [] });
  });

  test("an ambiguous nick names the candidates", async () => {
    h = await setup();
    await start();
    await join(CAROL);
    await join({ id: "76561198000000011", name: "Sam One" });
    await join({ id: "76561198000000012", name: "Sam Two" });
    await chat(CAROL, "!ban sam 10 x");
    expect(said(CAROL)).toEqual([
      "sam matches several players: Sam One (76561198000000011), Sam Two (76561198000000012). Be more precise.",
    ]);
  });

  test("command names come from config commands.*", async () => {
    h = await harness({ features: [bans], env: { HUB_COMMANDS_BAN: "vban" } });
    await start();
    await join(CAROL);
    await chat(CAROL, `!ban ${DAVE.id} 10 x`);
    expect(banPosts()).toHaveLength(0);
    await chat(CAROL, `!vban ${DAVE.id} 10 x`);
    expect(banPosts()).toHaveLength(1);
  });
});
