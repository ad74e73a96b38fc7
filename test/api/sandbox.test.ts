/** Every endpoint and every error class, against the in-memory service over loopback. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type ApiError, type ApiOptions, type ApiResult, createApi, describeError } from "../../lib/api/client.ts";
import { ManualClock } from "../../lib/clock.ts";
import { type LogLine, memoryLogger } from "../../lib/log.ts";
import { startSandbox } from "../../lib/sandbox/index.ts";
import { FastClock } from "./helpers.ts";

const ALICE = "6d608cd3-155d-4344-b9e8-7c0280165d73";
const BOB = "f82e6399-324e-49a6-a411-09f621b77325";
const CAROL = "6ed1a4df-15d7-47f0-a8b0-d3bf844fa2de";
const ALICE_STEAM = "76561198012345671";
const BOB_STEAM = "76561198087654322";
const VIP = "ba250c5d-9c50-4fbd-9004-185559e22d08";
const MODERATOR = "006e761d-c3ed-4c57-97ce-67c9d8bc39c3";
const ALICE_BAN = "a66cfe88-3318-4fd8-b2db-ad94ca60f057";
const ALICE_WARNING = "8be7f4c6-4343-4a40-91ee-4bb1ad2b1193";
const ALICE_REWARD = "d6c19c3f-c76e-47e4-81ee-86ece6e8dd95";

let sb: Awaited<ReturnType<typeof startSandbox>>;
beforeAll(async () => {
  sb = await startSandbox({ seed: "examples" });
});
afterAll(async () => {
  await sb.stop();
});

function mk(extra: Partial<ApiOptions> = {}) {
  const clock = new FastClock();
  const lines: LogLine[] = [];
  const api = createApi({ url: sb.url, key: sb.key, clock, logger: memoryLogger(lines), backoffMs: 1, ...extra });
  return { api, clock, lines };
}

function value<T>(r: ApiResult<T>): T {
  if (!r.ok) throw new Error(describeError(r.error));
  return r.value;
}
function error<T>(r: ApiResult<T>): ApiError {
  if (r.ok) throw new Error(`expected an error, got ${r.status}`);
  return r.error;
}
const count = (method: string, path: string) => sb.control.requests({ method, path }).length;

describe("endpoints", () => {
  test("1, 2: getServer, patchServer", async () => {
    const { api } = mk();
    const server = value(await api.getServer(sb.serverId));
    expect(server.id).toBe(sb.serverId);
    expect(server.serverbundle_id).toBe(sb.bundleId);
    expect(server.serverbundle?.name).toBe("TTT");
    const patched = value(
      await api.patchServer(sb.serverId, {
        users_max: 24,
        users_current: 1,
        map: "ttt_minecraft_b5",
        is_alive: true,
        user_activities: [{ user_id: ALICE, extra: { Score: 1 } }],
      }),
    );
    expect(patched.map).toBe("ttt_minecraft_b5");
    expect(patched.users_current).toBe(1);
  });

  test("3, 4: getUser, NotFound, createUser", async () => {
    const { api } = mk();
    const alice = value(await api.getUser(ALICE_STEAM, "STEAM"));
    expect(alice.id).toBe(ALICE);
    expect(alice.username).toBe("Alice");

    const missing = error(await api.getUser("76561198999999999", "STEAM"));
    expect(missing.kind).toBe("NotFound");
    expect(missing.kind === "NotFound" && missing.code).toBe("not_found");

    const dave = value(await api.createUser({ identifier: "76561198000000042", type: "STEAM", username: "Dave" }));
    expect(dave.identifier).toBe("76561198000000042");
    expect(value(await api.getUser("76561198000000042", "STEAM")).id).toBe(dave.id);
  });

  test("5, 6: getUserGroups, getGroups", async () => {
    const { api } = mk();
    const groups = value(await api.getUserGroups(CAROL, sb.bundleId));
    expect(groups.map((g) => g.name)).toContain("Admin");
    const all = value(await api.getGroups());
    expect(all.map((g) => g.name).sort()).toEqual(["Admin", "Moderator", "VIP"]);
    const mod = all.find((g) => g.id === MODERATOR);
    expect(mod?.max_ban_length).toBe(604800);
    expect(mod?.mappings.some((m) => m.serverbundle_id == null)).toBe(true);
  });

  test("7, 8 and by-group: memberships", async () => {
    const { api } = mk();
    const begin = new Date(sb.state.now()).toISOString();
    const end = new Date(sb.state.now() + 86_400_000).toISOString();
    const created = value(
      await api.createMembership(BOB, { group_id: MODERATOR, serverbundle_id: sb.bundleId, begin, end }),
    );
    expect(created.group.id).toBe(MODERATOR);
    expect(created.user_id).toBe(BOB);

    expect(value(await api.getUserGroups(BOB, sb.bundleId)).map((g) => g.id)).toContain(MODERATOR);

    value(await api.createMembership(BOB, { group_id: VIP, serverbundle_id: sb.bundleId }));
    const byGroup = value(await api.endMembershipByGroup(BOB, VIP, sb.bundleId));
    expect(byGroup?.success ?? true).toBe(true);
    const left = value(await api.getUserGroups(BOB, sb.bundleId)).map((g) => g.id);
    expect(left).toContain(MODERATOR);
    expect(left).not.toContain(VIP);

    value(await api.createMembership(BOB, { group_id: VIP, serverbundle_id: sb.bundleId }));
    value(await api.endMemberships(BOB, sb.bundleId));
    expect(value(await api.getUserGroups(BOB, sb.bundleId))).toEqual([]);
  });

  test("11-13: getBundleBans, createBan, unbanUser (with morph_user_id)", async () => {
    const { api } = mk();
    const bans = value(await api.getBundleBans(sb.bundleId));
    expect(bans[BOB_STEAM]?.[0]?.reason).toBe("RDM x3");
    expect(bans[ALICE_STEAM]).toBeUndefined();

    const ban = value(
      await api.createBan(
        { user_id: ALICE, serverbundle_id: sb.bundleId, length: 3600, reason: "test", status: "ACTIVE" },
        { morphUserId: CAROL },
      ),
    );
    expect(ban.user.id).toBe(ALICE);
    expect(ban.creator?.id).toBe(CAROL);
    expect(value(await api.getBundleBans(sb.bundleId))[ALICE_STEAM]?.length).toBe(1);

    value(await api.unbanUser(ALICE, { bundleId: sb.bundleId, morphUserId: CAROL }));
    expect(value(await api.getBundleBans(sb.bundleId))[ALICE_STEAM]).toBeUndefined();
    const unban = sb.control.requests({ method: "PATCH", path: `/user/${ALICE}/ban` }).at(-1);
    expect(unban?.query).toContainEqual(["morph_user_id", CAROL]);
    expect(unban?.query).toContainEqual(["serverbundle_id", sb.bundleId]);
  });

  test("14: createWarning; listWarnings", async () => {
    const { api } = mk();
    const w = value(
      await api.createWarning(
        { user_id: BOB, serverbundle_id: sb.bundleId, reason: "Mic spam" },
        { morphUserId: CAROL },
      ),
    );
    expect(w.reason).toBe("Mic spam");
    expect(w.user.id).toBe(BOB);
    const page = value(await api.listWarnings(ALICE, { bundleId: sb.bundleId }));
    expect(page.items.find((i) => i.id === ALICE_WARNING)?.reason).toBe("Mic spam");
    expect(page.page).toBe(1);
  });

  test("15-17: attribute definition and value", async () => {
    const { api } = mk();
    const playtime = value(await api.getAttributeDefinition("playtime"));
    expect(playtime.type).toBe("ACCUMULATED");
    expect(error(await api.getAttributeDefinition("kills")).kind).toBe("NotFound");
    const kills = value(
      await api.createAttributeDefinition({
        name: "kills",
        title: "Kills",
        unit: "KILLS",
        type: "ACCUMULATED",
        accumulation_interval: "day",
        unspecific: true,
      }),
    );
    expect(kills.name).toBe("kills");
    expect(value(await api.getAttributeDefinition(kills.id)).name).toBe("kills");
    const sent = value(
      await api.sendAttribute({
        definition_id: playtime.id,
        user_id: ALICE,
        serverbundle_id: sb.bundleId,
        value: "1.25",
      }),
    );
    expect(String(sent.value)).toBe("1.25");
  });

  test("18, 19: applied rewards with repeated user_id, mark executed", async () => {
    const { api } = mk();
    const rewards = value(
      await api.getAppliedRewards({ bundleId: sb.bundleId, serverId: sb.serverId, userIds: [ALICE, CAROL] }),
    );
    expect(rewards[ALICE_STEAM]?.[0]?.id).toBe(ALICE_REWARD);
    expect(rewards[ALICE_STEAM]?.[0]?.reward.data?.command).toBe("ulx adduserid %steamid64% vip");

    const logged = sb.control.requests({ method: "GET", path: "/packet/reward/applied/user" }).at(-1);
    const userIds = logged?.query.filter(([k]) => k === "user_id").map(([, v]) => v);
    expect(userIds).toEqual([ALICE, CAROL]);
    const expected: [string, string][] = [
      ["active", "true"],
      ["foreign_ids", "true"],
      ["status", "OPEN"],
      ["for_server_id", sb.serverId],
      ["serverbundle_id", sb.bundleId],
    ];
    for (const pair of expected) expect(logged?.query).toContainEqual(pair);

    const marked = value(await api.markRewardExecuted(ALICE_REWARD, [sb.serverId]));
    expect(marked.executed_on).toContain(sb.serverId);
    const again = value(
      await api.getAppliedRewards({ bundleId: sb.bundleId, serverId: sb.serverId, userIds: [ALICE] }),
    );
    expect(again[ALICE_STEAM] ?? []).toEqual([]);

    const before = sb.control.requests().length;
    expect(value(await api.getAppliedRewards({ bundleId: sb.bundleId, serverId: sb.serverId, userIds: [] }))).toEqual(
      {},
    );
    expect(sb.control.requests().length).toBe(before);
  });

  test("20: getAdverts sends enabled=true and keeps only enabled ones", async () => {
    const { api } = mk();
    const adverts = value(await api.getAdverts(sb.bundleId));
    expect(adverts.map((a) => a.title)).toEqual(["Discord", "Shop"]);
    const logged = sb.control.requests({ method: "GET", path: "/advert/" }).at(-1);
    expect(logged?.query).toContainEqual(["enabled", "true"]);
    expect(logged?.query).toContainEqual(["serverbundle_id", sb.bundleId]);
  });

  test("listBans", async () => {
    const { api } = mk();
    const page = value(await api.listBans(ALICE));
    const ban = page.items.find((b) => b.id === ALICE_BAN);
    expect(ban?.serverbundle).toBeNull();
    expect(ban?.length).toBeNull();
    const logged = sb.control.requests({ method: "GET", path: "/ban/" }).at(-1);
    expect(logged?.query).toContainEqual(["user_id", ALICE]);
    expect(logged?.query).toContainEqual(["sort_desc", "true"]);
  });
});

describe("transport", () => {
  test("the base path is kept, with or without a trailing slash", async () => {
    expect(new URL(sb.url).pathname.length).toBeGreaterThan(1);
    const { api } = mk({ url: `${sb.url}/` });
    expect(value(await api.getGroups()).length).toBe(3);
    expect(sb.control.requests({ method: "GET", path: "/group/" }).length).toBeGreaterThan(0);
  });

  test("422 validation error names the field", async () => {
    const { api } = mk();
    const e = error(await api.createBan({ reason: "no user" } as never));
    expect(e.kind).toBe("ClientError");
    expect(e.kind === "ClientError" && e.status).toBe(422);
    expect(describeError(e)).toContain("user_id");
    expect(describeError(e)).toStartWith("POST /ban/: 422 ");
  });

  test("5xx: GET retries with backoff through the clock", async () => {
    const { api, clock } = mk({ retries: 2 });
    const before = count("GET", "/group/");
    sb.control.failNext({ method: "GET", path: "/group/" }, 2, 500);
    expect(value(await api.getGroups()).length).toBe(3);
    expect(count("GET", "/group/") - before).toBe(3);
    expect(clock.sleeps.length).toBe(2);

    sb.control.failNext({ method: "GET", path: "/group/" }, 3, 503);
    const e = error(await api.getGroups());
    expect(e.kind).toBe("ServerError");
    expect(e.kind === "ServerError" && e.status).toBe(503);
  });

  test("5xx: writes are never retried", async () => {
    const { api } = mk({ retries: 5 });
    const before = count("POST", "/warning/");
    sb.control.failNext({ method: "POST", path: "/warning/" }, 1, 503);
    const e = error(await api.createWarning({ user_id: BOB, serverbundle_id: sb.bundleId, reason: "x" }));
    expect(e.kind).toBe("ServerError");
    expect(count("POST", "/warning/") - before).toBe(1);
  });

  test("an HTML error page is never echoed", async () => {
    const { api, lines } = mk({ retries: 0 });
    sb.control.failNext(
      { method: "GET", path: "/group/" },
      1,
      502,
      "<html><body><h1>502 Bad Gateway</h1></body></html>",
    );
    const e = error(await api.getGroups());
    expect(e.message).toBe("HTML error page");
    expect(JSON.stringify(lines)).not.toContain("<html");
  });

  test("a 429 closes its endpoint's gate until Retry-After has passed; other endpoints go on", async () => {
    const { api, clock } = mk();
    sb.control.rateLimit(1, 30, { method: "POST", path: "/warning/" });
    const e = error(await api.createWarning({ user_id: BOB, serverbundle_id: sb.bundleId }));
    expect(e.kind).toBe("RateLimited");
    expect(e.kind === "RateLimited" && e.retryAfterMs).toBe(30_000);

    // The refused endpoint waits, without a request leaving this process.
    const before = count("POST", "/warning/");
    const blocked = error(await api.createWarning({ user_id: BOB, serverbundle_id: sb.bundleId }));
    expect(blocked).toMatchObject({ kind: "RateLimited", message: "rate limit gate closed" });
    expect(count("POST", "/warning/")).toBe(before);
    // Others are not held back: the server record, the groups, a ban.
    expect(value(await api.getServer(sb.serverId)).id).toBe(sb.serverId);
    expect(value(await api.getGroups()).length).toBe(3);
    expect(value(await api.createUser({ identifier: "76561198000000077", type: "STEAM" })).identifier).toBe(
      "76561198000000077",
    );

    clock.t += 30_000;
    expect(value(await api.createWarning({ user_id: BOB, serverbundle_id: sb.bundleId, reason: "later" })).reason).toBe(
      "later",
    );
  });

  test("a second endpoint's 429 while the first waits: the limit is the key's, and every endpoint waits", async () => {
    const { api, clock } = mk();
    sb.control.rateLimit(1, 30, { method: "GET", path: "/group/" });
    expect(error(await api.getGroups()).kind).toBe("RateLimited");
    sb.control.rateLimit(1, 20, { method: "PATCH", path: `/server/${sb.serverId}` });
    expect(error(await api.patchServer(sb.serverId, { users_current: 1 } as never)).kind).toBe("RateLimited");

    const before = sb.control.requests().length;
    const blockedGet = error(await api.getServer(sb.serverId));
    const blockedPost = error(await api.createWarning({ user_id: BOB, serverbundle_id: sb.bundleId }));
    expect(blockedGet.kind).toBe("RateLimited");
    expect(blockedPost.kind).toBe("RateLimited");
    expect(sb.control.requests().length).toBe(before);

    clock.t += 15_000; // 5 s left of the key's gate: a GET waits through the clock, a write still fails fast
    expect(error(await api.createUser({ identifier: "x", type: "STEAM" })).kind).toBe("RateLimited");
    expect(value(await api.getServer(sb.serverId)).id).toBe(sb.serverId);
    expect(clock.sleeps).toContain(5_000);
    // The groups' own gate (30 s) is still closed for 10 s: too long to wait through.
    expect(error(await api.getGroups())).toMatchObject({ kind: "RateLimited", retryAfterMs: 10_000 });
    clock.t += 10_000;
    expect(value(await api.getGroups()).length).toBe(3);
  });

  test("the 429 gate runs on monotonic time: a wall clock set back 2 h neither stretches nor a jump ahead shortens it", async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 12));
    const api = createApi({ url: sb.url, key: sb.key, clock, backoffMs: 1 });
    sb.control.rateLimit(1, 30, { method: "POST", path: "/warning/" });
    const warn = () => api.createWarning({ user_id: BOB, serverbundle_id: sb.bundleId, reason: "gate" });
    expect(error(await warn())).toMatchObject({ kind: "RateLimited", retryAfterMs: 30_000 });

    clock.jump(2 * 3600_000); // set ahead: Retry-After has not passed yet
    expect(error(await warn())).toMatchObject({ kind: "RateLimited", message: "rate limit gate closed" });
    clock.jump(-4 * 3600_000); // set back 2 h from where it started
    await clock.advance(29_000);
    expect(error(await warn())).toMatchObject({ kind: "RateLimited", retryAfterMs: 1_000 });
    await clock.advance(1_000);
    const before = count("POST", "/warning/");
    expect(value(await warn()).reason).toBe("gate");
    expect(count("POST", "/warning/")).toBe(before + 1);
  });

  test("a short 429 on a GET is waited out and retried", async () => {
    const { api, clock } = mk();
    sb.control.rateLimit(1, 2, { method: "GET", path: "/group/" });
    expect(value(await api.getGroups()).length).toBe(3);
    expect(clock.sleeps).toContain(2_000);
  });

  test("per-attempt timeout via latency, retried for GETs", async () => {
    const { api } = mk({ timeoutMs: 50, retries: 1 });
    const before = count("GET", "/group/");
    sb.control.latency(400, { method: "GET", path: "/group/" });
    try {
      const e = error(await api.getGroups());
      expect(e.kind).toBe("Network");
      expect(e.kind === "Network" && e.timeout).toBe(true);
      expect(describeError(e)).toContain("timed out");
    } finally {
      sb.control.latency(0, { method: "GET", path: "/group/" });
    }
    expect(count("GET", "/group/") - before).toBeLessThanOrEqual(2);
  });

  test("connection refused via down()", async () => {
    const { api } = mk({ retries: 1 });
    await sb.control.down();
    try {
      const e = error(await api.getServer(sb.serverId));
      expect(e.kind).toBe("Network");
      expect(e.kind === "Network" && e.timeout).toBe(false);
    } finally {
      await sb.control.up();
    }
    expect(value(await api.getServer(sb.serverId)).id).toBe(sb.serverId);
  });

  test("invalid JSON on a 2xx is InvalidResponse", async () => {
    const { api } = mk();
    sb.control.failNext({ method: "GET", path: "/group/" }, 1, 200, "{not json");
    const e = error(await api.getGroups());
    expect(e.kind).toBe("InvalidResponse");
    expect(e.kind === "InvalidResponse" && e.field).toBe("(body)");
  });

  test("a schema mismatch names the field path", async () => {
    const { api } = mk();
    const bad = JSON.stringify({ id: "s", name: "S", type: "GMOD", port: "high" });
    sb.control.failNext({ method: "GET", path: `/server/${sb.serverId}` }, 1, 200, bad);
    const e = error(await api.getServer(sb.serverId));
    expect(e.kind === "InvalidResponse" && e.field).toBe("port");
    expect(describeError(e)).toContain("invalid response at port:");
  });

  test("one unreadable item of a list answer is skipped and reported once; the rest is used", async () => {
    const { api, lines } = mk();
    const good = { id: "g2", name: "Good", permission_level: 5, mappings: [] };
    const bad = JSON.stringify([{ id: "g1", name: "G", permission_level: "high", mappings: [] }, good]);
    sb.control.failNext({ method: "GET", path: "/group/" }, 2, 200, bad);
    const first = await api.getGroups();
    expect(value(first)).toEqual([good]);
    expect(first.ok && first.skipped).toBe(1); // the caller is told the list is not whole
    expect(value(await api.getGroups())).toEqual([good]);
    const whole = await api.getGroups();
    expect(whole.ok && whole.skipped).toBeUndefined();
    const warnings = lines.filter((l) => l.level === "warn").map((l) => l.msg);
    expect(warnings).toEqual([
      'skipped an unreadable item of a list answer, the rest is used: GET /group/ [0] (id g1): permission_level: Invalid type: Expected number but received "high"',
    ]);
  });

  test("each request logs method, path, status and ms at debug", async () => {
    const { api, lines } = mk();
    value(await api.getServer(sb.serverId));
    expect(lines).toHaveLength(1);
    expect(lines[0]?.level).toBe("debug");
    expect(lines[0]?.data).toMatchObject({ method: "GET", path: `/server/${sb.serverId}`, status: 200 });
  });

  test("the key appears nowhere across error cases", async () => {
    const { api, lines } = mk({ retries: 1, timeoutMs: 50 });
    const results: unknown[] = [];
    results.push(await api.getUser("nobody", "STEAM"));
    results.push(await api.createBan({ reason: "no user" } as never));
    sb.control.failNext({ method: "GET", path: "/group/" }, 2, 500, `{"detail":"boom"}`);
    results.push(await api.getGroups());
    sb.control.failNext({ method: "GET", path: "/group/" }, 1, 200, "{not json");
    results.push(await api.getGroups());
    sb.control.latency(400, { method: "GET", path: "/advert/" });
    results.push(await api.getAdverts(sb.bundleId));
    sb.control.latency(0, { method: "GET", path: "/advert/" });
    await sb.control.down();
    results.push(await api.getServer(sb.serverId));
    await sb.control.up();
    sb.control.rateLimit(1, 60, { method: "GET", path: "/group/" });
    results.push(await api.getGroups());
    results.push(await api.getGroups()); // the closed gate
    sb.control.rateLimit(1, 60, { method: "POST", path: "/warning/" });
    results.push(await api.createWarning({ user_id: BOB, serverbundle_id: sb.bundleId }));
    const described = results.map((r) =>
      (r as ApiResult<unknown>).ok ? "" : describeError((r as { error: ApiError }).error),
    );
    const everything = JSON.stringify({ results, lines, described });
    expect(everything).not.toContain(sb.key);
    expect(results.every((r) => !(r as ApiResult<unknown>).ok)).toBe(true);
  });
});
