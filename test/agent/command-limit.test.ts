/**
 * Players' chat commands are rate-limited per player (lib/command-limit.ts): 100 lines of `!ban` (or `!warn`,
 * `!unban`, `!warns`, `!dashboard`) from a player without rights cost a handful of requests to VyHub, not one or
 * three per line; the player is told once why the rest are refused, the log counts them; the allowance comes back
 * with time, per player; the console is not limited. Sandbox over loopback, SimGame, ManualClock.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { COMMAND_LIMIT } from "../../lib/command-limit.ts";
import { bans } from "../../lib/features/bans.ts";
import { dashboard } from "../../lib/features/dashboard.ts";
import { SEED_IDS } from "../../lib/sandbox/seed.ts";
import { sanctionQueues } from "../../lib/sanctions/index.ts";
import { harness, type Harness } from "./harness.ts";

/** Alice holds no ban permission at the service. */
const ALICE = { id: SEED_IDS.steamid64.alice, name: "Alice" };
const DAVE = { id: "76561198000000004", name: "Dave" };
const ERIN = { id: "76561198000000005", name: "Erin" };
const TOO_FAST = "You are typing commands too fast; try again in 10 s.";

let h: Harness;
afterEach(() => h?.close());

const start = async (env: Record<string, string> = {}) => {
  h = await harness({ features: [bans, dashboard], env });
  await h.agent.start();
  await h.idle();
  for (const p of [ALICE, DAVE, ERIN]) await h.join(p);
  h.sb.control.clearRequests();
};
/** `lines` chat lines at once (as fast as a script types them), then until every request they caused is done. */
const flood = async (p: { id: string }, text: string, lines = 100) => {
  for (let i = 0; i < lines; i++) h.sim.chat(p.id, text);
  await h.idle();
};
const requests = () => h.sb.control.requests().map((r) => `${r.method} ${r.path}`);
const warnings = () => h.logger.lines.filter((l) => l.level === "warn").map((l) => l.msg);

describe("chat commands are limited per player", () => {
  // Per 100 lines before the limit: ban 200 requests, warn 300, unban 200, warns 100, dashboard 100.
  const costs: [string, number][] = [
    ["!ban Erin 10 griefing", 2], // POST /ban/ (refused: no permission), then the ban list
    ["!warn Erin spam", 3], // the warnings listed, POST /warning/ (refused), the ban list
    ["!unban Erin", 2], // the bans listed, then the ban list
    ["!warns Erin", 1], // Alice's groups (may she read another's warnings?)
    ["!dashboard", 1], // the web address
  ];
  for (const [line, perCommand] of costs)
    test(`100 \`${line}\` lines cost ${COMMAND_LIMIT.burst} commands' requests (${COMMAND_LIMIT.burst * perCommand}), not 100's`, async () => {
      await start();
      await flood(ALICE, line);
      console.log(`100 × "${line}": ${requests().length} requests to VyHub (${perCommand * 100} without the limit)`);
      expect(requests()).toHaveLength(COMMAND_LIMIT.burst * perCommand);
      expect(h.said(ALICE).filter((m) => m === TOO_FAST)).toHaveLength(1);
      expect(h.said(ALICE).length).toBeLessThanOrEqual(2 * COMMAND_LIMIT.burst + 1);
    });

  test("the player is told once, the log has one line and then a count; the allowance comes back one every 10 s", async () => {
    await start();
    const requests = () => h.sb.control.requests({ path: "/general/frontend-url" });
    await flood(ALICE, "!dashboard");
    expect(h.said(ALICE).filter((m) => m === TOO_FAST)).toHaveLength(1);
    expect(warnings()).toEqual([
      `dashboard by Alice (${ALICE.id}) refused: more than 5 chat commands at once, then one every 10 s`,
    ]);
    await h.clock.advance(9_999);
    await flood(ALICE, "!dashboard", 1);
    expect(requests()).toHaveLength(5); // still refused, silently: told a moment ago
    await h.clock.advance(1);
    await flood(ALICE, "!dashboard", 3);
    expect(requests()).toHaveLength(6); // one more, then refused again, and told again
    expect(h.said(ALICE).filter((m) => m === TOO_FAST)).toHaveLength(2);
    await h.clock.advance(60_000);
    expect(warnings().at(-1)).toBe(
      `… 97 more chat commands refused as too fast from Alice (${ALICE.id}) in the last minute`,
    );
    // A minute later the whole allowance is back.
    await flood(ALICE, "!dashboard", 5);
    expect(requests()).toHaveLength(11);
  });

  test("one player's flood leaves another's commands alone; the console is not limited", async () => {
    await start();
    await flood(ALICE, "!dashboard");
    await flood(DAVE, "!dashboard", 5);
    expect(h.said(DAVE)).toHaveLength(5);
    expect(h.said(DAVE).every((m) => m.startsWith("Server dashboard: "))).toBe(true);
    for (let i = 0; i < 20; i++) h.sim.operatorInput(`ban 7656119800000${3000 + i} 10 console ${i}`);
    await h.idle();
    expect(await sanctionQueues(h.store).ban.list()).toHaveLength(0); // all delivered
    expect(h.sb.control.requests({ method: "POST", path: "/ban/" })).toHaveLength(20);
  });

  test("a rename in the same slot (a new id where the name is the id, as on Quake 3) brings no new allowance", async () => {
    await start();
    const requests = () => h.sb.control.requests({ path: "/general/frontend-url" });
    const mal = { id: "76561198000000011", name: "Mal", slot: "3" };
    await h.join(mal);
    await flood(mal, "!dashboard", 20);
    expect(requests()).toHaveLength(COMMAND_LIMIT.burst);
    // The game reports the rename as a leave and a join under the new name, in the same slot.
    let current: { id: string; name: string; slot: string } = mal;
    for (const [i, name] of ["Mal2", "Mal3", "Mal4"].entries()) {
      const renamed = { id: `765611980000000${21 + i}`, name, slot: "3" };
      h.sim.leave(current.id);
      await h.join(renamed);
      await flood(renamed, "!dashboard", 20);
      current = renamed;
    }
    expect(requests()).toHaveLength(COMMAND_LIMIT.burst);
    // Told once at the first refusal, not again with each new name.
    expect(h.said(mal).filter((m) => m === TOO_FAST)).toHaveLength(1);
    expect(h.said(current)).toEqual([]);
    // Another player in another slot is not held by it.
    await flood(DAVE, "!dashboard", 1);
    expect(requests()).toHaveLength(COMMAND_LIMIT.burst + 1);
  });

  test("in German", async () => {
    await start({ HUB_LANG: "de" });
    await flood(ALICE, "!dashboard", 6);
    expect(h.said(ALICE)).toContain("Du gibst Befehle zu schnell ein; versuche es in 10 s erneut.");
  });
});

describe("a 429 from VyHub on a player's commands", () => {
  test("pauses only the endpoint it refused: a console ban, the status and the reward round go on", async () => {
    h = await harness(); // every feature
    await h.agent.start();
    await h.idle();
    for (const p of [ALICE, DAVE]) await h.join(p);
    await h.idle();
    h.sb.control.clearRequests();
    // VyHub answers Alice's flood of `!dashboard` with 429 and a Retry-After of 10 minutes.
    h.sb.control.rateLimit(100, 600, { method: "GET", path: "/general/frontend-url" });
    await flood(ALICE, "!dashboard");
    const asked = h.sb.control.requests({ path: "/general/frontend-url" }).length;
    expect(asked).toBeLessThanOrEqual(COMMAND_LIMIT.burst); // in flight at once; the rest are refused here
    await h.consoleLine(`ban ${DAVE.id} 10 cheating`);
    expect(h.sim.actionsOf("kick").filter((k) => k.player === DAVE.id)).toHaveLength(1);
    await h.clock.advance(60_000);
    await h.idle();
    const sent = new Set(requests());
    console.log(`after the 429 on GET /general/frontend-url: ${[...sent].join(", ")}`);
    expect(h.sb.control.requests({ method: "POST", path: "/ban/" })).toHaveLength(1);
    expect(await sanctionQueues(h.store).ban.list()).toHaveLength(0); // delivered
    expect(sent).toContain(`PATCH /server/${h.sb.serverId}`); // the status
    expect(sent).toContain("GET /packet/reward/applied/user"); // the reward round
    expect(h.sb.control.requests({ path: "/general/frontend-url" })).toHaveLength(asked);
  });
});
