/**
 * A command's answer is best effort: when it can't be shown (a console that fails the message, a game without a
 * private message whose public line fails too), the command still does what it was asked, at once, and the failed
 * answer is logged. Sandbox over loopback, SimGame, ManualClock (time never moves here: "at once" means no queue
 * round had to come around).
 */
import { afterEach, expect, test } from "bun:test";
import { bans } from "../../lib/features/bans.ts";
import { SEED_IDS } from "../../lib/sandbox/seed.ts";
import { harness, type Harness } from "./harness.ts";

/** Carol is an admin at the service: her ban is accepted and enforced at once. */
const CAROL = { id: SEED_IDS.steamid64.carol, name: "Carol" };
const ERIN = { id: "76561198000000005", name: "Erin" };

let h: Harness;
afterEach(() => h?.close());

test("a ban typed in chat whose answer fails is still queued, sent at once, and the kick happens", async () => {
  h = await harness({ features: [bans] });
  await h.agent.start();
  await h.idle();
  await h.join(CAROL);
  await h.join(ERIN);
  h.sim.fail("message", 10, "the console has no message command");
  await h.chat(CAROL, "!ban Erin 10 griefing");
  const posts = h.sb.control.requests({ method: "POST", path: "/ban/" });
  expect(posts.map((r) => (r.body as { reason?: string }).reason)).toEqual(["griefing"]);
  expect(h.sim.actionsOf("kick").filter((k) => k.player === ERIN.id)).toHaveLength(1);
  expect(h.sim.isOnline(ERIN.id)).toBe(false);
  expect(h.said(CAROL)).toEqual([]); // nothing could be shown…
  const warned = h.logger.lines.filter((l) => l.level === "warn" && l.msg.startsWith("the answer to ban by Carol"));
  expect(warned.length).toBeGreaterThan(0); // …and the operator reads why
  expect(warned[0]!.msg).toContain("the console has no message command");
});
