/**
 * A `once` reward flagged as possibly undelivered (hub-agent stopped between its claim and the game's answer), as
 * the operator meets it: `queue status`, `queue retry`, `queue drop`, and `run --once`'s exit code.
 */
import { expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EXECUTED_QUEUE, ExecutedRewardSchema } from "../../lib/rewards/executed.ts";
import { SEED_IDS, type Sandbox } from "../../lib/sandbox/index.ts";
import { openStore } from "../../lib/store/index.ts";
import { hub } from "./binary.ts";
import { useSandbox } from "../support/sandbox.ts";

let sb: Sandbox;
useSandbox((s) => (sb = s));

const VIP = SEED_IDS.appliedRewards.alice_vip_command;

test("flagged: listed until dropped; reported by `run` or `queue retry`, then dropped without --force", async () => {
  const env = {
    HUB_API_URL: sb.url,
    HUB_API_KEY: sb.key,
    HUB_API_SERVER_ID: sb.serverId,
    HUB_GAME_BRIDGE: "sim",
    HUB_STORAGE_DIR: mkdtempSync(join(tmpdir(), "hub-interrupted-")),
  };
  const reports = (await openStore({ dir: env.HUB_STORAGE_DIR })).queue(EXECUTED_QUEUE, ExecutedRewardSchema);
  const entry = await reports.add({
    id: VIP,
    user_id: SEED_IDS.users.alice,
    player_id: SEED_IDS.steamid64.alice,
    player: "Alice",
    reward: "VIP command",
    packet: "VIP",
    issued: false,
    interrupted: true,
  });

  const before = await hub(["queue", "status"], { env });
  expect(before.stdout).toContain(
    `reward VIP command (VIP) claimed for Alice, applied reward ${VIP} — may not have been delivered (hub-agent stopped while issuing it); it counts as executed (never run twice): check the game and give it by hand if it is missing; once reported (\`run\` sends it), \`hub-agent queue drop ${entry.id}\``,
  );
  // Not reported yet: dropping it now would make VyHub list the reward as open again.
  expect((await hub(["queue", "drop", entry.id], { env })).code).toBe(2);

  // `queue retry` reports it (run may not: the claimer is gone); it stays listed, no longer waiting.
  const retried = await hub(["queue", "retry", entry.id], { env });
  expect(retried.code).toBe(0);
  expect(sb.state.appliedRewards.get(VIP)?.executed_on).toEqual([sb.serverId]);
  expect(await reports.get(entry.id)).toMatchObject({ data: { interrupted: true, reported: true } });
  const after = await hub(["queue", "status", "--json"], { env });
  const executed = (
    JSON.parse(after.stdout) as { queues: { queue: string; entries: number; waiting: number }[] }
  ).queues.find((q) => q.queue === EXECUTED_QUEUE);
  expect(executed).toMatchObject({ entries: 1, waiting: 0 });
  expect((await hub(["queue", "status"], { env })).stdout).toContain(
    `, reported to VyHub; it counts as executed (never run twice): check the game and give it by hand if it is missing; then \`hub-agent queue drop ${entry.id}\``,
  );
  const again = await hub(["queue", "retry", entry.id], { env });
  expect(again.code).toBe(2);
  expect(again.stderr).toContain("is already reported; it is kept until you drop it");
  // Cron is not told that something waits for the service: it waits for the operator.
  expect((await hub(["run", "--once"], { env })).code).toBe(0);
  expect(await reports.size()).toBe(1);

  const dropped = await hub(["queue", "drop", entry.id], { env });
  expect(dropped.code).toBe(0);
  expect(await reports.size()).toBe(0);
}, 60_000);
