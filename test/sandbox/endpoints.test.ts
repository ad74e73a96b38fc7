// Each endpoint's happy path and its 404 / 422, over loopback with plain fetch.
import { describe, expect, test } from "bun:test";
import { SEED_IDS as ID, start } from "./helpers.ts";

const { alice: ALICE, bob: BOB, carol: CAROL } = ID.users;
const BUNDLE = ID.serverbundle;
const UNKNOWN = "00000000-0000-4000-8000-000000000000";

describe("auth and routing", () => {
  test("requests without the Bearer key get 401 invalid_token; /openapi.json needs none", async () => {
    const sb = await start();
    const none = await sb.call("GET", "/group/", { auth: null });
    expect(none.status).toBe(401);
    expect(none.body.detail.code).toBe("invalid_token");
    expect((await sb.call("GET", "/group/", { auth: sb.key })).status).toBe(401);
    expect((await sb.call("GET", "/openapi.json", { auth: null })).status).toBe(200);
  });

  test("the other slash form answers 307 to the canonical path, keeping the query", async () => {
    const sb = await start();
    const reply = await sb.call("POST", "/user/attribute/definition/", { query: { a: "1" }, body: {} });
    expect(reply.status).toBe(307);
    expect(reply.headers.get("location")).toBe("/sandbox/v1/user/attribute/definition?a=1");
    expect((await sb.call("GET", "/group")).headers.get("location")).toBe("/sandbox/v1/group/");
  });

  test("unknown paths are 404, a known path with the wrong method 405, outside the base path 404", async () => {
    const sb = await start();
    expect((await sb.call("GET", "/nothing/here")).status).toBe(404);
    expect((await sb.call("PUT", `/server/${sb.serverId}`)).status).toBe(405);
    const outside = await fetch(sb.url.replace("/sandbox/v1", "/other/group/"));
    expect(outside.status).toBe(404);
  });

  test("a custom base path and key are honoured", async () => {
    const sb = await start({ basePath: "/community/v1/", key: "k" });
    expect(sb.url).toEndWith("/community/v1");
    expect((await sb.call("GET", "/group/")).status).toBe(200);
    expect(sb.key).toBe("k");
  });

  test("the empty seed still has the bundle and the server the agent needs", async () => {
    const sb = await start({ seed: "empty" });
    expect((await sb.call("GET", `/server/${sb.serverId}`)).body.serverbundle_id).toBe(sb.bundleId);
    expect((await sb.call("GET", "/group/")).body).toEqual([]);
  });

  test("invalid JSON in a body is a 422 jsondecode error", async () => {
    const sb = await start();
    const reply = await sb.call("POST", "/ban/", { body: "{oops" });
    expect(reply.status).toBe(422);
    expect(reply.body.detail[0].type).toBe("value_error.jsondecode");
  });
});

describe("server", () => {
  test("PATCH coerces loose values, updates last_update and user activities", async () => {
    const sb = await start();
    sb.clock.now += 5000;
    const reply = await sb.call("PATCH", `/server/${sb.serverId}`, {
      body: {
        users_max: "24",
        users_current: "7",
        is_alive: "true",
        user_activities: [{ user_id: BOB, extra: { Score: 1 } }],
      },
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ users_max: 24, users_current: 7, map: "ttt_67thway_v14", status: "ONLINE" });
    expect(reply.body.last_update).toBe("2024-06-01T12:00:05+00:00");
    const bob = await sb.call("GET", "/user/76561198087654322", { query: { type: "STEAM" } });
    expect(bob.body.activities).toEqual([{ extra: { Score: 1 }, last_online: "2024-06-01T12:00:05+00:00" }]);
  });

  test("PATCH with an uncoercible value is 422 naming the field; unknown server 404; bad uuid 422", async () => {
    const sb = await start();
    const bad = await sb.call("PATCH", `/server/${sb.serverId}`, { body: { users_max: "many" } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toEqual([
      { loc: ["body", "users_max"], msg: "value is not a valid integer", type: "type_error.integer" },
    ]);
    expect((await sb.call("GET", `/server/${UNKNOWN}`)).body.detail.code).toBe("not_found");
    expect((await sb.call("GET", "/server/not-a-uuid")).body.detail[0].loc).toEqual(["path", "uuid"]);
  });

  test("serverbundle: found and 404", async () => {
    const sb = await start();
    expect((await sb.call("GET", `/server/bundle/${BUNDLE}`)).body.multigroup).toBe(false);
    expect((await sb.call("GET", `/server/bundle/${UNKNOWN}`)).status).toBe(404);
    expect((await sb.call("GET", `/server/bundle/${UNKNOWN}/ban`)).status).toBe(404);
  });
});

describe("users", () => {
  test("lookup by (type, identifier), by id without type; an unknown type is 422", async () => {
    const sb = await start();
    expect((await sb.call("GET", "/user/76561198087654322", { query: { type: "STEAM" } })).body.id).toBe(BOB);
    expect((await sb.call("GET", "/user/76561198087654322", { query: { type: "MINECRAFT" } })).status).toBe(404);
    expect((await sb.call("GET", `/user/${BOB}`)).body.username).toBe("Bob");
    const bad = await sb.call("GET", "/user/x", { query: { type: "XBOX" } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0]).toMatchObject({ loc: ["query", "type"], type: "type_error.enum" });
  });

  test("POST /user/ creates a complete user; a duplicate is a plain 500; a missing field 422", async () => {
    const sb = await start();
    const created = await sb.call("POST", "/user/", {
      body: { type: "MINECRAFT", identifier: "069a79f4-44e9-4726-a5be-fca90e38aaf5" },
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      type: "MINECRAFT",
      username: "069a79f4-44e9-4726-a5be-fca90e38aaf5",
      registered_on: "2024-06-01T12:00:00+00:00",
      admin: false,
      attributes: {},
      email: null,
      avatar: null,
      activities: [],
      linked_users: [],
    });
    expect(created.body.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const again = await sb.call("GET", "/user/069a79f4-44e9-4726-a5be-fca90e38aaf5", { query: { type: "MINECRAFT" } });
    expect(again.body.id).toBe(created.body.id);
    const dup = await sb.call("POST", "/user/", { body: { type: "STEAM", identifier: "76561198087654322" } });
    expect([dup.status, dup.headers.get("content-type"), dup.text]).toEqual([
      500,
      "text/plain; charset=utf-8",
      "Internal Server Error",
    ]);
    const missing = await sb.call("POST", "/user/", { body: { type: "STEAM" } });
    expect(missing.body.detail).toEqual([
      { loc: ["body", "identifier"], msg: "field required", type: "value_error.missing" },
    ]);
  });

  test("groups: is_team filter; active groups of an unknown user are 404", async () => {
    const sb = await start();
    const team = await sb.call("GET", "/group/", { query: { is_team: "true" } });
    expect(team.body.map((g: any) => g.name)).toEqual(["Admin", "Moderator"]);
    expect((await sb.call("GET", `/user/${UNKNOWN}/group`)).status).toBe(404);
  });
});

describe("memberships", () => {
  test("add, list, end all in a bundle: active groups follow", async () => {
    const sb = await start();
    const added = await sb.call("POST", `/user/${BOB}/membership`, {
      body: { group_id: ID.groups.moderator, serverbundle_id: BUNDLE, end: "2024-06-02T12:00:00Z" },
    });
    expect(added.body).toMatchObject({
      active: true,
      begin: "2024-06-01T12:00:00+00:00",
      end: "2024-06-02T12:00:00+00:00",
      bounds: "[)",
    });
    const groups = async () =>
      (await sb.call("GET", `/user/${BOB}/group`, { query: { serverbundle_id: BUNDLE } })).body.map((g: any) => g.name);
    expect(await groups()).toEqual(["Moderator"]);
    sb.clock.now += 1000;
    expect(
      (await sb.call("DELETE", `/user/${BOB}/membership`, { query: { serverbundle_id: BUNDLE } })).body,
    ).toBeNull();
    expect(await groups()).toEqual([]);
    const listed = await sb.call("GET", `/user/${BOB}/membership`, { query: { serverbundle_id: BUNDLE } });
    expect(listed.body).toHaveLength(1);
    expect(listed.body[0]).toMatchObject({ active: false, end: "2024-06-01T12:00:01+00:00" });
  });

  test("a membership ends by itself at its end time", async () => {
    const sb = await start();
    const groups = async () =>
      (await sb.call("GET", `/user/${ALICE}/group`, { query: { serverbundle_id: BUNDLE } })).body;
    expect(await groups()).toHaveLength(1);
    sb.clock.now = Date.UTC(2024, 6, 1, 12);
    expect(await groups()).toEqual([]);
  });

  test("end one membership by id, or by group", async () => {
    const sb = await start();
    expect((await sb.call("DELETE", `/user/membership/${ID.memberships.alice_vip}`)).status).toBe(200);
    expect(sb.state.membershipActive(sb.state.memberships.get(ID.memberships.alice_vip)!)).toBe(false);
    expect((await sb.call("DELETE", `/user/membership/${UNKNOWN}`)).status).toBe(404);
    const byGroup = await sb.call("DELETE", `/user/${CAROL}/membership/by-group`, {
      query: { group_id: ID.groups.admin, serverbundle_id: BUNDLE },
    });
    expect(byGroup.body).toEqual({ success: true });
    expect((await sb.call("GET", `/user/${CAROL}/group`)).body).toEqual([]);
    const missing = await sb.call("DELETE", `/user/${CAROL}/membership/by-group`);
    expect(missing.body.detail).toEqual([
      { loc: ["query", "group_id"], msg: "field required", type: "value_error.missing" },
    ]);
  });

  test("unknown group or user is 404; missing group_id is 422", async () => {
    const sb = await start();
    expect(
      (await sb.call("POST", `/user/${BOB}/membership`, { body: { group_id: UNKNOWN, serverbundle_id: BUNDLE } }))
        .status,
    ).toBe(404);
    expect(
      (
        await sb.call("POST", `/user/${UNKNOWN}/membership`, {
          body: { group_id: ID.groups.vip, serverbundle_id: BUNDLE },
        })
      ).status,
    ).toBe(404);
    const missing = await sb.call("POST", `/user/${BOB}/membership`, { body: { serverbundle_id: BUNDLE } });
    expect(missing.status).toBe(422);
    expect(missing.body.detail[0].loc).toEqual(["body", "group_id"]);
  });
});

describe("attributes", () => {
  test("definition: 404 when missing, created by POST, then found by name and by id", async () => {
    const sb = await start({ seed: "empty" });
    expect((await sb.call("GET", "/user/attribute/definition/playtime")).body.detail.code).toBe("not_found");
    const body = {
      name: "playtime",
      title: "Play Time",
      unit: "Hours",
      type: "ACCUMULATED",
      accumulation_interval: "day",
      unspecific: "true",
    };
    const created = await sb.call("POST", "/user/attribute/definition", { body });
    expect(created.body).toMatchObject({
      ...body,
      unspecific: true,
      statistics_interval: null,
      requirement_set_id: null,
    });
    expect((await sb.call("GET", "/user/attribute/definition/playtime")).body.id).toBe(created.body.id);
    expect((await sb.call("GET", `/user/attribute/definition/${created.body.id}`)).body.name).toBe("playtime");
    expect((await sb.call("POST", "/user/attribute/definition", { body })).status).toBe(409);
    const bad = await sb.call("POST", "/user/attribute/definition", { body: { ...body, type: "SUM" } });
    expect(bad.body.detail[0].loc).toEqual(["body", "type"]);
  });

  test("value: number or numeric string stored as a string and echoed; unknown user 404; text 422", async () => {
    const sb = await start();
    const send = (value: unknown, user_id: string = ALICE) =>
      sb.call("POST", "/user/attribute/", {
        body: { definition_id: ID.attributeDefinitions.playtime, user_id, serverbundle_id: BUNDLE, value },
      });
    const echoed = await send(1.25);
    expect(echoed.body).toEqual({
      date: "2024-06-01T12:00:00+00:00",
      value: "1.25",
      definition_id: ID.attributeDefinitions.playtime,
      serverbundle_id: BUNDLE,
      user_id: ALICE,
    });
    expect((await send("0.5")).body.value).toBe("0.5");
    expect(sb.state.attributes.map((a) => a.value)).toEqual(["1.25", "0.5"]);
    expect((await send(1, UNKNOWN)).status).toBe(404);
    expect((await send("lots")).status).toBe(422);
    const noDef = await sb.call("POST", "/user/attribute/", {
      body: { definition_id: UNKNOWN, user_id: ALICE, value: 1 },
    });
    expect(noDef.status).toBe(404);
  });
});

describe("adverts and misc", () => {
  test("adverts filter by bundle and enabled", async () => {
    const sb = await start();
    sb.state.addAdvert({ title: "Off", content: "x", enabled: false, serverbundle_ids: [BUNDLE] });
    sb.state.addAdvert({ title: "Elsewhere", content: "y", serverbundle_ids: [UNKNOWN] });
    const titles = async (query: Record<string, string>) =>
      (await sb.call("GET", "/advert/", { query })).body.map((a: any) => a.title);
    expect(await titles({ serverbundle_id: BUNDLE, enabled: "true" })).toEqual(["Discord", "Shop"]);
    expect(await titles({ serverbundle_id: BUNDLE })).toEqual(["Discord", "Shop", "Off"]);
    expect(await titles({ serverbundle_id: BUNDLE, active: "true" })).toEqual(["Discord", "Shop", "Off"]);
  });

  test("frontend URL", async () => {
    const sb = await start();
    expect((await sb.call("GET", "/general/frontend-url")).body).toEqual({
      frontend_url: "https://community.example.org",
    });
  });
});
