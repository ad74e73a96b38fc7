/** deliverQueues' `players` option: a one-shot command's round takes only its own player's entries. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApi } from "../../lib/api/client.ts";
import { SEED_IDS, startSandbox, type Sandbox } from "../../lib/sandbox/index.ts";
import {
  type PlayerRef,
  deliverQueues,
  playerKey,
  queueBan,
  queueUnban,
  sanctionQueues,
} from "../../lib/sanctions/index.ts";
import { openStore } from "../../lib/store/index.ts";

let sb: Sandbox;
beforeAll(async () => {
  sb = await startSandbox();
});
afterAll(() => sb.stop());

const player = (identifier: string, name: string): PlayerRef => ({ identifier, type: "STEAM", user_id: null, name });

test("only the named players' entries are sent, all of them in order; the rest stay queued", async () => {
  const api = createApi({ url: sb.url, key: sb.key, retries: 0, timeoutMs: 2000 });
  const store = await openStore({ dir: mkdtempSync(join(tmpdir(), "hub-deliver-players-")) });
  const bob = player(SEED_IDS.steamid64.bob, "Bob");
  const dave = player("76561198000000004", "Dave");
  const issue = { length: 600, reason: "x", creator: null, serverbundleId: sb.bundleId };
  await queueBan(store, { ...issue, target: dave });
  await queueBan(store, { ...issue, target: bob });
  await queueUnban(store, { target: bob, processor: null, serverbundleId: sb.bundleId });
  await queueBan(store, { ...issue, target: bob });

  const report = await deliverQueues({ api, store }, { players: new Set([playerKey(bob)]) });
  expect(report.outcomes.map((o) => [o.kind, o.result, o.entry.data.target.name])).toEqual([
    ["ban", "cancelled", "Bob"],
    ["unban", "delivered", "Bob"],
    ["ban", "delivered", "Bob"],
  ]);
  const left = await sanctionQueues(store).ban.list();
  expect(left.map((e) => e.data.target.name)).toEqual(["Dave"]);
});
