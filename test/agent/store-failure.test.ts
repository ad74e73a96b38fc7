/**
 * A chat or console `ban` in `run` when the store can't be written: the one who typed it is told that nothing was
 * queued (the store's own error line is logged once elsewhere), and nothing reaches the service or the game.
 */
import { afterEach, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bans } from "../../lib/features/bans.ts";
import { SEED_IDS } from "../../lib/sandbox/seed.ts";
import { harness, type Harness } from "./harness.ts";

const CAROL = { id: SEED_IDS.steamid64.carol, name: "Carol" };
const DAVE = { id: "76561198000000004", name: "Dave" };

let h: Harness;
afterEach(() => h?.close());

test("a chat or console ban the store can't write is answered 'nothing was queued'", async () => {
  h = await harness({ features: [bans] });
  await h.agent.start();
  h.sim.join(CAROL);
  h.sim.join(DAVE);
  await h.idle();
  // A file where the queues' directory belongs: every queue write fails (ENOTDIR), as on a broken disk.
  const queues = join(h.config.storage.dir, "queue");
  rmSync(queues, { recursive: true, force: true });
  writeFileSync(queues, "");

  h.sim.chat(CAROL.id, "!ban dave 10 griefing");
  await h.idle();
  const toCarol = h.sim
    .actionsOf("message")
    .filter((m) => m.player === CAROL.id)
    .map((m) => m.text);
  expect(toCarol).toEqual(["Not done: the agent's storage can't be written (ENOTDIR); nothing was queued."]);
  expect(h.logger.lines.some((l) => l.level === "warn" && l.msg.startsWith("ban by Carol not done:"))).toBe(true);
  expect(h.logger.lines.find((l) => l.msg.startsWith("ban by Carol"))?.msg).toContain(join(queues, "ban"));

  h.sim.operatorInput("ban dave 10 griefing");
  await h.idle();
  expect(h.logger.lines.filter((l) => l.tag === "console" && l.msg.includes("nothing was queued"))).toHaveLength(1);
  expect(h.sb.control.requests({ method: "POST", path: "/ban/" })).toHaveLength(0);
  expect(h.sim.actionsOf("kick")).toHaveLength(0);
});
