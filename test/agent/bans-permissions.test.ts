/**
 * Who may get a player kicked, keep one in, or cancel a queued sanction (issue #9): a player's chat ban or unban
 * takes effect here only once the service accepted it, with the service up or down; the console and players in a
 * trusted in-game group (commands.trusted_groups) are enforced at once. Sandbox over loopback, SimGame, ManualClock.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { bans } from "../../lib/features/bans.ts";
import { MAX_WAITING_PER_PLAYER } from "../../lib/features/sanction-commands.ts";
import { SEED_IDS } from "../../lib/sandbox/seed.ts";
import { isBanned, sanctionQueues } from "../../lib/sanctions/index.ts";
import { until } from "../support/until.ts";
import type { SimGameOptions } from "../../lib/game/sim.ts";
import { harness, type Harness } from "./harness.ts";

const MIN = 60_000;
/** Alice holds no ban permission at the service; Carol is an admin there. Bob is banned there (seed). */
const ALICE = { id: SEED_IDS.steamid64.alice, name: "Alice" };
const BOB = { id: SEED_IDS.steamid64.bob, name: "Bob" };
const CAROL = { id: SEED_IDS.steamid64.carol, name: "Carol" };
const DAVE = { id: "76561198000000004", name: "Dave" };
const ERIN = { id: "76561198000000005", name: "Erin" };

let h: Harness;
afterEach(() => h?.close());

const start = async (env: Record<string, string> = {}, sim: SimGameOptions = {}) => {
  h = await harness({ features: [bans], env, sim });
  await h.agent.start();
  await h.idle();
};
const join = (p: { id: string; name: string }) => h.join(p);
const chat = (p: { id: string }, text: string) => h.chat(p, text);
const consoleLine = (line: string) => h.consoleLine(line);
const kicks = (p: { id: string }) => h.sim.actionsOf("kick").filter((k) => k.player === p.id);
const said = (p: { id: string }) => h.said(p);
const banPosts = () => h.sb.control.requests({ method: "POST", path: "/ban/" });
const unbanPatches = () => h.sb.control.requests({ method: "PATCH", path: /^\/user\/[^/]+\/ban$/ });
const queued = async () => {
  const q = sanctionQueues(h.store);
  return { ban: await q.ban.list(), unban: await q.unban.list() };
};
const userId = (steamid: string) => h.sb.state.findUser(steamid, "STEAM")?.id;
const activeBansOf = (steamid: string) =>
  [...h.sb.state.bans.values()].filter((b) => b.user_id === userId(steamid) && h.sb.state.banActive(b));
/** The service is back: one queue round, awaited until every queued entry is settled. */
const serviceReturns = async () => {
  await h.sb.control.up();
  await h.clock.advance(MIN);
  await until(async () => {
    const q = await queued();
    return q.ban.length + q.unban.length === 0;
  }, "the queues to drain");
  await h.idle();
};

describe("a player's chat sanctions take effect only once the service accepts them", () => {
  test("service down: an unprivileged !ban kicks nobody, an unprivileged !unban lets nobody in and cancels nothing; the console's ban holds at once and is delivered later; the service refuses the others and the issuer is told", async () => {
    await start();
    await join(ALICE);
    await join(DAVE);
    await join(ERIN);
    await h.sb.control.down();

    await consoleLine(`ban ${DAVE.id} 30m cheating`);
    expect(kicks(DAVE)).toHaveLength(1);

    await chat(ALICE, "!ban Erin 10 griefing");
    await chat(ALICE, `!unban ${DAVE.id}`);
    await chat(ALICE, `!unban ${BOB.id}`);
    expect(said(ALICE)).toEqual([
      "Ban of Erin (for 10m) is queued; it takes effect once VyHub accepts it. Reason: griefing",
      `Unban of ${DAVE.id} is queued; it takes effect once VyHub accepts it.`,
      `Unban of ${BOB.id} is queued; it takes effect once VyHub accepts it.`,
    ]);
    // Nobody kicked, and the operator's queued ban of Dave still stands.
    expect(kicks(ERIN)).toHaveLength(0);
    expect(h.sim.isOnline(ERIN.id)).toBe(true);
    const { ban, unban } = await queued();
    expect(ban.map((e) => [e.data.target.identifier, e.data.status, e.data.enforce])).toEqual([
      [DAVE.id, "ACTIVE", "now"],
      [ERIN.id, "ACTIVE", "on_accept"],
    ]);
    expect(unban.map((e) => [e.data.target.identifier, e.data.enforce])).toEqual([
      [DAVE.id, "on_accept"],
      [BOB.id, "on_accept"],
    ]);
    // Dave is still kicked on every join; Bob's cached service ban still holds.
    await join(DAVE);
    expect(kicks(DAVE)).toHaveLength(2);
    await join(BOB);
    expect(kicks(BOB)).toHaveLength(1);
    // The same after a restart, from the queue files alone.
    await h.agent.stop();
    h.restart();
    await h.agent.start();
    await h.idle();
    await join(DAVE);
    expect(kicks(DAVE)).toHaveLength(3);
    expect(h.sim.isOnline(ERIN.id)).toBe(true);

    await serviceReturns();
    // Alice's were sent as her and refused; Dave's ban as the console (no morph), before Alice's unban of him
    // (each player's entries go in creation order).
    const sent = h.sb.control.requests().filter((r) => banPosts().includes(r) || unbanPatches().includes(r));
    expect(sent.map((r) => [r.method, (r.body as { reason?: string } | undefined)?.reason ?? r.path, r.query])).toEqual(
      expect.arrayContaining([
        ["POST", "griefing", [["morph_user_id", SEED_IDS.users.alice]]],
        ["POST", "cheating", []],
      ]),
    );
    expect(banPosts()).toHaveLength(2);
    const daveBan = sent.findIndex((r) => (r.body as { reason?: string } | undefined)?.reason === "cheating");
    const daveUnban = sent.findIndex((r) => r.path === `/user/${userId(DAVE.id)}/ban`);
    expect(daveUnban).toBeGreaterThan(daveBan);
    expect(unbanPatches().map((r) => r.query.find(([k]) => k === "morph_user_id")?.[1])).toEqual([
      SEED_IDS.users.alice,
      SEED_IDS.users.alice,
    ]);
    expect(activeBansOf(DAVE.id)).toHaveLength(1);
    expect(activeBansOf(ERIN.id)).toHaveLength(0);
    expect(h.sb.state.bans.get(SEED_IDS.bans.bob_active)?.status).not.toBe("UNBANNED");
    const refusals = said(ALICE).slice(3).sort();
    expect(refusals).toHaveLength(3);
    expect(refusals[0]).toStartWith("VyHub refused the ban of Erin: POST /ban/: 403");
    expect(refusals[1]).toStartWith(`VyHub refused the unban of ${DAVE.id}: PATCH /user/${userId(DAVE.id)}/ban: 403`);
    expect(refusals[2]).toStartWith(`VyHub refused the unban of ${BOB.id}: PATCH /user/${SEED_IDS.users.bob}/ban: 403`);
    expect(kicks(ERIN)).toHaveLength(0);
    await join(DAVE);
    expect(kicks(DAVE)).toHaveLength(4);
  });

  test("service up: an unprivileged !ban is refused before anyone is kicked; an admin's is enforced once accepted", async () => {
    await start();
    await join(ALICE);
    await join(CAROL);
    await join(ERIN);
    await chat(ALICE, "!ban Erin 10 griefing");
    expect(said(ALICE)[1]).toStartWith("VyHub refused the ban of Erin: POST /ban/: 403");
    expect(kicks(ERIN)).toHaveLength(0);
    await chat(CAROL, "!ban Erin 10 griefing");
    expect(said(CAROL)[1]).toBe("Erin has been banned for 10m. Reason: griefing");
    expect(kicks(ERIN)).toHaveLength(1);
    expect(kicks(ERIN)[0]!.text).toContain(`Ban ID: ${activeBansOf(ERIN.id)[0]!.id}`);
  });

  test("an unprivileged player may withdraw their own queued ban; the console's unban cancels anyone's", async () => {
    await start();
    await join(ALICE);
    await h.sb.control.down();
    await chat(ALICE, `!ban ${ERIN.id} 10 oops`);
    await chat(ALICE, `!unban ${ERIN.id}`);
    await chat(ALICE, `!ban ${DAVE.id} 10 x`);
    await consoleLine(`unban ${DAVE.id}`);
    // Both queued bans were lifted, and dropped unsent by the next round (which needs no service for that).
    const lifted = (id: string) => `The queued ban of ${id} was lifted before it reached VyHub; it will not be sent.`;
    expect(said(ALICE)).toContain(lifted(ERIN.id));
    expect(said(ALICE)).toContain(lifted(DAVE.id));
    expect((await queued()).ban).toEqual([]);
    await serviceReturns();
    expect(banPosts()).toHaveLength(0);
    // The unbans were still sent as asked (and dropped: VyHub knows neither player, so there is nothing to lift).
    expect(said(ALICE)).toContain(`Unban of ${ERIN.id} dropped: the player is not known to VyHub.`);
  });
});

test("service down: an unprivileged player can't flood the queues; the console and trusted players can", async () => {
  await start({ HUB_COMMANDS_TRUSTED_GROUPS: "superadmin" });
  await join(ALICE);
  await join(CAROL);
  await h.sim.setGroup(
    h.sim.online().find((p) => p.id === CAROL.id)!,
    "superadmin",
    "add",
  );
  await h.sb.control.down();
  for (let i = 0; i < MAX_WAITING_PER_PLAYER + 2; i++)
    await h.typed(ALICE, `!ban 7656119800000${1000 + i} 10 spam ${i}`);
  await h.typed(ALICE, "!warn Carol spam");
  await h.typed(ALICE, `!unban ${BOB.id}`);
  const refused = `You have ${MAX_WAITING_PER_PLAYER} requests waiting for VyHub; try again once it has answered them.`;
  expect(said(ALICE).slice(MAX_WAITING_PER_PLAYER)).toEqual([refused, refused, refused, refused]);
  const waiting = async () => {
    const q = sanctionQueues(h.store);
    return (await q.ban.list()).length + (await q.unban.list()).length + (await q.warning.list()).length;
  };
  expect(await waiting()).toBe(MAX_WAITING_PER_PLAYER);
  // Not a cap on the console or a trusted player.
  for (let i = 0; i < MAX_WAITING_PER_PLAYER + 1; i++) await h.typed(CAROL, `!ban 7656119800000${2000 + i} 10 x`);
  await consoleLine(`ban 76561198000003000 10 x`);
  expect(await waiting()).toBe(2 * MAX_WAITING_PER_PLAYER + 2);
  // Once VyHub has answered them, the player may ask again.
  await serviceReturns();
  await chat(ALICE, "!ban 76561198000004000 10 again");
  expect(said(ALICE)).toContain(
    "Ban of 76561198000004000 (for 10m) is queued; it takes effect once VyHub accepts it. Reason: again",
  );
});

describe("commands.trusted_groups", () => {
  test("a trusted in-game group's ban is enforced at once offline and delivered later; other groups are not trusted", async () => {
    await start({ HUB_COMMANDS_TRUSTED_GROUPS: "superadmin,admin" });
    await join(ALICE);
    await join(CAROL);
    await join(DAVE);
    await join(ERIN);
    await h.sim.setGroup(
      h.sim.online().find((p) => p.id === CAROL.id)!,
      "superadmin",
      "add",
    );
    await h.sim.setGroup(
      h.sim.online().find((p) => p.id === ALICE.id)!,
      "vip",
      "add",
    );
    await h.sb.control.down();

    await chat(CAROL, "!ban Dave 1h griefing");
    expect(said(CAROL)).toEqual(["Ban of Dave (for 1h) is queued and will be sent to VyHub. Reason: griefing"]);
    expect(kicks(DAVE)).toHaveLength(1);
    expect(kicks(DAVE)[0]!.text).toContain("Banned by: Carol");
    await chat(ALICE, "!ban Erin 1h griefing");
    expect(kicks(ERIN)).toHaveLength(0);

    await serviceReturns();
    // Carol's and Alice's bans go out in parallel (one player each), in either order.
    expect(banPosts().map((p) => p.query)).toContainEqual([["morph_user_id", SEED_IDS.users.carol]]);
    expect(said(CAROL)[1]).toBe("Dave has been banned for 1h. Reason: griefing");
    expect(activeBansOf(DAVE.id)).toHaveLength(1);
    await join(DAVE);
    expect(kicks(DAVE)).toHaveLength(2);
  });

  test("where players are known only by name (anyone can take one), sanctions come from the console, not chat", async () => {
    await start({ HUB_COMMANDS_TRUSTED_GROUPS: "superadmin" }, { identity: "name" });
    await join(CAROL);
    await join(DAVE);
    // Carol's name and group say admin, but anyone could have joined as Carol: VyHub would check her rights, not
    // those of who typed it. Nothing is queued, nobody kicked, whatever the group or the service says.
    await h.sim.setGroup(
      h.sim.online().find((p) => p.id === CAROL.id)!,
      "superadmin",
      "add",
    );
    for (const line of ["!ban Dave 1h griefing", "!unban Bob", "!warn Dave spam"]) await chat(CAROL, line);
    const refusal =
      "On this server players are known only by their name, which anyone can take: bans, unbans and warnings are given from the server's console.";
    expect(said(CAROL)).toEqual([refusal, refusal, refusal]);
    expect(kicks(DAVE)).toHaveLength(0);
    expect(await queued()).toEqual({ ban: [], unban: [] });
    expect(await sanctionQueues(h.store).warning.list()).toEqual([]);
    expect([...banPosts(), ...unbanPatches()]).toEqual([]);
    // The console still bans there.
    await consoleLine("ban Dave 1h griefing");
    expect(kicks(DAVE)).toHaveLength(1);
    await until(() => activeBansOf(DAVE.id).length === 1, "the console's ban at the service");
  });

  test("a trusted issuer's unban lets the player in at once and cancels another's queued ban", async () => {
    await start({ HUB_COMMANDS_TRUSTED_GROUPS: "superadmin" });
    await join(ALICE);
    await join(CAROL);
    await h.sim.setGroup(
      h.sim.online().find((p) => p.id === CAROL.id)!,
      "superadmin",
      "add",
    );
    await h.sb.control.down();
    await chat(ALICE, `!ban ${BOB.id} 1h again`);
    await chat(CAROL, `!unban ${BOB.id}`);
    expect(said(ALICE)).toContain(
      `The queued ban of ${BOB.id} was lifted before it reached VyHub; it will not be sent.`,
    );
    expect((await queued()).ban).toEqual([]);
    expect(await isBanned(h.store, {}, BOB.id, h.clock.now())).toEqual({ banned: false });
    await join(BOB);
    expect(kicks(BOB)).toHaveLength(0);
  });
});

test("a queue entry written before enforce existed counts at once", async () => {
  await start();
  await sanctionQueues(h.store).ban.add({
    target: { identifier: DAVE.id, type: "STEAM", user_id: null, name: "Dave" },
    length: null,
    reason: "old",
    creator: { name: "Alice", user_id: null, identifier: ALICE.id, type: "STEAM" },
    created_on: new Date(h.clock.now()).toISOString(),
    status: "ACTIVE",
    serverbundle_id: h.sb.bundleId,
  });
  expect((await isBanned(h.store, {}, DAVE.id, h.clock.now())).banned).toBe(true);
});
