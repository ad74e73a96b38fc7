// `queue drop` beside a delivery round of the same store, at the two moments that matter: before the round records
// its attempt (the drop wins: nothing is sent, and it says so) and while the request is on its way (the drop must
// say it may have been carried out). The round never writes a dropped entry back.
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApi } from "../../lib/api/client.ts";
import { type DropOutcome, dropEntry } from "../../lib/app/queue.ts";
import { storeDeps } from "../support/store-deps.ts";
import { startSandbox, type Sandbox } from "../../lib/sandbox/index.ts";
import { deliverQueues, queueBan, queueWarning, sanctionQueues } from "../../lib/sanctions/index.ts";
import { openStore } from "../../lib/store/index.ts";

let sb: Sandbox | undefined;
afterEach(() => sb?.stop());

async function setUp() {
  sb = await startSandbox();
  const dir = join(mkdtempSync(join(tmpdir(), "hub-drop-race-")), "store");
  const store = await openStore({ dir, fsync: false });
  const api = createApi({ url: sb.url, key: sb.key, retries: 0, timeoutMs: 2_000 });
  return { sb, store, api, deps: await storeDeps(dir) };
}

const target = (i: number) => ({
  identifier: String(76561198030000000n + BigInt(i)),
  type: "STEAM",
  user_id: null,
  name: "",
});

test("a drop while the round looks the player up: the ban is never sent, and the drop says unsent", async () => {
  const { sb, store, api, deps } = await setUp();
  const entry = await queueBan(store, {
    target: target(0),
    length: 600,
    reason: "r",
    creator: null,
    serverbundleId: sb.bundleId,
  });
  let dropped: Promise<DropOutcome> | undefined;
  // The round has read the entry and asks for the player's service user: the operator drops it now.
  sb.control.onHandled({ method: "GET", path: /^\/user\// }, () => void (dropped ??= dropEntry(deps, entry.id)));
  sb.control.latency(300, { method: "GET", path: /^\/user\// }, { after: true });
  const report = await deliverQueues({ api, store }, {});
  expect(await dropped).toMatchObject({ kind: "dropped", uncertain: false });
  expect(sb.control.requests({ method: "POST", path: "/ban/" })).toHaveLength(0);
  expect(report.outcomes).toEqual([]);
  expect(await sanctionQueues(store).ban.ids()).toEqual([]);
});

test("a drop while the ban or warning is on its way: said uncertain, and the round does not write it back", async () => {
  const { sb, store, api, deps } = await setUp();
  const ban = await queueBan(store, {
    target: target(1),
    length: 600,
    reason: "r",
    creator: null,
    serverbundleId: sb.bundleId,
  });
  const warning = await queueWarning(store, {
    target: target(2),
    reason: "w",
    creator: null,
    serverbundleId: sb.bundleId,
  });
  const drops: Promise<DropOutcome>[] = [];
  for (const [path, id] of [
    ["/ban/", ban.id],
    ["/warning/", warning.id],
  ] as const) {
    sb.control.onHandled({ method: "POST", path }, () => void drops.push(dropEntry(deps, id)));
    // The service has done it; the answer is lost (the client gives up after 2 s) or slow.
    sb.control.latency(2_500, { method: "POST", path }, { after: true });
  }
  await deliverQueues({ api, store }, {});
  for (const d of await Promise.all(drops)) expect(d).toMatchObject({ kind: "dropped", uncertain: true });
  expect(drops).toHaveLength(2);
  expect(await sanctionQueues(store).ban.ids()).toEqual([]);
  expect(await sanctionQueues(store).warning.ids()).toEqual([]);
});
