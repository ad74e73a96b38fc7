import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createApi, type Api } from "../../lib/api/client.ts";
import type { Online } from "../../lib/players/online.ts";
import type { Recent } from "../../lib/players/recent.ts";
import {
  PlayerError,
  matchNick,
  parsePlayerArg,
  resolvePlayer,
  type ResolveOptions,
} from "../../lib/players/resolve.ts";
import { SEED_IDS, startSandbox, type Sandbox } from "../../lib/sandbox/index.ts";

const ALICE = SEED_IDS.steamid64.alice; // account 52079943
const MC = "069a79f4-44e9-4726-a5be-fca90e38aaf5";

describe("parsePlayerArg", () => {
  const cases: [string, string, ReturnType<typeof parsePlayerArg>][] = [
    ["STEAM", ALICE, { kind: "id", id: ALICE }],
    ["STEAM", "STEAM_0:1:26039971", { kind: "id", id: ALICE }],
    ["STEAM", "STEAM_1:1:26039971", { kind: "id", id: ALICE }],
    ["STEAM", "steam_0:1:26039971", { kind: "id", id: ALICE }],
    ["STEAM", "[U:1:52079943]", { kind: "id", id: ALICE }],
    ["STEAM", "U:1:52079943", { kind: "id", id: ALICE }],
    ["STEAM", ` ${ALICE} `, { kind: "id", id: ALICE }],
    ["STEAM", SEED_IDS.users.bob.toUpperCase(), { kind: "user", userId: SEED_IDS.users.bob }],
    ["STEAM", `user:${SEED_IDS.users.bob}`, { kind: "user", userId: SEED_IDS.users.bob }],
    ["STEAM", "user:bob", { kind: "invalid", text: "user:bob" }],
    ["STEAM", "Alice", { kind: "nick", nick: "Alice" }],
    ["STEAM", "12345", { kind: "nick", nick: "12345" }],
    ["STEAM", "STEAM_0:2:1", { kind: "nick", nick: "STEAM_0:2:1" }],
    ["MINECRAFT", MC.replaceAll("-", "").toUpperCase(), { kind: "id", id: MC }],
    ["MINECRAFT", MC, { kind: "id", id: MC }],
    ["MINECRAFT", MC.toUpperCase(), { kind: "id", id: MC }],
    ["MINECRAFT", `USER:${MC}`, { kind: "user", userId: MC }],
    ["MINECRAFT", ALICE, { kind: "nick", nick: ALICE }],
    ["FIVEM", `license:${"ab".repeat(20)}`, { kind: "id", id: "ab".repeat(20) }],
    ["FIVEM", "AB".repeat(20), { kind: "id", id: "ab".repeat(20) }],
    ["ASA", "0f".repeat(16), { kind: "id", id: "0f".repeat(16) }],
  ];
  for (const [type, text, want] of cases)
    test(`${type} ${JSON.stringify(text)} → ${want.kind}`, () => expect(parsePlayerArg(text, type)).toEqual(want));
});

describe("matchNick", () => {
  const players = [
    { id: "1", name: "Alice", user_id: null },
    { id: "2", name: "alice2", user_id: null },
    { id: "3", name: "Bob", user_id: "u3" },
    { id: "4", name: "Bobby", user_id: null },
  ];
  const ids = (nick: string) => matchNick(nick, players).map((p) => p.id);
  test("an exact name (any case) wins over names containing it", () => {
    expect(ids("alice")).toEqual(["1"]);
    expect(ids("BOB")).toEqual(["3"]);
  });
  test("otherwise every name containing the text", () => {
    expect(ids("ali")).toEqual(["1", "2"]);
    expect(ids("bby")).toEqual(["4"]);
    expect(ids("carol")).toEqual([]);
  });
  test("names that look the same (invisible characters, width, spacing) are the same name: ambiguous, not the plain one", () => {
    // "Bob" misbehaves under a name that shows as Bob: `ban Bob` must not pick the real Bob.
    const lookalikes = [
      { id: "1", name: "Bob", user_id: null },
      { id: "2", name: "Bob\u200b", user_id: null }, // zero-width space
      { id: "3", name: "ｂｏｂ", user_id: null }, // fullwidth
      { id: "4", name: "B\u00adob", user_id: null }, // soft hyphen
      { id: "5", name: "Bob\u2060 ", user_id: null }, // word joiner, trailing space
      { id: "6", name: "Bobby", user_id: null },
    ];
    const same = (nick: string) => matchNick(nick, lookalikes).map((p) => p.id);
    expect(same("Bob")).toEqual(["1", "2", "3", "4", "5"]);
    expect(same("b\u200bob")).toEqual(["1", "2", "3", "4", "5"]);
    expect(same("bobb")).toEqual(["6"]);
    expect(same("\u200b")).toEqual([]);
  });
});

describe("resolvePlayer", () => {
  let sb: Sandbox;
  let api: Api;
  const NOW = Date.UTC(2026, 0, 1);
  let online: Online | undefined;
  let savedAt = NOW;
  const opts = (extra: Partial<ResolveOptions> = {}): ResolveOptions => ({
    userType: "STEAM",
    online: async () => online && { savedAt, data: online },
    maxAgeMs: 120_000,
    now: NOW,
    api,
    ...extra,
  });
  const failure = async (input: string, o: ResolveOptions) => {
    const e = await resolvePlayer(input, o).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(e).toBeInstanceOf(PlayerError);
    return e as PlayerError;
  };

  beforeAll(async () => {
    sb = await startSandbox();
    api = createApi({ url: sb.url, key: sb.key, retries: 0, timeoutMs: 2000 });
  });
  afterAll(() => sb.stop());

  test("a game that knows players by name: a name no list knows is that player; elsewhere the error names user:<UUID>", async () => {
    const nameId = (name: string) => name.replace(/\^\d/g, "").trim() || undefined;
    const central = { userType: "CENTRAL", nameId };
    online = { user_type: "CENTRAL", players: [{ id: "Sniper Wolf", name: "Sniper Wolf", user_id: null }] };
    savedAt = NOW;
    expect(await resolvePlayer("^1Bob", opts(central))).toEqual({ id: "Bob", userId: null, name: "Bob" });
    expect((await resolvePlayer("sniper", opts(central))).id).toBe("Sniper Wolf"); // the list first
    savedAt = NOW - 3_600_000; // a stale list, or none: the name is still the id
    expect((await resolvePlayer("Bob", opts(central))).id).toBe("Bob");
    online = undefined;
    expect((await resolvePlayer("Bob", opts(central))).id).toBe("Bob");
    // A CENTRAL game keyed otherwise: the error names what an operator can type, not "a CENTRAL id".
    const e = await failure("Bob", opts({ userType: "CENTRAL" }));
    expect(e.message).not.toContain("CENTRAL id");
    expect(e.message).toContain("user:<the VyHub user's UUID>");
    savedAt = NOW;
  });

  test("a platform id resolves without the service; user lookups find or create the user", async () => {
    expect(await resolvePlayer("[U:1:52079943]", opts({ api: undefined }))).toEqual({
      id: ALICE,
      userId: null,
      name: null,
    });
    expect(await resolvePlayer(ALICE, opts({ user: "lookup" }))).toEqual({
      id: ALICE,
      userId: SEED_IDS.users.alice,
      name: "Alice",
    });
    const newcomer = "76561198000000077";
    expect((await failure(newcomer, opts({ user: "lookup" }))).kind).toBe("unknown");
    const created = await resolvePlayer(newcomer, opts({ user: "ensure" }));
    expect(created.userId).toBe(sb.state.findUser(newcomer, "STEAM")!.id);
  });

  test("a player registered by another creator between our 404 and our POST (the service's 500) is read again", async () => {
    const newcomer = "76561198000000078";
    const before = sb.control.requests().length; // the sandbox is shared: only this test's requests
    const stop = sb.control.onHandled({ method: "GET", path: `/user/${newcomer}` }, (e) => {
      if (e.status === 404 && !sb.state.findUser(newcomer, "STEAM"))
        sb.state.addUser({ identifier: newcomer, type: "STEAM" });
    });
    const found = await resolvePlayer(newcomer, opts({ user: "ensure" }));
    stop();
    expect(found.userId).toBe(sb.state.findUser(newcomer, "STEAM")!.id);
    const asked = sb.control
      .requests()
      .slice(before)
      .filter((r) => new RegExp(`^/user/(${newcomer})?$`).test(r.path));
    expect(asked.map((r) => `${r.method} ${r.status}`)).toEqual(["GET 404", "POST 500", "GET 200"]);
  });

  test("a service user id is looked up for its platform id; unknown ids are refused; without the service it is taken as given", async () => {
    expect(await resolvePlayer(SEED_IDS.users.bob, opts())).toEqual({
      id: SEED_IDS.steamid64.bob,
      userId: SEED_IDS.users.bob,
      name: "Bob",
    });
    expect(await resolvePlayer(`user:${SEED_IDS.users.bob}`, opts())).toEqual(
      await resolvePlayer(SEED_IDS.users.bob, opts()),
    );
    const unknown = await failure("00000000-0000-4000-8000-000000000000", opts());
    expect([unknown.kind, unknown.message]).toEqual([
      "unknown",
      "the service knows no user with the id 00000000-0000-4000-8000-000000000000",
    ]);
    const bad = await failure("user:bob", opts());
    expect([bad.kind, bad.message]).toEqual([
      "invalid",
      '"user:bob" is not a service user id: write user:<the user\'s UUID>, e.g. user:6d608cd3-155d-4344-b9e8-7c0280165d73',
    ]);
    const down = createApi({ url: "http://127.0.0.1:1/sandbox/v1", key: "k", retries: 0, timeoutMs: 1000 });
    // Queued as given: the service resolves it at delivery.
    expect(await resolvePlayer(SEED_IDS.users.bob, opts({ api: down }))).toEqual({
      id: null,
      userId: SEED_IDS.users.bob,
      name: null,
    });
    // The online list names the player without asking the service.
    online = {
      user_type: "STEAM",
      players: [{ id: SEED_IDS.steamid64.bob, name: "Bob", user_id: SEED_IDS.users.bob }],
    };
    expect(await resolvePlayer(`user:${SEED_IDS.users.bob}`, opts({ api: down }))).toEqual({
      id: SEED_IDS.steamid64.bob,
      userId: SEED_IDS.users.bob,
      name: "Bob",
    });
    online = undefined;
    expect((await failure(ALICE, opts({ api: down, user: "lookup" }))).kind).toBe("unreachable");
  });

  test("on Minecraft a dashed UUID is a player's, with or without the service; user:<uuid> names a service user", async () => {
    const steve = sb.state.addUser({ type: "MINECRAFT", identifier: MC, username: "Steve" });
    expect(await resolvePlayer(MC, opts({ userType: "MINECRAFT", user: "lookup" }))).toEqual({
      id: MC,
      userId: steve.id,
      name: "Steve",
    });
    const fresh = "11111111-2222-4333-8444-555555555555";
    expect(await resolvePlayer(fresh, opts({ userType: "MINECRAFT" }))).toEqual({
      id: fresh,
      userId: null,
      name: null,
    });
    // A bare service user id on Minecraft is taken for a player's UUID, without asking anyone.
    expect(await resolvePlayer(SEED_IDS.users.alice, opts({ userType: "MINECRAFT", api: undefined }))).toEqual({
      id: SEED_IDS.users.alice,
      userId: null,
      name: null,
    });
    expect(await resolvePlayer(`user:${steve.id}`, opts({ userType: "MINECRAFT" }))).toEqual({
      id: MC,
      userId: steve.id,
      name: "Steve",
    });
    // A service user with no Minecraft account has nothing to act on here.
    const none = await failure(`user:${SEED_IDS.users.alice}`, opts({ userType: "MINECRAFT" }));
    expect([none.kind, none.message]).toEqual([
      "unknown",
      `the service user ${SEED_IDS.users.alice} has no MINECRAFT account to act on`,
    ]);
  });

  test("a nick resolves from a fresh online list; a missing or stale list, no match and two matches are refused", async () => {
    online = undefined;
    expect((await failure("Alice", opts())).kind).toBe("stale");
    online = {
      user_type: "STEAM",
      players: [
        { id: ALICE, name: "Alice", user_id: SEED_IDS.users.alice },
        { id: "76561198000000001", name: "Alicia", user_id: null },
      ],
    };
    savedAt = NOW - 60_000;
    expect(await resolvePlayer("alice", opts())).toEqual({ id: ALICE, userId: SEED_IDS.users.alice, name: "Alice" });
    // An id needs no list, but the list names the player (at any age).
    expect(await resolvePlayer(ALICE, opts({ api: undefined, now: NOW + 3600_000 }))).toEqual({
      id: ALICE,
      userId: SEED_IDS.users.alice,
      name: "Alice",
    });
    const otherGame = { savedAt, data: { ...online, user_type: "MINECRAFT" } };
    expect((await failure("alice", opts({ online: async () => otherGame }))).kind).toBe("stale");
    const both = await failure("ali", opts());
    expect([both.kind, both.message]).toEqual([
      "ambiguous",
      `"ali" matches 2 online players: Alice (${ALICE}), Alicia (76561198000000001); give the id instead`,
    ]);
    const none = await failure("Zed", opts());
    expect(none.kind).toBe("unknown");
    expect(none.message).toBe(
      'no online player is named "Zed": use a SteamID64, STEAM_X:Y:Z or [U:1:N], or a service user id',
    );
    savedAt = NOW - 121_000;
    const stale = await failure("alice", opts());
    expect(stale.kind).toBe("stale");
    expect(stale.message).toContain("the list of online players is 121 s old (is `hub-agent run` running?)");
    expect((await failure("  ", opts())).kind).toBe("invalid");
  });

  test("a nick also names a player seen recently who left, by the same rules: exact first, several refused", async () => {
    online = { user_type: "STEAM", players: [{ id: ALICE, name: "Alice", user_id: SEED_IDS.users.alice }] };
    savedAt = NOW - 10_000;
    const left = (players: Recent["players"], user_type = "STEAM") => ({
      recent: async () => ({ savedAt, data: { user_type, players } }),
    });
    const zoe = { id: "76561198000000007", name: "Zoe", user_id: null, last_seen: NOW - 300_000 };
    const zoey = { id: "76561198000000008", name: "Zoey", user_id: "u-8", last_seen: NOW - 7200_000 };
    expect(await resolvePlayer("zoe", opts(left([zoe, zoey])))).toEqual({ id: zoe.id, userId: null, name: "Zoe" });
    expect(await resolvePlayer("zoey", opts(left([zoe, zoey])))).toEqual({ id: zoey.id, userId: "u-8", name: "Zoey" });
    // "zo" fits both: refused with when each was seen.
    const both = await failure("zo", opts(left([zoe, zoey])));
    expect([both.kind, both.message]).toEqual([
      "ambiguous",
      `"zo" matches 2 online or recently seen players: Zoe (${zoe.id}, seen 5 min ago), Zoey (${zoey.id}, seen 2 h ago); give the id instead`,
    ]);
    // Online and gone in one list: "ali" fits Alice online and Alina who left, so it names neither.
    const alina = { id: "76561198000000009", name: "Alina", user_id: null, last_seen: NOW - 60_000 };
    expect((await failure("ali", opts(left([alina])))).kind).toBe("ambiguous");
    // An exact nick wins wherever it is; an online player's entry in the recent list is not counted twice.
    const aliceToo = { id: ALICE, name: "Alice", user_id: SEED_IDS.users.alice, last_seen: NOW };
    expect((await resolvePlayer("alice", opts(left([alina, aliceToo])))).id).toBe(ALICE);
    // Another game's list is no list; nobody by that name at all is "unknown", naming both lists.
    expect((await failure("zoe", opts(left([zoe], "MINECRAFT")))).kind).toBe("unknown");
    const none = await failure("Yolanda", opts(left([zoe])));
    expect(none.message).toStartWith('no online or recently seen player is named "Yolanda"');
  });
});
