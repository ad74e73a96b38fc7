import { afterEach, describe, expect, test } from "bun:test";
import { groups } from "../../lib/features/groups.ts";
import { SEED_IDS } from "../../lib/sandbox/seed.ts";
import type { GamePlayer } from "../../lib/game/bridge.ts";
import type { SimAction } from "../../lib/game/sim.ts";
import { harness, until, type Harness } from "./harness.ts";

const carol = { id: SEED_IDS.steamid64.carol, name: "Carol" };
const alice = { id: SEED_IDS.steamid64.alice, name: "Alice" };
const G = SEED_IDS.groups;
let h: Harness;
afterEach(() => h?.close());

const messagesTo = (id: string) =>
  h.sim
    .actionsOf("message")
    .filter((a: SimAction) => a.player === id)
    .map((a: SimAction) => a.text);
const setGroups = (id: string) => h.sim.actionsOf("set_group").filter((a: SimAction) => a.player === id);

/** Joins and waits for the first sync to finish (hub_ply_initialized → groups). */
async function join(player: { id: string; name: string }) {
  h.sim.join(player);
  await until(() => h.agent.users.get(player.id) !== undefined, `${player.name}'s user`);
  await h.idle();
}

/** Ends a membership at the service, as if it expired or an admin removed it on the web. */
function endMembership(userId: string, groupId: string) {
  for (const m of h.sb.state.memberships.values())
    if (m.user_id === userId && m.group_id === groupId) m.end = h.clock.now() - 1000;
}

describe("group sync (rule 7)", () => {
  test("single-group game: the highest permission level wins, global mappings included; the player is told", async () => {
    h = await harness({ features: [groups] });
    const owner = h.sb.state.addGroup({ name: "Owner", permission_level: 200 });
    h.sb.state.addMapping(owner.id, "owner", null); // global: valid in every bundle
    h.sb.state.addMembership({ user_id: SEED_IDS.users.carol, group_id: owner.id, serverbundle_id: h.sb.bundleId });
    await h.agent.start();
    await join(carol);
    expect(h.sim.groupsOf(carol.id)).toEqual(["owner"]);
    expect(messagesTo(carol.id)).toEqual(["Your group has been changed to owner."]);

    endMembership(SEED_IDS.users.carol, owner.id);
    await h.clock.advance(300_000); // the next round, spread over the interval
    await until(() => h.sim.groupsOf(carol.id)[0] === "superadmin", "the next group sync");
    expect(messagesTo(carol.id).at(-1)).toBe("Your group has been changed to superadmin.");

    // Nothing changed since: a further round sets nothing and says nothing.
    const before = setGroups(carol.id).length;
    await h.idle();
    await h.clock.advance(300_000);
    await h.clock.advance(300_000);
    await h.idle();
    expect(setGroups(carol.id).length).toBe(before);
  });

  test("single-group game: losing the last mapped group removes it", async () => {
    h = await harness({ features: [groups] });
    await h.agent.start();
    await join(carol);
    expect(h.sim.groupsOf(carol.id)).toEqual(["superadmin"]);
    endMembership(SEED_IDS.users.carol, G.admin);
    await h.clock.advance(300_000);
    await until(() => h.sim.groupsOf(carol.id).length === 0, "the admin group removed");
    expect(messagesTo(carol.id).at(-1)).toBe("You were removed from the group superadmin.");
  });

  test("multi-group game: every mapping of this bundle and the global ones; only mapped groups are removed", async () => {
    h = await harness({ features: [groups], sim: { multiGroup: true } });
    h.sb.state.addMembership({ user_id: SEED_IDS.users.carol, group_id: G.moderator, serverbundle_id: h.sb.bundleId });
    const other = h.sb.state.addGroup({ name: "Elsewhere", permission_level: 5 });
    h.sb.state.addMapping(other.id, "other_bundle_only", "00000000-0000-4000-8000-000000000000");
    h.sb.state.addMembership({ user_id: SEED_IDS.users.carol, group_id: other.id, serverbundle_id: h.sb.bundleId });
    // Carol already holds a group VyHub does not manage, and a mapped one she should no longer have.
    h.sim.groupChange(carol.id, "builder", "add");
    h.sim.groupChange(carol.id, "vip", "add");
    await h.agent.start();
    await join(carol);
    expect([...h.sim.groupsOf(carol.id)].sort()).toEqual(["builder", "moderator", "operator", "superadmin"]);
    expect(messagesTo(carol.id).sort()).toEqual([
      "You were added to the group moderator.",
      "You were added to the group operator.",
      "You were added to the group superadmin.",
      "You were removed from the group vip.",
    ]);
  });

  test("a game that cannot tell a player's groups: the agent remembers what it applied, across a restart", async () => {
    h = await harness({ features: [groups] });
    Object.assign(h.sim, { playerGroups: undefined });
    await h.agent.start();
    await join(carol);
    expect(setGroups(carol.id).map((a: SimAction) => a.group)).toEqual(["superadmin"]);
    await h.agent.stop();
    h.sim.leave(carol.id);
    const agent = h.restart();
    await agent.start();
    await join(carol);
    expect(setGroups(carol.id)).toHaveLength(1); // not applied (nor announced) again
    expect(messagesTo(carol.id)).toHaveLength(1);
  });
});

describe("group sync on an answer with unreadable groups", () => {
  /** A group as GET /user/<id>/group sends it; `unreadable`: in a shape this build can't read (a newer service). */
  function answered(id: string, unreadable = false) {
    const g = h.sb.state.groups.get(id)!;
    const mappings = g.mappings.map((m) => ({ id: m.id, name: m.name, serverbundle_id: m.serverbundle_id }));
    const level = unreadable ? { value: g.permission_level } : g.permission_level;
    return { id: g.id, name: g.name, permission_level: level, color: "white", properties: {}, mappings };
  }
  /** Carol's next group answer: her Admin group unreadable, then `others`. */
  function adminUnreadable(...others: string[]) {
    const body = [answered(G.admin, true), ...others.map((id) => answered(id))];
    h.sb.control.failNext({ method: "GET", path: `/user/${SEED_IDS.users.carol}/group` }, 1, 200, body);
  }
  async function nextRound() {
    const asked = () => h.sb.control.requests({ method: "GET", path: `/user/${SEED_IDS.users.carol}/group` }).length;
    const before = asked();
    await h.clock.advance(300_000);
    await until(() => asked() > before, "the next group sync");
    await h.idle();
  }

  test("single-group game: the admin whose group could not be read keeps it", async () => {
    h = await harness({ features: [groups] });
    h.sb.state.addMembership({ user_id: SEED_IDS.users.carol, group_id: G.moderator, serverbundle_id: h.sb.bundleId });
    await h.agent.start();
    await join(carol);
    expect(h.sim.groupsOf(carol.id)).toEqual(["superadmin"]);
    adminUnreadable(G.moderator);
    await nextRound();
    expect(h.sim.groupsOf(carol.id)).toEqual(["superadmin"]);
    expect(messagesTo(carol.id)).toEqual(["Your group has been changed to superadmin."]);
    expect(h.logger.lines.map((l) => l.msg)).toContain("Carol: superadmin kept, VyHub's answer had unreadable groups");
  });

  test("multi-group game: nothing is taken away, a new group is still given", async () => {
    h = await harness({ features: [groups], sim: { multiGroup: true } });
    await h.agent.start();
    await join(carol);
    expect(h.sim.groupsOf(carol.id)).toEqual(["superadmin"]);
    h.sb.state.addMembership({ user_id: SEED_IDS.users.carol, group_id: G.vip, serverbundle_id: h.sb.bundleId });
    adminUnreadable(G.vip);
    await nextRound();
    expect([...h.sim.groupsOf(carol.id)].sort()).toEqual(["superadmin", "vip"]);
  });
});

describe("players known only by name (OpenArena, Xonotic, Teeworlds, OpenTTD, …)", () => {
  test("group sync is off: whoever takes a VyHub user's name gets none of their groups, records none", async () => {
    h = await harness({ features: [groups], sim: { identity: "name", userType: "CENTRAL", multiGroup: true } });
    // "Boss" is a CENTRAL user at VyHub with the Admin group (mapped "superadmin").
    const boss = h.sb.state.addUser({ identifier: "Boss", type: "CENTRAL" });
    h.sb.state.addMembership({ user_id: boss.id, group_id: G.admin, serverbundle_id: h.sb.bundleId });
    await h.agent.start();
    await join({ id: "Boss", name: "Boss" }); // anyone can join calling themselves Boss
    h.sim.groupChange("Boss", "vip", "add");
    await h.clock.advance(300_000);
    await h.idle();
    expect(h.sim.groupsOf("Boss")).toEqual(["vip"]); // only what was done in game
    expect(h.sb.control.requests({ method: "POST", path: /\/membership$/ })).toEqual([]);
    const said = h.logger.lines.filter((l) => l.msg.startsWith("group sync is off"));
    expect(said.map((l) => l.msg)).toEqual(["group sync is off: players here are only a name anyone can take"]);
  });
});

describe("group sync: one player's trouble is theirs alone", () => {
  test("one player whose groups can't be read every round: the players after them are still synced", async () => {
    h = await harness({ features: [groups] });
    await h.agent.start();
    await join(alice); // no active group (her VIP ended in 2024)
    await join(carol); // superadmin
    expect(h.sim.groupsOf(carol.id)).toEqual(["superadmin"]);
    // Reading Alice's groups from the game fails every time (a console that times out on her).
    const real = h.sim.playerGroups.bind(h.sim);
    h.sim.playerGroups = async (p: GamePlayer) => {
      if (p.id === alice.id) throw new Error("console: no reply");
      return real(p);
    };
    const owner = h.sb.state.addGroup({ name: "Owner", permission_level: 200 });
    h.sb.state.addMapping(owner.id, "owner", null);
    for (const user of [SEED_IDS.users.alice, SEED_IDS.users.carol])
      h.sb.state.addMembership({ user_id: user, group_id: owner.id, serverbundle_id: h.sb.bundleId });
    // Two rounds, each spreading its players over 270 s of the clock: Alice first, then Carol.
    for (let j = 0; j < 40; j++) {
      await h.clock.advance(15_000);
      await new Promise((r) => setTimeout(r, 5));
    }
    await until(() => h.sim.groupsOf(carol.id)[0] === "owner", "Carol's owner group", 1000).catch(() => {});
    expect(h.sim.groupsOf(carol.id)).toEqual(["owner"]);
    expect(h.logger.lines.some((l) => l.msg === "group sync of Alice failed: console: no reply")).toBe(true);
  });
});

describe("group sync on a game that cannot tell a player's groups", () => {
  /** Alice holds VIP and Moderator at VyHub; the game's `n`th group command fails once (a timeout, a restart). */
  async function failingCommand(n: number) {
    h = await harness({ features: [groups], sim: { multiGroup: true } });
    Object.assign(h.sim, { playerGroups: undefined }); // as every preset bridge: the agent remembers what it applied
    for (const group of [G.vip, G.moderator])
      h.sb.state.addMembership({ user_id: SEED_IDS.users.alice, group_id: group, serverbundle_id: h.sb.bundleId });
    const real = h.sim.setGroup.bind(h.sim);
    let calls = 0;
    h.sim.setGroup = async (p: GamePlayer, g: string, op: "add" | "remove", s?: number) => {
      if (++calls === n) throw new Error("console: no reply");
      return real(p, g, op, s);
    };
    await h.agent.start();
    await join(alice);
  }

  test("a group given just before a failed command is taken back when VyHub ends it", async () => {
    await failingCommand(2);
    expect(h.sim.groupsOf(alice.id)).toEqual(["moderator", "vip"]); // the second command (operator) failed
    h.sim.leave(alice.id);
    await h.idle();
    // While she is away, VyHub ends every membership she has (expired, or revoked on the web).
    for (const group of [G.vip, G.moderator]) endMembership(SEED_IDS.users.alice, group);
    await join(alice);
    expect(h.sim.groupsOf(alice.id)).toEqual([]);
  });

  test("a failed command doesn't stop the rest of the change; it is sent again at the next round", async () => {
    await failingCommand(1);
    expect(h.sim.groupsOf(alice.id)).toEqual(["operator", "vip"]); // the first add (moderator) failed, not the rest
    await h.clock.advance(300_000);
    await until(() => h.sim.groupsOf(alice.id).includes("moderator"), "the moderator add sent again");
    expect([...h.sim.groupsOf(alice.id)].sort()).toEqual(["moderator", "operator", "vip"]);
    await h.idle(); // she is told once the change is recorded
    expect(messagesTo(alice.id).sort()).toEqual([
      "You were added to the group moderator.",
      "You were added to the group operator.",
      "You were added to the group vip.",
    ]);
  });

  test("a failed add, then a restart before the next round: sent again all the same", async () => {
    await failingCommand(1);
    expect(h.sim.groupsOf(alice.id)).not.toContain("moderator");
    await h.agent.stop(); // an update, a crash
    h.restart();
    await h.agent.start();
    await h.clock.advance(300_000);
    await until(() => h.sim.groupsOf(alice.id).includes("moderator"), "the moderator add sent again");
    expect([...h.sim.groupsOf(alice.id)].sort()).toEqual(["moderator", "operator", "vip"]);
  });
});

describe("in-game group changes (rule 8)", () => {
  async function online() {
    h = await harness({ features: [groups], sim: { multiGroup: true } });
    await h.agent.start();
    await join(carol);
    await join(alice);
    h.sb.control.clearRequests();
  }
  const posts = () => h.sb.control.requests({ method: "POST", path: /\/membership$/ });

  test("an admin's change becomes a membership with the admin as morph_user_id", async () => {
    await online();
    h.sim.groupChange(alice.id, "moderator", "add", { byId: carol.id });
    await until(() => posts().length === 1, "the membership POST");
    const [req] = posts();
    expect(req?.path).toBe(`/user/${SEED_IDS.users.alice}/membership`);
    expect(req?.query).toEqual([["morph_user_id", SEED_IDS.users.carol]]);
    expect(req?.body).toEqual({
      group_id: G.moderator,
      serverbundle_id: h.sb.bundleId,
      begin: new Date(h.clock.now()).toISOString(),
      end: null,
    });
  });

  test("a change with no known initiator and a duration: no morph_user_id, end = now + duration", async () => {
    await online();
    h.sim.groupChange(carol.id, "vip", "add", { seconds: 3600 });
    await until(() => posts().length === 1, "the membership POST");
    const [req] = posts();
    expect(req?.query).toEqual([]);
    expect(req?.body).toMatchObject({ group_id: G.vip, end: new Date(h.clock.now() + 3600_000).toISOString() });
  });

  test("a group no mapping knows is not recorded; the agent's own changes are not echoed back", async () => {
    await online();
    h.sim.groupChange(alice.id, "builder", "add", { byId: carol.id });
    h.sim.groupChange(carol.id, "superadmin", "add"); // what the agent itself applied at join
    await h.idle();
    expect(posts()).toEqual([]);
    expect(h.logger.lines.some((l) => l.msg.includes("in-game group builder of Alice maps to no VyHub group"))).toBe(
      true,
    );
  });

  test("an initiator whose VyHub user can't be looked up: nothing is sent with the server's rights instead", async () => {
    await online();
    const bob = SEED_IDS.steamid64.bob; // a player with in-game rights, not online (or not yet looked up)
    h.sb.control.failNext({ method: "GET", path: `/user/${bob}` }, 1, 503);
    h.sim.groupChange(alice.id, "superadmin", "add", { byId: bob });
    await until(() => h.logger.lines.some((l) => /membership/.test(l.msg)), "the change handled");
    await h.idle();
    expect(posts()).toEqual([]);
    expect(h.logger.lines.map((l) => l.msg)).toContain(
      `membership +Admin for Alice by ${bob} not recorded: ${bob}'s VyHub user could not be looked up`,
    );
  });

  test("multi-group removal ends the group's membership in one by-group DELETE, nothing listed", async () => {
    await online();
    const m = h.sb.state.addMembership({
      user_id: SEED_IDS.users.alice,
      group_id: G.moderator,
      serverbundle_id: h.sb.bundleId,
    });
    h.sim.groupChange(alice.id, "moderator", "remove", { byId: carol.id });
    const deletes = () => h.sb.control.requests({ method: "DELETE" });
    await until(() => deletes().length === 1, "the membership DELETE");
    await h.idle();
    expect(deletes()).toHaveLength(1);
    expect(deletes()[0]?.path).toBe(`/user/${SEED_IDS.users.alice}/membership/by-group`);
    expect(deletes()[0]?.query).toEqual([
      ["group_id", G.moderator],
      ["serverbundle_id", h.sb.bundleId],
      ["morph_user_id", SEED_IDS.users.carol],
    ]);
    expect(deletes()[0]?.status).toBe(200);
    // Listing memberships would also return linked users' ones, which are not the player's to end.
    expect(h.sb.control.requests({ method: "GET", path: /\/membership$/ })).toEqual([]);
    expect(h.sb.state.membershipActive(h.sb.state.memberships.get(m.id)!)).toBe(false);
    expect(h.logger.lines.some((l) => l.msg === "membership ended: -Moderator for Alice by Carol")).toBe(true);
  });
});

describe("group sync at scale", () => {
  test("1,000 players: a round spreads its requests over the interval", async () => {
    // The service runs in this process and shares its CPU: under load a lookup among 1,000 can take over the usual
    // 2 s timeout, and its retry (intervals.user_retry) waits on the manual clock, which stands still until all
    // users are known. A timeout a loaded machine meets lets every lookup finish instead.
    h = await harness({
      features: [groups],
      env: { HUB_INTERVALS_GROUPS: "300" },
      sim: { maxPlayers: 1000 },
      timeoutMs: 30_000,
    });
    await h.agent.start();
    const started = h.clock.monotonic();
    for (let i = 0; i < 1000; i++) h.sim.join({ id: String(76561198300000000n + BigInt(i)), name: `P${i}` });
    // The lookups and the first syncs take their turns at the pace (lib/pace.ts): a second at a time until done.
    const allKnown = () => [...h.agent.players.keys()].every((id) => h.agent.users.get(id));
    while (!allKnown() || h.agent.pace.waiting > 0) {
      await h.clock.advance(1000);
      await until(() => h.agent.pace.waiting > 0 || h.agent.scheduler.busy === 0, "a turn", 30_000);
    }
    await h.idle();

    const resting = h.clock.pending;
    await h.clock.advance(299_000 - (h.clock.monotonic() - started)); // to just before the first periodic round
    await until(() => h.clock.pending === resting && h.agent.events.busy === 0, "the status rounds to rest");
    const start = h.clock.now();
    for (let s = 0; s < 300; s++) {
      await h.clock.advance(1000);
      await until(() => h.clock.pending === resting && h.agent.events.busy === 0, "the round to rest", 10_000);
    }
    const round = h.sb.control
      .requests({ method: "GET", path: /^\/user\/[^/]+\/group$/ })
      .filter((r) => r.time > start);
    const perSecond = new Map<number, number>();
    for (const r of round) {
      const second = Math.floor((r.time - start - 1) / 1000);
      perSecond.set(second, (perSecond.get(second) ?? 0) + 1);
    }
    expect(round).toHaveLength(1000);
    expect(Math.max(...perSecond.values())).toBeLessThanOrEqual(Math.ceil(1000 / 300) + 2);
    expect(perSecond.size).toBeGreaterThan(250); // spread over the interval, not a burst
  }, 120_000);
});
