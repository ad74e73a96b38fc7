import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createApi, type Api } from "../lib/api/client.ts";
import type { Online } from "../lib/features/online.ts";
import { PlayerError, matchNick, parsePlayerArg, resolvePlayer, type ResolveOptions } from "../lib/players.ts";
import { SEED_IDS, startSandbox, type Sandbox } from "../lib/sandbox/index.ts";

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
    ["STEAM", SEED_IDS.users.bob.toUpperCase(), { kind: "uuid", uuid: SEED_IDS.users.bob }],
    ["STEAM", "Alice", { kind: "nick", nick: "Alice" }],
    ["STEAM", "12345", { kind: "nick", nick: "12345" }],
    ["STEAM", "STEAM_0:2:1", { kind: "nick", nick: "STEAM_0:2:1" }],
    ["MINECRAFT", MC.replaceAll("-", "").toUpperCase(), { kind: "id", id: MC }],
    ["MINECRAFT", MC, { kind: "uuid", uuid: MC }],
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

  test("a service user id is looked up for its platform id; unknown ids and a missing service are told apart", async () => {
    expect(await resolvePlayer(SEED_IDS.users.bob, opts())).toEqual({
      id: SEED_IDS.steamid64.bob,
      userId: SEED_IDS.users.bob,
      name: "Bob",
    });
    const unknown = await failure("00000000-0000-4000-8000-000000000000", opts());
    expect([unknown.kind, unknown.message]).toEqual([
      "unknown",
      "the service knows no user with the id 00000000-0000-4000-8000-000000000000",
    ]);
    const down = createApi({ url: "http://127.0.0.1:1/sandbox/v1", key: "k", retries: 0, timeoutMs: 1000 });
    expect((await failure(SEED_IDS.users.bob, opts({ api: down }))).kind).toBe("unreachable");
    expect((await failure(ALICE, opts({ api: down, user: "lookup" }))).kind).toBe("unreachable");
  });

  test("on Minecraft a dashed UUID is a player first; unknown to the service it is still a player id", async () => {
    const steve = sb.state.addUser({ type: "MINECRAFT", identifier: MC, username: "Steve" });
    expect(await resolvePlayer(MC, opts({ userType: "MINECRAFT" }))).toEqual({
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
    // A service user id on a Minecraft server: not a Minecraft player, so the user itself.
    expect((await resolvePlayer(SEED_IDS.users.alice, opts({ userType: "MINECRAFT" }))).userId).toBe(
      SEED_IDS.users.alice,
    );
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
    expect((await failure("  ", opts())).kind).toBe("unknown");
  });
});
