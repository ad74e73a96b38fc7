/**
 * Answers that must not lose or duplicate queued work: a rotated API key (401) keeps every entry; a write the
 * service took but answered unreadably (2xx, bad body) counts as delivered and is never sent again.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApi, type Api } from "../../lib/api/client.ts";
import { guardCredentials } from "../../lib/api/credentials.ts";
import { ManualClock } from "../../lib/clock.ts";
import { startSandbox, type Sandbox } from "../../lib/sandbox/index.ts";
import { deliverQueues, queueBan, queueWarning, sanctionQueues, type PlayerRef } from "../../lib/sanctions/index.ts";
import { openStore, type Store } from "../../lib/store/index.ts";

const DAVE: PlayerRef = { identifier: "76561198000000004", type: "STEAM", user_id: null, name: "Dave" };
const ERIN: PlayerRef = { identifier: "76561198000000005", type: "STEAM", user_id: null, name: "Erin" };
let sb: Sandbox;
let api: Api;
let store: Store;
beforeEach(async () => {
  sb = await startSandbox();
  api = createApi({ url: sb.url, key: sb.key, retries: 0, timeoutMs: 2000 });
  store = await openStore({ dir: mkdtempSync(join(tmpdir(), "hub-agent-delivery-")) });
});
afterEach(() => sb.stop());

const queued = async () => ({
  ban: await sanctionQueues(store).ban.size(),
  warning: await sanctionQueues(store).warning.size(),
});
const ban = () =>
  queueBan(store, { target: DAVE, length: 600, reason: "cheating", creator: null, serverbundleId: sb.bundleId });

test("401 (a rotated key) and 408 keep every queued entry for the next round", async () => {
  await ban();
  await queueWarning(store, { target: ERIN, reason: "spam", creator: null, serverbundleId: sb.bundleId });
  sb.control.failNext({ method: "POST", path: "/ban/" }, 1, 401, { detail: "Invalid token" });
  sb.control.failNext({ method: "POST", path: "/warning/" }, 1, 408);
  const first = await deliverQueues({ api, store });
  expect(first.outcomes.map((o) => o.result)).toEqual(["kept", "kept"]);
  expect(await queued()).toEqual({ ban: 1, warning: 1 });
  const second = await deliverQueues({ api, store });
  expect(second.outcomes.map((o) => o.result)).toEqual(["delivered", "delivered"]);
  expect(await queued()).toEqual({ ban: 0, warning: 0 });
});

test("a key refused on the server's record (403): a ban held back by the guard stays queued, sent once the key works", async () => {
  await ban();
  const guarded = guardCredentials(api, { clock: new ManualClock(), baseMs: 60_000, maxMs: 60_000 }).api;
  sb.control.failNext({ path: /^\/server\/[^/]+$/ }, 1, 403, { detail: "Forbidden" });
  expect((await guarded.getServer(sb.serverId)).ok).toBe(false);
  const held = await deliverQueues({ api: guarded, store });
  expect(held.outcomes.map((o) => o.result)).toEqual(["kept"]);
  expect(await queued()).toEqual({ ban: 1, warning: 0 });
  expect(sb.control.requests({ method: "POST", path: "/ban/" })).toHaveLength(0);
  const later = await deliverQueues({ api, store });
  expect(later.outcomes.map((o) => o.result)).toEqual(["delivered"]);
});

test("a 2xx with an unreadable body is delivered: the ban is not sent a second time", async () => {
  await ban();
  sb.control.failNext({ method: "POST", path: "/ban/" }, 1, 200, "<html>proxy says ok</html>");
  const first = await deliverQueues({ api, store });
  expect(first.outcomes.map((o) => o.result)).toEqual(["delivered"]);
  await deliverQueues({ api, store });
  expect(sb.control.requests({ method: "POST", path: "/ban/" })).toHaveLength(1);
  expect(await queued()).toEqual({ ban: 0, warning: 0 });
});
