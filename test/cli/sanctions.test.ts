/**
 * ban, unban, warn, warns and queue status/retry/drop, run in this process (warn and warns also as the compiled
 * binary) against the in-memory service:
 * --json output, exit codes (0 done, 6 queued, 2 bad input, 5 unknown player, 4 unreachable, 1 refused) and the
 * one-line errors.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, readdirSync } from "node:fs";
import { truncate } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { onlineCache } from "../../lib/players/online.ts";
import { EXECUTED_QUEUE, ExecutedRewardSchema } from "../../lib/rewards/executed.ts";
import { FAILED_QUEUE, FailedRewardSchema, GIVE_UP_AFTER } from "../../lib/rewards/failures.ts";
import { SEED_IDS, startSandbox, type Sandbox } from "../../lib/sandbox/index.ts";
import { BanEntrySchema } from "../../lib/sanctions/index.ts";
import { openStore } from "../../lib/store/index.ts";
import { binary, hub, hubBinary, type Run } from "./binary.ts";

const KEY = "sanctions-cli-key-5e1d07b3c9";
const { alice: ALICE, bob: BOB, carol: CAROL } = SEED_IDS.steamid64;
const USERS = SEED_IDS.users;
const DOWN = "http://127.0.0.1:1/sandbox/v1";

let sb: Sandbox;
beforeAll(async () => {
  sb = await startSandbox({ key: KEY });
  await binary();
}, 120_000);
afterAll(() => sb?.stop());

const all: Run[] = [];
/** A storage directory of its own per test, so queues never leak between tests. */
const fresh = () => ({
  HUB_API_URL: sb.url,
  HUB_API_KEY: KEY,
  HUB_API_SERVER_ID: sb.serverId,
  HUB_GAME_BRIDGE: "sim",
  HUB_STORAGE_DIR: mkdtempSync(join(tmpdir(), "hub-sanctions-")),
});
/** The CLI in this process; `hubBinary` for the compiled binary end to end (one test per command at least). */
const run = async (args: string[], env: Record<string, string>, cli = hub) => {
  const r = await cli(args, { env });
  all.push(r);
  return r;
};
const json = (r: Run) => JSON.parse(r.stdout);
/** A failure: exactly one line on stderr, nothing on stdout. */
const oneLine = (r: Run, code: number) => {
  expect(r.code).toBe(code);
  expect(r.stdout).toBe("");
  const lines = r.stderr.trimEnd().split("\n");
  expect(lines).toHaveLength(1);
  return lines[0] as string;
};
/** Entries per queue: ban, unban, warning, reward_executed, reward_failed. */
const queued = async (env: Record<string, string>): Promise<number[]> =>
  json(await run(["queue", "status", "--json"], env)).queues.map((q: { entries: number }) => q.entries);
const bansOf = (userId: string) => [...sb.state.bans.values()].filter((b) => b.user_id === userId);
const morphOf = (method: string, path: string) =>
  sb.control
    .requests({ method, path })
    .map((r) => r.query.find(([k]) => k === "morph_user_id")?.[1] ?? null)
    .at(-1);

describe("ban", () => {
  test("delivered at once: exit 0, the service's ban in --json, every id spelling normalised", async () => {
    const env = fresh();
    const r = await run(["ban", "STEAM_0:1:26039971", "1d12h", "spamming", "the", "chat", "--json"], env);
    expect(r.code).toBe(0);
    const out = json(r);
    const ban = bansOf(USERS.alice).at(-1)!;
    expect(out).toMatchObject({
      action: "ban",
      status: "delivered",
      player: { id: ALICE, type: "STEAM" },
      length_s: 129_600,
      length: "1d 12h",
      reason: "spamming the chat",
      as: null,
      ban_id: ban.id,
    });
    expect([ban.length, ban.reason, ban.serverbundle_id]).toEqual([129_600, "spamming the chat", sb.bundleId]);
    expect(morphOf("POST", "/ban/")).toBeNull();

    const human = await run(["ban", "[U:1:52079943]", "perm", "cheating"], env);
    expect(human.code).toBe(0);
    expect(human.stdout).toBe(`${ALICE} has been banned permanently. Reason: cheating\n`);
    expect(bansOf(USERS.alice).at(-1)).toMatchObject({ length: null, reason: "cheating" });
    // After `--` everything is the reason, even what looks like an option.
    expect((await run(["ban", ALICE, "10", "--", "he", "said", "--help"], env)).code).toBe(0);
    expect(bansOf(USERS.alice).at(-1)).toMatchObject({ length: 600, reason: "he said --help" });
    expect(await queued(env)).toEqual([0, 0, 0, 0, 0]);
  });

  test("--as sends morph_user_id: the service checks that user's permissions (refused: exit 1)", async () => {
    const env = fresh();
    const ok = await run(["ban", ALICE, "90", "griefing", "--as", CAROL, "--json"], env);
    expect(ok.code).toBe(0);
    expect(json(ok).as).toMatchObject({ id: CAROL });
    expect(morphOf("POST", "/ban/")).toBe(USERS.carol);
    expect(bansOf(USERS.alice).at(-1)).toMatchObject({ length: 5400, creator_id: USERS.carol });

    const refused = await run(["ban", ALICE, "90", "griefing", "--as", BOB], env);
    expect(oneLine(refused, 1)).toBe(
      `error: VyHub refused the ban of ${ALICE}: POST /ban/: 403 Missing properties: ban_edit (missing_properties)`,
    );
    const asJson = await run(["ban", ALICE, "90", "griefing", "--as", BOB, "--json"], env);
    expect(asJson.code).toBe(1);
    expect(json(asJson).error).toMatchObject({ code: 1, message: expect.stringContaining("403") });
    // A refused ban is not kept for retries.
    expect(await queued(env)).toEqual([0, 0, 0, 0, 0]);
  });

  test("service unreachable: queued (exit 6), listed by queue status, delivered by queue retry", async () => {
    const env = fresh();
    // Nothing cached yet: the serverbundle a ban is issued in is unknown, so nothing can be queued.
    const noBundle = await run(["ban", ALICE, "30m", "offline"], { ...env, HUB_API_URL: DOWN });
    expect(oneLine(noBundle, 4)).toStartWith("error: nothing was queued: this server's serverbundle is unknown");

    await run(["warns", ALICE], env); // caches the server record
    const down = { ...env, HUB_API_URL: DOWN };
    const q = await run(["ban", ALICE, "30m", "offline", "ban", "--json"], down);
    expect(q.code).toBe(6);
    const out = json(q);
    expect(out).toMatchObject({ action: "ban", status: "queued", length_s: 1800 });
    expect(out.error).toContain("ECONNREFUSED");
    const human = await run(["ban", "STEAM_0:0:1", "2w", "second"], down);
    expect(human.code).toBe(6);
    expect(human.stdout).toStartWith(
      "Ban of 76561197960265730 (2w) is queued and will be sent to VyHub. Reason: second",
    );

    const status = await run(["queue", "status", "--json"], env);
    const ban = json(status).queues.find((x: { queue: string }) => x.queue === "ban");
    expect(ban.entries).toBe(2);
    expect(ban.items[0]).toMatchObject({ id: out.entry_id, attempts: 1, data: { reason: "offline ban" } });
    expect(ban.items[0].last_error).toContain("ECONNREFUSED");
    const text = (await run(["queue", "status"], env)).stdout;
    expect(text).toContain(`ban ${ALICE} 30m "offline ban" by the console`);

    const before = bansOf(USERS.alice).length;
    const retried = await run(["queue", "retry", out.entry_id.slice(-12), "--json"], env);
    expect(retried.code).toBe(0);
    expect(json(retried)).toMatchObject({ action: "retry", queue: "ban", entry_id: out.entry_id, status: "delivered" });
    expect(bansOf(USERS.alice)).toHaveLength(before + 1);
    // A one-shot round takes only its own player's entries: another player's ban waits for `run` (or its own retry).
    expect(await queued(env)).toEqual([1, 0, 0, 0, 0]);
    const other = json(await run(["queue", "status", "--json"], env)).queues[0].items[0].id;
    expect((await run(["queue", "retry", other], env)).stdout).toBe(
      "76561197960265730 has been banned for 2w. Reason: second\n",
    );
    expect(sb.state.findUser("76561197960265730", "STEAM")).toBeDefined(); // created on the way
    expect(await queued(env)).toEqual([0, 0, 0, 0, 0]);
  }, 30_000); // ten runs of the CLI: over 5 s on a busy machine

  test("a 300 MB queue entry is quarantined with its reason, unread; queue status works", async () => {
    const env = fresh();
    await run(["warns", ALICE], env); // caches the server record
    const down = { ...env, HUB_API_URL: DOWN };
    const kept = json(await run(["ban", ALICE, "30m", "kept", "--json"], down));
    const huge = json(await run(["ban", BOB, "30m", "huge", "--json"], down));
    await truncate(join(env.HUB_STORAGE_DIR, "queue", "ban", huge.entry_id), 300_000_000); // sparse
    const status = await run(["queue", "status", "--json"], down);
    expect(status.code).toBe(0);
    const ban = json(status).queues.find((x: { queue: string }) => x.queue === "ban");
    expect(ban.items.map((i: { id: string }) => i.id)).toEqual([kept.entry_id]);
    expect(status.stderr).toContain("unreadable record moved to quarantine");
    expect(status.stderr).toContain("300000000 bytes, larger than the 67108864-byte cap for a record; not read");
    const moved = readdirSync(join(env.HUB_STORAGE_DIR, "corrupt", "queue", "ban"));
    expect(moved.map((f) => f.split(".")[0])).toEqual([huge.entry_id]);
  });

  test("bad input is refused with one line and exit 2, before anything is queued", async () => {
    const env = fresh();
    expect(oneLine(await run(["ban", ALICE, "5x", "why"], env), 2)).toBe(
      'error: "5x" is not a ban length (unknown unit "x"): use minutes as a number (90), a duration (30m, 1d12h, 2w; units w d h m s), or 0/perm',
    );
    expect(oneLine(await run(["ban", ALICE, "soon", "why"], env), 2)).toContain('"soon" is not a ban length');
    // An end date centuries away once voided the whole ban list: the longest timed ban is 10 years.
    expect(oneLine(await run(["ban", ALICE, "99999999999", "r"], env), 2)).toBe(
      'error: "99999999999" is too long for a ban: the longest is 10 years (3650d, 5256000 minutes); use 0/perm for a permanent ban',
    );
    expect(oneLine(await run(["ban", ALICE, "10", "  "], env), 2)).toBe(
      "error: the reason is empty: hub-agent ban <player> <length> <reason…>",
    );
    expect(oneLine(await run(["ban", ALICE, "10"], env), 2)).toBe(
      "error: hub-agent ban needs <reason…>: hub-agent ban <player> <length> <reason…>",
    );
    expect(oneLine(await run(["ban", ALICE, "10", "x", "--lenght", "5"], env), 2)).toContain("unknown option --lenght");
    const bad = await run(["ban", ALICE, "-5", "x", "--json"], env);
    expect(bad.code).toBe(2);
    expect(json(bad).error.code).toBe(2);
    expect(await queued(env)).toEqual([0, 0, 0, 0, 0]);
  });
});

describe("<player>", () => {
  test("nicks resolve from the online list run keeps; none, several, or a stale list are refused", async () => {
    const env = fresh();
    const nothing = await run(["ban", "Alice", "10", "x"], env);
    expect(oneLine(nothing, 5)).toBe(
      'error: "Alice" is not a player id and no list of online players exists yet: use a SteamID64, STEAM_X:Y:Z or [U:1:N], or a service user id',
    );
    const store = await openStore({ dir: env.HUB_STORAGE_DIR });
    const players = [
      { id: ALICE, name: "Alice", user_id: USERS.alice },
      { id: "76561198000000101", name: "Alicia", user_id: null },
    ];
    await onlineCache(store).set({ user_type: "STEAM", players });

    const hit = await run(["ban", "alice", "10", "x", "--json"], env);
    expect(hit.code).toBe(0);
    expect(json(hit).player).toEqual({ id: ALICE, type: "STEAM", user_id: USERS.alice, name: "Alice" });
    expect(hit.stdout).not.toContain("Alicia");
    expect(oneLine(await run(["ban", "ali", "10", "x"], env), 2)).toBe(
      `error: "ali" matches 2 online or recently seen players: Alice (${ALICE}), Alicia (76561198000000101); give the id instead`,
    );
    expect(oneLine(await run(["warn", "Zed", "x"], env), 5)).toBe(
      'error: no online or recently seen player is named "Zed": use a SteamID64, STEAM_X:Y:Z or [U:1:N], or a service user id',
    );
    const asNick = await run(["ban", "76561198000000101", "10", "x", "--as", "Zed"], env);
    expect(oneLine(asNick, 5)).toStartWith('error: --as: no online player is named "Zed"');

    // A griefer named "Bob" + a zero-width space looks like Bob: `ban Bob` must not pick the real Bob.
    const lookalikes = [
      { id: BOB, name: "Bob", user_id: USERS.bob },
      { id: "76561198000000102", name: "Bob\u200b", user_id: null },
    ];
    await onlineCache(store).set({ user_type: "STEAM", players: lookalikes });
    const before = await queued(env);
    expect(oneLine(await run(["ban", "Bob", "10", "x"], env), 2)).toStartWith(
      `error: "Bob" matches 2 online or recently seen players: Bob (${BOB}), Bob\u200b (76561198000000102)`,
    );
    expect(await queued(env)).toEqual(before);
    await onlineCache(store).set({ user_type: "STEAM", players });

    await onlineCache(store).set({ user_type: "STEAM", players }, Date.now() - 600_000);
    expect(oneLine(await run(["unban", "Alice"], env), 5)).toMatch(
      /^error: "Alice" is not a player id and the list of online players is 6\d\d s old \(is `hub-agent run` running\?\)/,
    );
  });

  test("a service user id is looked up; an unknown one is exit 5; without the service it is queued as given (exit 6)", async () => {
    const env = fresh();
    const r = await run(["warns", USERS.alice, "--json"], env);
    expect(r.code).toBe(0);
    expect(json(r).player).toEqual({ id: ALICE, type: "STEAM", user_id: USERS.alice, name: "Alice" });
    const unknown = await run(["ban", "00000000-0000-4000-8000-000000000000", "10", "x"], env);
    expect(oneLine(unknown, 5)).toBe(
      "error: the service knows no user with the id 00000000-0000-4000-8000-000000000000",
    );
    expect(oneLine(await run(["ban", "user:alice", "10", "x"], env), 2)).toBe(
      `error: "user:alice" is not a service user id: write user:<the user's UUID>, e.g. user:6d608cd3-155d-4344-b9e8-7c0280165d73`,
    );
    const down = await run(["ban", USERS.alice, "10", "x", "--json"], { ...env, HUB_API_URL: DOWN });
    expect(down.code).toBe(6);
    expect(json(down)).toMatchObject({ status: "queued", player: { id: null, type: "STEAM", user_id: USERS.alice } });
    // Resolved by the service at delivery: Alice's user is banned.
    const before = bansOf(USERS.alice).length;
    const retried = await run(["queue", "retry", json(down).entry_id], env);
    expect(retried.code).toBe(0);
    expect(retried.stdout).toBe(`VyHub user ${USERS.alice} has been banned for 10m. Reason: x\n`);
    expect(bansOf(USERS.alice)).toHaveLength(before + 1);
  });

  test("offline, user:<uuid> queues as given; a user the service does not know is dropped at delivery (exit 5)", async () => {
    const env = fresh();
    await run(["warns", ALICE], env); // caches the server record
    const nobody = "00000000-0000-4000-8000-00000000abcd";
    const down = { ...env, HUB_API_URL: DOWN };
    const q = await run(["ban", `user:${nobody}`, "10", "ghost", "--json"], down);
    expect(q.code).toBe(6);
    const entry = json(q).entry_id as string;
    expect((await run(["queue", "status"], env)).stdout).toContain(
      `ban VyHub user ${nobody} (game id resolved at delivery) 10m "ghost" by the console`,
    );
    sb.control.clearRequests();
    const retried = await run(["queue", "retry", entry], env);
    expect(oneLine(retried, 5)).toBe(`error: Ban of VyHub user ${nobody} dropped: the player is not known to VyHub.`);
    expect(sb.control.requests({ method: "POST", path: "/ban/" }).map((r) => r.status)).toEqual([404]);
    expect(await queued(env)).toEqual([0, 0, 0, 0, 0]);
  });

  test("game.preset = minecraft: a dashed UUID is a Minecraft player's, queued offline (exit 6) and delivered later", async () => {
    const mc = {
      ...fresh(),
      HUB_GAME_BRIDGE: "rcon",
      HUB_GAME_PRESET: "minecraft",
      HUB_GAME_RCON_PASSWORD: "unused-by-one-shot-commands",
    };
    const steve = "8667ba71-b85a-4004-af54-457a9734eed7";
    expect((await run(["warns", steve], mc)).code).toBe(0); // caches the server record
    const down = { ...mc, HUB_API_URL: DOWN };
    const q = await run(["ban", steve.toUpperCase(), "1d", "griefing", "--json"], down);
    expect(q.code).toBe(6);
    expect(json(q)).toMatchObject({ status: "queued", player: { id: steve, type: "MINECRAFT", user_id: null } });
    const retried = await run(["queue", "retry", json(q).entry_id, "--json"], mc);
    expect(retried.code).toBe(0);
    const user = sb.state.findUser(steve, "MINECRAFT");
    expect(user).toBeDefined(); // created at delivery
    expect(bansOf(user!.id).map((b) => b.reason)).toEqual(["griefing"]);
    // A service user id is named explicitly there.
    const named = await run(["warns", `user:${USERS.alice}`], mc);
    expect(oneLine(named, 5)).toBe(`error: the service user ${USERS.alice} has no MINECRAFT account to act on`);
  });
});

describe("unban", () => {
  test("delivered: exit 0 and the ban is lifted; a player unknown to the service is exit 5", async () => {
    const env = fresh();
    expect(bansOf(USERS.bob).some((b) => sb.state.banActive(b))).toBe(true);
    const r = await run(["unban", BOB, "--as", CAROL, "--json"], env);
    expect(r.code).toBe(0);
    expect(json(r)).toMatchObject({
      action: "unban",
      status: "delivered",
      player: { id: BOB },
      cancelled_queued_bans: 0,
      as: { id: CAROL },
    });
    expect(morphOf("PATCH", `/user/${USERS.bob}/ban`)).toBe(USERS.carol);
    expect(bansOf(USERS.bob).some((b) => sb.state.banActive(b))).toBe(false);
    expect(oneLine(await run(["unban", "76561198000000999"], env), 5)).toBe(
      "error: Unban of 76561198000000999 dropped: the player is not known to VyHub.",
    );
    expect(oneLine(await run(["unban", BOB, "extra"], env), 2)).toBe(
      'error: hub-agent unban does not take "extra": hub-agent unban <player>',
    );
  });

  test("an unban lifts the bans from the cached list too: run starting next does not kick the player", async () => {
    const env = fresh();
    const player = "76561198000000560";
    expect((await run(["ban", player, "1d", "cached"], env)).code).toBe(0);
    // A warning refreshes the ban list (rule 12): the cache now holds the ban.
    expect((await run(["warn", player, "w"], env)).code).toBe(0);
    expect((await run(["unban", player], env)).code).toBe(0);
    const actions = join(env.HUB_STORAGE_DIR, "actions.jsonl");
    const once = await run(["run", "--once"], {
      ...env,
      HUB_GAME_SIM_PLAYERS: `${player}:Pat`,
      HUB_GAME_SIM_ACTIONS_LOG: actions,
    });
    expect(once.code).toBe(0);
    const kicks = (existsSync(actions) ? readFileSync(actions, "utf8") : "")
      .split("\n")
      .filter((l) => l.includes('"kick"'));
    expect(kicks).toEqual([]);
  });

  test("offline: a command moments after a round found no service queues without asking; queue retry asks", async () => {
    const env = fresh();
    await run(["warns", CAROL], env); // caches the server record
    const down = { ...env, HUB_API_URL: DOWN };
    const first = await run(["ban", "76561198000000556", "1d", "x", "--json"], down);
    expect(first.code).toBe(6);
    expect(json(first).error).toContain("ECONNREFUSED");
    const second = await run(["ban", "76561198000000557", "1d", "y", "--json"], down);
    expect(second.code).toBe(6);
    expect(json(second).error).toMatch(
      /^VyHub did not answer \d+ s ago \(.*ECONNREFUSED.*\); not asked again so soon: `hub-agent run` sends it$/,
    );
    const entries = json(await run(["queue", "status", "--json"], env)).queues[0].items;
    const attempts = (id: string) => entries.find((e: { id: string }) => e.id === id)?.attempts;
    expect([attempts(json(first).entry_id), attempts(json(second).entry_id)]).toEqual([1, 0]);
    // The operator asks for an attempt: made (and refused again), not held back.
    const retried = await run(["queue", "retry", json(second).entry_id, "--json"], down);
    expect(retried.code).toBe(6);
    expect(JSON.stringify(json(retried))).toContain("ECONNREFUSED");
    // Another URL (the configuration fixed): asked at once, and the note goes.
    expect((await run(["ban", "76561198000000558", "1d", "z"], env)).code).toBe(0);
    expect((await run(["ban", "76561198000000559", "1d", "w", "--json"], down)).stderr).not.toContain(
      "not asked again",
    );
  });

  test("offline: cancels the still-queued ban (never sent) and queues the unban (exit 6)", async () => {
    const env = fresh();
    await run(["warns", CAROL], env); // caches the server record
    const down = { ...env, HUB_API_URL: DOWN };
    expect((await run(["ban", "76561198000000555", "1d", "x"], down)).code).toBe(6);
    const r = await run(["unban", "76561198000000555", "--json"], down);
    expect(r.code).toBe(6);
    expect(json(r)).toMatchObject({ status: "queued", cancelled_queued_bans: 1 });
    // The ban's round found no service moments ago: the unban's command did not ask again; the cancelled ban waits,
    // marked so, for the next round, which removes it without sending it.
    expect(json(r).error).toMatch(/^VyHub did not answer \d+ s ago \(.*\); not asked again so soon/);
    expect(await queued(env)).toEqual([1, 1, 0, 0, 0]);

    sb.control.clearRequests();
    const retried = await run(["queue", "retry", json(r).entry_id], env);
    // The unban's user never reached the service: nothing to unban (exit 5); the cancelled ban was never sent.
    expect(retried.code).toBe(5);
    expect(sb.control.requests({ method: "POST", path: "/ban/" })).toHaveLength(0);
    expect(await queued(env)).toEqual([0, 0, 0, 0, 0]);
    expect(await queued(env)).toEqual([0, 0, 0, 0, 0]);
  });
});

describe("warn and warns", () => {
  test("warn: delivered with the warning's id; the ban list is refreshed and an automatic ban reported", async () => {
    const env = fresh();
    const r = await run(["warn", CAROL, "mic", "spam", "--json"], env, hubBinary);
    expect(r.code).toBe(0);
    const out = json(r);
    const warning = [...sb.state.warnings.values()].at(-1)!;
    expect(out).toMatchObject({
      action: "warn",
      status: "delivered",
      player: { id: CAROL },
      reason: "mic spam",
      warning_id: warning.id,
      auto_banned: false,
    });
    expect(warning).toMatchObject({ user_id: USERS.carol, reason: "mic spam", serverbundle_id: sb.bundleId });

    sb.state.warningPolicy = { ...sb.state.warningPolicy, autoBan: { threshold: 1, lengthMinutes: 60 } };
    try {
      const banned = await run(["warn", "76561198000000321", "one", "too", "many"], env);
      expect(banned.code).toBe(0);
      expect(banned.stdout).toBe(
        "76561198000000321 has been warned by Console. Reason: one too many\n" +
          "VyHub banned 76561198000000321 automatically: the warning reached its warning threshold.\n",
      );
    } finally {
      sb.state.warningPolicy = { ...sb.state.warningPolicy, autoBan: null };
    }
  });

  test("warn: refused with --as of a user without the permission (1), queued offline (6), empty reason (2)", async () => {
    const env = fresh();
    expect(oneLine(await run(["warn", ALICE, "x", "--as", BOB], env), 1)).toBe(
      `error: VyHub refused the warning for ${ALICE}: POST /warning/: 403 Missing properties: warning_edit (missing_properties)`,
    );
    const down = await run(["warn", ALICE, "later", "--json"], { ...env, HUB_API_URL: DOWN });
    expect(down.code).toBe(6);
    expect(json(down)).toMatchObject({ action: "warn", status: "queued", auto_banned: null });
    expect(oneLine(await run(["warn", ALICE], env), 2)).toBe(
      "error: hub-agent warn needs <reason…>: hub-agent warn <player> <reason…>",
    );
    expect(oneLine(await run(["warn", ALICE, ""], env), 2)).toBe(
      "error: the reason is empty: hub-agent warn <player> <reason…>",
    );
  });

  test("warns: newest first with creator and status; unreachable is exit 4", async () => {
    const env = fresh();
    await run(["warn", ALICE, "first", "--as", CAROL], env);
    await run(["warn", ALICE, "second"], env);
    const r = await run(["warns", ALICE, "--json"], env, hubBinary);
    expect(r.code).toBe(0);
    const out = json(r);
    expect(out.total).toBeGreaterThanOrEqual(3);
    expect(out.warnings.slice(0, 2)).toMatchObject([
      { reason: "second", creator: null, active: true, disabled: false, serverbundle_id: sb.bundleId },
      { reason: "first", creator: { user_id: USERS.carol, name: "Carol" }, active: true },
    ]);
    const text = (await run(["warns", ALICE], env)).stdout.split("\n");
    expect(text[0]).toBe(`Warnings of ${ALICE} (${out.total}):`);
    expect(text[1]).toMatch(/^\[active\] \d{4}-\d\d-\d\d \d\d:\d\d UTC: second \(by Console\)$/);
    expect((await run(["warns", "76561198000000888"], env)).stdout).toBe("76561198000000888 has no warnings.\n");
    const down = await run(["warns", ALICE], { ...env, HUB_API_URL: DOWN });
    expect(oneLine(down, 4)).toStartWith(`error: Could not read the warnings of ${ALICE}: GET /user/${ALICE}`);
  });
});

describe("queue", () => {
  test("status lists every queue with what each entry is; drop removes one; unknown and ambiguous ids are refused", async () => {
    const env = fresh();
    await run(["warns", ALICE], env);
    const down = { ...env, HUB_API_URL: DOWN };
    // The warning first: its round records its attempt (a command moments after it does not ask the service again).
    const warn = json(await run(["warn", BOB, "b", "--as", CAROL, "--json"], down)).entry_id as string;
    const ban = json(await run(["ban", ALICE, "1h", "a", "--json"], down)).entry_id as string;
    const status = json(await run(["queue", "status", "--json"], env));
    expect(status.queues.map((q: { queue: string; entries: number }) => [q.queue, q.entries])).toEqual([
      ["ban", 1],
      ["unban", 0],
      ["warning", 1],
      ["reward_executed", 0],
      ["reward_failed", 0],
    ]);
    expect(status.queues[2].items[0]).toMatchObject({ id: warn, attempts: 1, data: { reason: "b" } });
    expect(status.queues[2].items[0].last_attempt_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect((await run(["queue", "status"], env)).stdout).toContain(`warn ${BOB} "b" by ${CAROL}`);

    expect(oneLine(await run(["queue", "drop", "nonexistent-id"], env), 5)).toBe(
      'error: no queued entry has the id "nonexistent-id": `hub-agent queue status` lists them',
    );
    const common = ban.slice(0, 8); // both ids start with the same milliseconds
    expect(oneLine(await run(["queue", "drop", common], env), 2)).toContain(`is part of 2 entries' ids`);

    const dropped = await run(["queue", "drop", warn, "--json"], env);
    expect(dropped.code).toBe(0);
    expect(json(dropped)).toMatchObject({ action: "drop", queue: "warning", entry_id: warn, data: { reason: "b" } });
    const human = await run(["queue", "drop", ban], env);
    expect(human.stdout).toBe(`dropped ${ban} from the ban queue: ban ${ALICE} 1h "a" by the console\n`);
    expect(await queued(env)).toEqual([0, 0, 0, 0, 0]);
    expect(oneLine(await run(["queue", "retry", ban], env), 5)).toContain("no queued entry");
  });

  test("dropping an unban says the queued bans it cancelled stay cancelled", async () => {
    const env = fresh();
    await run(["warns", ALICE], env); // the server record cached
    const down = { ...env, HUB_API_URL: DOWN };
    const ban = json(await run(["ban", ALICE, "1h", "meant", "--json"], down)).entry_id as string;
    const unban = json(await run(["unban", ALICE, "--json"], down)).entry_id as string;
    const dropped = await run(["queue", "drop", unban], env);
    expect(dropped.code).toBe(0);
    expect(dropped.stdout.split("\n")[1]).toBe(
      "the queued bans it cancelled when it was queued stay cancelled: `hub-agent ban` again any that was meant",
    );
    expect((await run(["queue", "status"], env)).stdout).toContain(ban.slice(0, 15));
  });

  test("dropping an uncertain entry says VyHub may have carried it out already", async () => {
    const env = { ...fresh(), HUB_API_TIMEOUT: "1" };
    sb.control.latency(2500, { method: "POST", path: "/ban/" }, { after: true });
    const banned = await run(["ban", CAROL, "1h", "lost answer", "--json"], env);
    sb.control.latency(0);
    expect(banned.code).toBe(6);
    const id = json(banned).entry_id as string;
    const dropped = await run(["queue", "drop", id], env);
    expect(dropped.code).toBe(0);
    expect(dropped.stdout).toBe(
      `dropped ${id} from the ban queue: ban ${CAROL} 1h "lost answer" by the console; its answer was lost, so VyHub may have carried it out already: check there\n`,
    );
    expect(bansOf(USERS.carol).filter((b) => b.reason === "lost answer")).toHaveLength(1);
  });

  test("retry of an uncertain entry whose attempt is dated an hour ahead (clock set back) waits one settle time, not an hour", async () => {
    const env = { ...fresh(), HUB_API_TIMEOUT: "1" };
    sb.control.latency(2500, { method: "POST", path: "/ban/" }, { after: true });
    const banned = await run(["ban", CAROL, "1h", "clock set back", "--json"], env);
    sb.control.latency(0);
    expect(banned.code).toBe(6);
    const id = json(banned).entry_id as string;
    const store = await openStore({ dir: env.HUB_STORAGE_DIR });
    await store.queue("ban", BanEntrySchema).update(id, { lastAttemptAt: Date.now() + 3_600_000 });
    // The first retry waits out one settle time and counts it from now; the second finds the ban.
    expect((await run(["queue", "retry", id], env)).code).toBe(6);
    const found = await run(["queue", "retry", id], env);
    expect(found.code).toBe(0);
    expect(
      sb.control
        .requests({ method: "POST", path: "/ban/" })
        .filter((r) => (r.body as { reason?: string })?.reason === "clock set back"),
    ).toHaveLength(1);
    expect(bansOf(USERS.carol).filter((b) => b.reason === "clock set back")).toHaveLength(1);
  }, 60_000);

  test("a reward report is dropped only with --force (the reward would run again)", async () => {
    const env = fresh();
    const store = await openStore({ dir: env.HUB_STORAGE_DIR });
    const reports = store.queue(EXECUTED_QUEUE, ExecutedRewardSchema);
    const entry = await reports.add({
      id: SEED_IDS.appliedRewards.alice_vip_command,
      user_id: USERS.alice,
      player_id: ALICE,
      player: "Alice",
      reward: "VIP command",
      packet: "VIP",
      issued: true,
    });
    const refused = await run(["queue", "drop", entry.id], env);
    expect(oneLine(refused, 2)).toContain("without the report VyHub keeps the reward open and it would run again");
    const retried = await run(["queue", "retry", entry.id, "--json"], env);
    expect(retried.code).toBe(0);
    expect(json(retried)).toMatchObject({ queue: "reward_executed", status: "delivered" });
    expect(sb.control.requests({ method: "PATCH", path: `/packet/reward/applied/${entry.data.id}` })).toHaveLength(1);

    const again = await reports.add(entry.data);
    expect((await run(["queue", "drop", again.id, "--force"], env)).code).toBe(0);
  });

  test("a reward report VyHub refuses (4xx) is kept marked refused, shown as such, and not counted as waiting", async () => {
    const env = fresh();
    const store = await openStore({ dir: env.HUB_STORAGE_DIR });
    const reports = store.queue(EXECUTED_QUEUE, ExecutedRewardSchema);
    const entry = await reports.add({
      id: SEED_IDS.appliedRewards.alice_vip_command,
      user_id: USERS.alice,
      player_id: ALICE,
      player: "Alice",
      reward: "VIP command",
      packet: "VIP",
      issued: true,
    });
    sb.control.failNext({ method: "PATCH", path: `/packet/reward/applied/${entry.data.id}` }, 1, 422);
    const retried = await run(["queue", "retry", entry.id], env);
    expect(oneLine(retried, 1)).toContain("kept as refused so it does not run again");
    expect(await reports.get(entry.id)).toMatchObject({ attempts: 1, data: { refused: true } });
    expect((await run(["queue", "status"], env)).stdout).toContain("VyHub refused the report, so it never runs again");
    // Cron's exit code is about what waits for the service; a refused report waits for the operator.
    expect((await run(["run", "--once"], env)).code).toBe(0);
    expect(await reports.size()).toBe(1);
  });

  test("a reward the game refused: shown with its refusals, not retried by hand, dropped without --force", async () => {
    const env = fresh();
    const store = await openStore({ dir: env.HUB_STORAGE_DIR });
    const failures = store.queue(FAILED_QUEUE, FailedRewardSchema);
    const data = {
      id: SEED_IDS.appliedRewards.alice_vip_command,
      user_id: USERS.alice,
      player: "Alice",
      reward: "VIP command",
      packet: "VIP",
    };
    const entry = (await failures.update((await failures.add(data)).id, {
      attempts: GIVE_UP_AFTER,
      lastError: "Error: Unknown command",
    }))!;
    const status = await run(["queue", "status"], env);
    expect(status.stdout).toMatch(
      new RegExp(`${entry.id}  \\d+ s old, 5 attempt\\(s\\), last error: Error: Unknown command`),
    );
    expect(status.stdout).toContain("refused by the game — given up: fix the command at VyHub");
    // Nothing waits for the service: cron's run --once is not told otherwise.
    expect((await run(["run", "--once"], env)).code).toBe(0);
    expect(oneLine(await run(["queue", "retry", entry.id], env), 2)).toContain(
      "is a reward the game refused: nothing to send",
    );
    const dropped = await run(["queue", "drop", entry.id], env);
    expect(dropped.code).toBe(0);
    expect(await queued(env)).toEqual([0, 0, 0, 0, 0]);
  });
});

// Runs last: every output above, of every command.
test("the API key never appears in any output", () => {
  expect(all.length).toBeGreaterThan(50);
  for (const r of all) {
    expect(r.stdout).not.toContain(KEY);
    expect(r.stderr).not.toContain(KEY);
  }
});
