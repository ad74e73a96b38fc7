/** Warnings in `run` (rule 12): warn and warns in game and at the console, the auto-ban refresh, morph rules. */
import { afterEach, describe, expect, test } from "bun:test";
import { bans } from "../../lib/features/bans.ts";
import { online } from "../../lib/features/online.ts";
import { SEED_IDS } from "../../lib/sandbox/seed.ts";
import { sanctionQueues } from "../../lib/sanctions/index.ts";
import { harness, type Harness } from "./harness.ts";

const MIN = 60_000;
const ALICE = { id: SEED_IDS.steamid64.alice, name: "Alice" };
const CAROL = { id: SEED_IDS.steamid64.carol, name: "Carol" };
const DAVE = { id: "76561198000000004", name: "Dave" };

let h: Harness;
afterEach(() => h?.close());

const start = async () => {
  h = await harness({ features: [bans] });
  await h.agent.start();
  await h.idle();
};
const join = (p: { id: string; name: string }) => h.join(p);
const chat = (p: { id: string }, text: string) => h.chat(p, text);
const consoleLine = (line: string) => h.consoleLine(line);
const said = (p: { id: string }) => h.said(p);
const kicks = (p: { id: string }) => h.sim.actionsOf("kick").filter((k) => k.player === p.id);
const warningPosts = () => h.sb.control.requests({ method: "POST", path: "/warning/" });
const logged = (text: string) => h.logger.lines.some((l) => l.msg.includes(text));

describe("warn", () => {
  test("a player's warning: morph_user_id is theirs; both are told; the ban list is refreshed at once (auto-ban)", async () => {
    await start();
    h.sb.state.setWarningPolicy({ autoBan: { threshold: 1, lengthMinutes: 60 } });
    await join(CAROL);
    await join(DAVE);
    const fetchesBefore = h.sb.control.requests({ path: `/server/bundle/${h.sb.bundleId}/ban` }).length;
    await chat(CAROL, "!warn Dave spamming the chat");
    expect(warningPosts()).toHaveLength(1);
    expect(warningPosts()[0]!.query).toEqual([["morph_user_id", SEED_IDS.users.carol]]);
    expect(warningPosts()[0]!.body).toMatchObject({ serverbundle_id: h.sb.bundleId, reason: "spamming the chat" });
    expect(said(DAVE)).toEqual(["You have received a warning from Carol: spamming the chat"]);
    expect(said(CAROL)).toEqual([
      "Warning for Dave is queued and will be sent to VyHub. Reason: spamming the chat",
      "Dave has been warned by Carol. Reason: spamming the chat",
    ]);
    // The service banned at its threshold; the refresh right after the warning kicks, without waiting a minute.
    expect(h.sb.control.requests({ path: `/server/bundle/${h.sb.bundleId}/ban` }).length).toBe(fetchesBefore + 1);
    expect(kicks(DAVE)).toHaveLength(1);
    expect(kicks(DAVE)[0]!.text).toContain("Reason: Too many warnings (1)");
  });

  test("a console warning is sent without morph_user_id; the outcome is logged", async () => {
    await start();
    await join(DAVE);
    await consoleLine(`warn ${DAVE.id} camping`);
    expect(warningPosts()).toHaveLength(1);
    expect(warningPosts()[0]!.query).toEqual([]);
    expect(logged("Dave has been warned by Console. Reason: camping")).toBe(true);
    expect(said(DAVE)).toEqual(["You have received a warning from Console: camping"]);
  });

  test("refused (403): dropped and the creator told; the service down: queued and delivered later", async () => {
    await start();
    await join(ALICE);
    await join(DAVE);
    await chat(ALICE, "!warn Dave x");
    expect(said(ALICE)[1]).toMatch(/^VyHub refused the warning for Dave: POST \/warning\/: 403 /);
    expect(await sanctionQueues(h.store).warning.size()).toBe(0);

    await h.sb.control.down();
    await consoleLine(`warn ${DAVE.id} later`);
    expect(await sanctionQueues(h.store).warning.size()).toBe(1);
    await h.sb.control.up();
    await h.clock.advance(MIN);
    await h.idle();
    expect(await sanctionQueues(h.store).warning.size()).toBe(0);
    expect(
      warningPosts()
        .filter((p) => p.status === 200)
        .map((p) => (p.body as { reason: string }).reason),
    ).toEqual(["later"]);
  });
});

describe("warns", () => {
  test("lists a player's warnings to the invoker, newest first, active and inactive", async () => {
    await start();
    h.sb.state.addWarning({
      user_id: SEED_IDS.users.alice,
      serverbundle_id: h.sb.bundleId,
      reason: "Old one",
      created_on: Date.UTC(2026, 0, 2, 3, 4),
      disabled: true,
    });
    await join(CAROL);
    await join(ALICE);
    await chat(CAROL, "!warns alice");
    const lines = said(CAROL);
    expect(lines[0]).toBe("Warnings of Alice (2):");
    expect(lines[1]).toMatch(/^\[active\] .* UTC: Mic spam \(by Carol\)$/);
    expect(lines[2]).toBe("[inactive] 2026-01-02 03:04 UTC: Old one (by Console)");
  });

  test("a player without warning_show sees only their own; the console sees all", async () => {
    await start();
    await join(ALICE);
    await join(DAVE);
    await chat(DAVE, "!warns Alice");
    expect(said(DAVE)).toEqual(["You don't have permission to do that."]);
    await chat(DAVE, "!warns Dave");
    expect(said(DAVE)[1]).toBe("Dave has no warnings.");
    await consoleLine("warns Alice");
    expect(logged("Warnings of Alice (1):")).toBe(true);
  });

  test("a game without private messages (answers are public lines): another's warnings are not listed, one's own are", async () => {
    h = await harness({ features: [bans], sim: { privateMessage: false } });
    await h.agent.start();
    await h.idle();
    await join(CAROL);
    await join(ALICE);
    const reads = () => h.sb.control.requests({ method: "GET" }).filter((r) => r.path.includes("warning")).length;
    const before = reads();
    await chat(CAROL, "!warns alice"); // Carol may read them (an admin), but not in public
    expect(said(CAROL)).toEqual([
      "The warnings of Alice are not shown in this game's chat, where everyone would read them: see them on VyHub.",
    ]);
    expect(reads()).toBe(before);
    await chat(ALICE, "!warns Alice");
    expect(said(ALICE)[0]).toBe("Warnings of Alice (1):");
    await consoleLine("warns Alice");
    expect(logged("Warnings of Alice (1):")).toBe(true);
  });
});

describe("a nick of a player who left", () => {
  test("resolves from the list of recently seen players: the console unbans the player its ban just kicked", async () => {
    h = await harness({ features: [online, bans] });
    await h.agent.start();
    await h.idle();
    await join(DAVE);
    await consoleLine("ban Dave 30m cheating");
    expect(kicks(DAVE)).toHaveLength(1);
    expect(h.agent.players.has(DAVE.id)).toBe(false);

    await consoleLine("unban dave");
    const patches = h.sb.control.requests({ method: "PATCH" }).filter((r) => r.path.endsWith("/ban"));
    expect(patches).toHaveLength(1);
    expect(logged("No player matches")).toBe(false);
    // Never seen at all: still "no player matches".
    await consoleLine("unban Zelda");
    expect(logged("No player matches Zelda.")).toBe(true);
  });
});
