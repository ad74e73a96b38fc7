// Bans, warnings, morph permissions and pagination: the behaviour of docs/service-api.md §6.
import { describe, expect, test } from "bun:test";
import { DAY, SEED_IDS as ID, start } from "./helpers.ts";

const { alice: ALICE, bob: BOB, carol: CAROL } = ID.users;
const BUNDLE = ID.serverbundle;
const UNKNOWN = "00000000-0000-4000-8000-000000000000";

describe("bans", () => {
  test("ends_on = created_on + length; the ban stops being active when the clock passes it", async () => {
    const sb = await start();
    const created = await sb.call("POST", "/ban/", {
      body: {
        user_id: ALICE,
        serverbundle_id: BUNDLE,
        length: 3600,
        reason: "spam",
        created_on: "2024-06-01T13:30:00+01:00",
      },
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      created_on: "2024-06-01T12:30:00+00:00",
      ends_on: "2024-06-01T13:30:00+00:00",
      length: 3600,
      status: "ACTIVE",
      active: true,
      creator: null,
      protests: [],
    });
    const list = async () =>
      Object.keys((await sb.call("GET", `/server/bundle/${BUNDLE}/ban`, { query: { active: "true" } })).body);
    expect(await list()).toContain(ID.steamid64.alice);
    sb.clock.now = Date.UTC(2024, 5, 1, 13, 30);
    expect(await list()).not.toContain(ID.steamid64.alice);
    expect((await sb.call("GET", `/ban/${created.body.id}`)).body).toMatchObject({ status: "ACTIVE", active: false });
  });

  test("null length is permanent; a ban sent as UNBANNED is never active", async () => {
    const sb = await start();
    const perm = await sb.call("POST", "/ban/", { body: { user_id: ALICE, length: null } });
    expect(perm.body).toMatchObject({ ends_on: null, active: true, serverbundle: null });
    sb.clock.now += 3650 * DAY;
    expect((await sb.call("GET", `/ban/${perm.body.id}`)).body.active).toBe(true);
    const lifted = await sb.call("POST", "/ban/", { body: { user_id: BOB, status: "UNBANNED" } });
    expect(lifted.body.active).toBe(false);
  });

  test("the bundle's ban list holds bundle and global bans keyed by identifier, not other bundles' bans", async () => {
    const sb = await start();
    const other = sb.state.addServerbundle({ name: "Other" });
    const carol = sb.state.addBan({ user_id: CAROL, serverbundle_id: null, reason: "global" });
    sb.state.addBan({ user_id: ALICE, serverbundle_id: other.id, reason: "elsewhere" });
    sb.state.addBan({ user_id: BOB, serverbundle_id: BUNDLE, reason: "second", created_on: sb.clock.now - 1000 });
    const reply = await sb.call("GET", `/server/bundle/${BUNDLE}/ban`, { query: { active: "true" } });
    expect(Object.keys(reply.body).sort()).toEqual([ID.steamid64.bob, ID.steamid64.carol]);
    expect(reply.body[ID.steamid64.bob].map((b: any) => b.reason)).toEqual(["second", "RDM x3"]);
    expect(reply.body[ID.steamid64.carol][0]).toMatchObject({ id: carol.id, serverbundle: null });
    const all = await sb.call("GET", `/server/bundle/${BUNDLE}/ban`);
    expect(all.body[ID.steamid64.alice][0].status).toBe("UNBANNED");
  });

  test("POST /ban/ on an unknown user is 404; without user_id 422", async () => {
    const sb = await start();
    const unknown = await sb.call("POST", "/ban/", { body: { user_id: UNKNOWN, length: 60 } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail.code).toBe("not_found");
    expect((await sb.call("POST", "/ban/", { body: { reason: "no user" } })).status).toBe(422);
    expect((await sb.call("POST", "/ban/", { body: { user_id: ALICE, length: "a week" } })).body.detail[0].loc).toEqual(
      ["body", "length"],
    );
  });

  test("unban with a bundle lifts that bundle's and global bans; without one, all", async () => {
    const sb = await start();
    const other = sb.state.addServerbundle({ name: "Other" });
    const global = sb.state.addBan({ user_id: BOB });
    const elsewhere = sb.state.addBan({ user_id: BOB, serverbundle_id: other.id });
    const reply = await sb.call("PATCH", `/user/${BOB}/ban`, { query: { serverbundle_id: BUNDLE } });
    expect(reply.status).toBe(200);
    const status = (id: string) => sb.state.bans.get(id)!.status;
    expect([status(ID.bans.bob_active), status(global.id), status(elsewhere.id)]).toEqual([
      "UNBANNED",
      "UNBANNED",
      "ACTIVE",
    ]);
    await sb.call("PATCH", `/user/${BOB}/ban`);
    expect(status(elsewhere.id)).toBe("UNBANNED");
    expect((await sb.call("PATCH", `/user/${UNKNOWN}/ban`)).status).toBe(404);
  });
});

describe("morph_user_id", () => {
  test("a morph user without ban_edit gets 403 missing_properties; with it, they become the creator", async () => {
    const sb = await start();
    const denied = await sb.call("POST", "/ban/", { query: { morph_user_id: ALICE }, body: { user_id: BOB } });
    expect(denied.status).toBe(403);
    expect(denied.body.detail).toEqual({
      code: "missing_properties",
      msg: "Missing properties: ban_edit",
      detail: { properties: ["ban_edit"] },
    });
    // A moderator membership grants ban_edit in the bundle.
    sb.state.addMembership({ user_id: ALICE, group_id: ID.groups.moderator, serverbundle_id: BUNDLE });
    const allowed = await sb.call("POST", "/ban/", {
      query: { morph_user_id: ALICE },
      body: { user_id: BOB, serverbundle_id: BUNDLE },
    });
    expect(allowed.body.creator.id).toBe(ALICE);
  });

  test("admins hold every property; an unknown morph user is 404", async () => {
    const sb = await start();
    const asCarol = await sb.call("POST", `/user/${BOB}/membership`, {
      query: { morph_user_id: CAROL },
      body: { group_id: ID.groups.vip, serverbundle_id: BUNDLE },
    });
    expect(asCarol.status).toBe(200);
    const asAlice = await sb.call("DELETE", `/user/${BOB}/membership`, {
      query: { morph_user_id: ALICE, serverbundle_id: BUNDLE },
    });
    expect(asAlice.body.detail.detail.properties).toEqual(["membership_edit"]);
    const ghost = await sb.call("PATCH", `/user/${BOB}/ban`, { query: { morph_user_id: UNKNOWN } });
    expect(ghost.status).toBe(404);
    expect(
      (
        await sb.call("POST", "/warning/", {
          query: { morph_user_id: ALICE },
          body: { user_id: BOB, serverbundle_id: BUNDLE },
        })
      ).status,
    ).toBe(403);
  });
});

describe("warnings", () => {
  test("created with the morph user as creator; active until the TTL passes or it is disabled", async () => {
    const sb = await start();
    const w = await sb.call("POST", "/warning/", {
      query: { morph_user_id: CAROL },
      body: { user_id: BOB, serverbundle_id: BUNDLE, reason: "rude" },
    });
    expect(w.body).toMatchObject({
      reason: "rude",
      active: true,
      disabled: false,
      creator: { id: CAROL },
      user: { id: BOB },
    });
    sb.clock.now += 31 * DAY;
    expect((await sb.call("GET", `/warning/${w.body.id}`)).body.active).toBe(false);
    sb.state.setWarningPolicy({ ttlDays: 60 });
    expect((await sb.call("GET", `/warning/${w.body.id}`)).body.active).toBe(true);
    await sb.call("PATCH", `/warning/${w.body.id}/toggle`);
    expect((await sb.call("GET", `/warning/${w.body.id}`)).body).toMatchObject({ active: false, disabled: true });
    expect((await sb.call("GET", `/warning/${UNKNOWN}`)).status).toBe(404);
    expect((await sb.call("POST", "/warning/", { body: { user_id: BOB } })).body.detail[0].loc).toEqual([
      "body",
      "serverbundle_id",
    ]);
  });

  test("with auto-ban on, reaching the threshold of active warnings makes the service ban the user", async () => {
    const sb = await start();
    sb.state.setWarningPolicy({ autoBan: { threshold: 2, lengthMinutes: 60 } });
    const warn = () =>
      sb.call("POST", "/warning/", { body: { user_id: ALICE, serverbundle_id: BUNDLE, reason: "again" } });
    expect((await warn()).status).toBe(200); // the seeded "Mic spam" + this = 2
    const bans = await sb.call("GET", `/server/bundle/${BUNDLE}/ban`, { query: { active: "true" } });
    expect(bans.body[ID.steamid64.alice]).toHaveLength(1);
    expect(bans.body[ID.steamid64.alice][0]).toMatchObject({ length: 3600, ends_on: "2024-06-01T13:00:00+00:00" });
    await warn();
    expect([...sb.state.bans.values()].filter((b) => b.user_id === ALICE && sb.state.banActive(b))).toHaveLength(1);
  });

  test("auto-ban is off by default", async () => {
    const sb = await start();
    for (let i = 0; i < 5; i++) await sb.call("POST", "/warning/", { body: { user_id: BOB, serverbundle_id: BUNDLE } });
    expect(sb.state.bans.size).toBe(2);
  });
});

describe("pagination", () => {
  test("1-based page, default size 50, total before slicing, created_on desc with sort_desc", async () => {
    const sb = await start();
    for (let i = 1; i <= 60; i++)
      sb.state.addWarning({
        user_id: BOB,
        serverbundle_id: BUNDLE,
        reason: `w${i}`,
        created_on: sb.clock.now + i * 1000,
      });
    const first = await sb.call("GET", "/warning/", {
      query: { user_id: BOB, sort_by: "created_on", sort_desc: "true" },
    });
    expect(first.body).toMatchObject({ total: 60, page: 1, size: 50 });
    expect(first.body.items).toHaveLength(50);
    expect(first.body.items[0].reason).toBe("w60");
    const second = await sb.call("GET", "/warning/", {
      query: { user_id: BOB, sort_desc: "true", page: "2", size: "25" },
    });
    expect(second.body.items.map((w: any) => w.reason).slice(0, 2)).toEqual(["w35", "w34"]);
    const asc = await sb.call("GET", "/warning/", { query: { user_id: BOB, page: "3", size: "25" } });
    expect(asc.body.items.map((w: any) => w.reason)).toEqual([
      "w51",
      "w52",
      "w53",
      "w54",
      "w55",
      "w56",
      "w57",
      "w58",
      "w59",
      "w60",
    ]);
    const bad = await sb.call("GET", "/warning/", { query: { page: "0" } });
    expect(bad.body.detail[0]).toMatchObject({ loc: ["query", "page"], type: "value_error.number.not_ge" });
  });

  test("GET /ban/ filters by user and active", async () => {
    const sb = await start();
    const active = await sb.call("GET", "/ban/", { query: { user_id: ALICE, active: "true" } });
    expect(active.body).toEqual({ items: [], total: 0, page: 1, size: 50 });
    const all = await sb.call("GET", "/ban/", { query: { user_id: ALICE } });
    expect(all.body.total).toBe(1);
  });
});
