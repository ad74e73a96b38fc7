/**
 * A restart next to a full server: every online player is looked up at once. Against a service that allows 60
 * requests a second, the paced lookups never meet a 429; unpaced, the same restart bursts into the limit.
 */
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent } from "../../lib/agent.ts";
import { createApi } from "../../lib/api/client.ts";
import { systemClock as clock } from "../../lib/clock.ts";
import { loadConfig } from "../../lib/app/config.ts";
import { GENERATED_ID_BASE, SimGame } from "../../lib/game/sim.ts";
import { memoryLogger } from "../../lib/log.ts";
import { loadMessages } from "../../lib/messages.ts";
import type { PaceOptions } from "../../lib/pace.ts";
import { startSandbox, type Sandbox } from "../../lib/sandbox/index.ts";
import { openStore } from "../../lib/store/index.ts";
import { until } from "../support/until.ts";

const PLAYERS = 120;
let sb: Sandbox | undefined;
let agent: Agent | undefined;
afterEach(async () => {
  await agent?.stop();
  await sb?.stop();
});

async function restart(pace: PaceOptions) {
  sb = await startSandbox();
  sb.control.limitRate(60);
  const dir = mkdtempSync(join(tmpdir(), "hub-pace-"));
  const env = { HUB_API_URL: sb.url, HUB_API_KEY: sb.key, HUB_API_SERVER_ID: sb.serverId, HUB_GAME_BRIDGE: "sim" };
  const loaded = await loadConfig({ env: { ...env, HUB_STORAGE_DIR: dir }, cwd: dir });
  if (!loaded.ok) throw new Error(loaded.problems.join("\n"));
  const logger = memoryLogger();
  const players = Array.from({ length: PLAYERS }, (_, i) => ({
    id: String(GENERATED_ID_BASE + BigInt(i)),
    name: `P${i}`,
  }));
  agent = new Agent({
    config: loaded.config,
    api: createApi({ url: sb.url, key: sb.key, clock }),
    store: await openStore({ dir, clock }),
    bridge: new SimGame({ clock, maxPlayers: PLAYERS, players }),
    clock,
    logger,
    messages: await loadMessages(loaded.config.lang, { logger }),
    jitter: 0,
    pace,
  });
  await agent.start();
  await until(
    () => players.every((p) => agent!.users.get(p.id)) || sb!.control.requests().some((r) => r.status === 429),
    "every player looked up",
    { timeoutMs: 60_000 },
  );
  return sb.control.requests();
}

test("paced below the service's limit: every player looked up, no 429", async () => {
  const requests = await restart({ perSecond: 40, burst: 10 });
  expect(requests.filter((r) => r.status === 429)).toEqual([]);
  expect(agent!.users.size).toBe(PLAYERS);
}, 90_000);

test("unpaced, the same restart meets the limit", async () => {
  const requests = await restart({ perSecond: 1_000_000, burst: 1_000_000 });
  expect(requests.some((r) => r.status === 429)).toBe(true);
}, 90_000);
