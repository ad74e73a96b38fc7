/**
 * `run`'s delivery rounds over a backlog (lib/sanctions/round.ts, maxPauseMs): a 429 pauses the round and the same
 * entry goes again once the service lets it (nothing reported, nothing skipped), also when the 429 met the user
 * lookup before it; a service that stops answering ends the round instead of every player being tried, and `run`
 * stopping ends it saying so; a player asked for meanwhile (urgent) is served before the rest; a round reads the
 * players it is limited to through the queues' index, not the whole queue.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApi, type Api } from "../../lib/api/client.ts";
import { startSandbox, type Sandbox } from "../../lib/sandbox/index.ts";
import {
  UNREACHABLE_STREAK,
  deliverQueues,
  playerKey,
  queueBan,
  sanctionQueues,
  type PlayerRef,
} from "../../lib/sanctions/index.ts";
import { openStore, type Store } from "../../lib/store/index.ts";

let sb: Sandbox;
let api: Api;
let store: Store;
beforeEach(async () => {
  sb = await startSandbox({ seed: "empty" });
  api = createApi({ url: sb.url, key: sb.key, retries: 0, timeoutMs: 2000 });
  store = await openStore({ dir: mkdtempSync(join(tmpdir(), "hub-agent-rounds-")), fsync: false });
});
afterEach(() => sb.stop());

const who = (i: number): PlayerRef => ({
  identifier: String(76561198010000000n + BigInt(i)),
  type: "STEAM",
  user_id: null,
  name: "",
});
const queue = async (n: number) => {
  for (let i = 0; i < n; i++)
    await queueBan(store, { target: who(i), length: 600, reason: `r${i}`, creator: null, serverbundleId: sb.bundleId });
};
const madeReasons = () => [...sb.state.bans.values()].map((b) => b.reason);

test("429s (Retry-After 1 s) pause the round: one round delivers all, each once, nothing reported kept", async () => {
  await queue(6);
  sb.control.rateLimit(2, 1, { method: "POST", path: "/ban/" });
  const pauses: number[] = [];
  const r = await deliverQueues({ api, store }, { maxPauseMs: 60_000, onPause: (e) => "ms" in e && pauses.push(e.ms) });
  expect(r.outcomes.map((o) => o.result)).toEqual(Array(6).fill("delivered"));
  expect(madeReasons().sort()).toEqual(["r0", "r1", "r2", "r3", "r4", "r5"]);
  expect(pauses.length).toBeGreaterThan(0);
  expect(await sanctionQueues(store).ban.size()).toBe(0);
});

test("a 429 on the user lookup before the ban: the lookup is asked again after the wait, not taken from the round's memory", async () => {
  await queue(2);
  sb.control.rateLimit(1, 1, { method: "POST", path: "/user/" });
  const r = await deliverQueues({ api, store }, { maxPauseMs: 60_000 });
  expect(r.outcomes.map((o) => o.result)).toEqual(["delivered", "delivered"]);
});

test("a wait longer than maxPauseMs ends the round: the rest stays queued untouched", async () => {
  await queue(5);
  sb.control.rateLimit(100, 120, { method: "POST", path: "/ban/" });
  const ended: string[] = [];
  const r = await deliverQueues(
    { api, store },
    { maxPauseMs: 60_000, onPause: (e) => "ended" in e && ended.push(e.ended) },
  );
  expect(r.outcomes).toEqual([]);
  expect(ended[0]).toBe("the service asks to wait 120 s (429)");
  const left = await sanctionQueues(store).ban.list();
  expect(left).toHaveLength(5);
  expect(left.filter((e) => e.uncertain)).toEqual([]); // a 429 proves nothing was done
});

test("without maxPauseMs (a one-shot command) a 429 keeps the entry, as before", async () => {
  await queue(1);
  sb.control.rateLimit(1, 1, { method: "POST", path: "/ban/" });
  const r = await deliverQueues({ api, store });
  expect(r.outcomes.map((o) => o.result)).toEqual(["kept"]);
});

test(`the service gone: the round ends after ${UNREACHABLE_STREAK} unanswered requests instead of trying all 40 players`, async () => {
  await queue(40);
  await sb.control.down();
  const ended: string[] = [];
  const r = await deliverQueues(
    { api, store },
    { maxPauseMs: 60_000, onPause: (e) => "ended" in e && ended.push(e.ended) },
  );
  expect(ended[0]).toStartWith(`the service did not answer ${UNREACHABLE_STREAK} times in a row`);
  expect(r.outcomes.length).toBeLessThanOrEqual(UNREACHABLE_STREAK + 4);
  const untouched = (await sanctionQueues(store).ban.list()).filter((e) => e.attempts === 0);
  expect(untouched.length).toBeGreaterThanOrEqual(40 - UNREACHABLE_STREAK - 4);
});

test("run stopping ends the round and says why, as any early end: the rest stays queued", async () => {
  await queue(40);
  sb.control.latency(20, { method: "POST", path: "/ban/" });
  const stop = new AbortController();
  const ended: string[] = [];
  const made = deliverQueues(
    { api, store },
    { maxPauseMs: 60_000, signal: stop.signal, onPause: (e) => "ended" in e && ended.push(e.ended) },
  );
  while (sb.state.bans.size < 4) await Bun.sleep(5);
  stop.abort();
  const r = await made;
  // Told once, as a round that ends early for any reason is (a handed-over command is answered with it).
  expect(ended).toEqual(["stopping"]);
  expect(r.outcomes.length).toBeLessThan(40);
  expect(await sanctionQueues(store).ban.size()).toBe(40 - r.outcomes.length);
});

test("an urgent player is served before the round's next players, whatever their place in the queue", async () => {
  await queue(12);
  const late = who(99);
  await queueBan(store, { target: late, length: 600, reason: "urgent", creator: null, serverbundleId: sb.bundleId });
  let asked = false;
  await deliverQueues(
    { api, store },
    {
      concurrency: 1,
      urgent: () => {
        if (asked || sb.state.bans.size < 2) return [];
        asked = true;
        return [playerKey(late)];
      },
    },
  );
  // After the two already made, not 13th. Served beside the players in progress: when the round's poll (not the
  // worker) takes it, the worker may start the third player's request meanwhile, which can land first.
  expect([2, 3]).toContain(madeReasons().indexOf("urgent"));
  expect(madeReasons()).toHaveLength(13);
});

test("a round limited to one player reads that player's entries only, through the index", async () => {
  await queue(30);
  const q = sanctionQueues(store).ban;
  const target = who(7);
  await q.byKey("id:nobody"); // the index built once, as the first command after an upgrade does
  // Every other entry made unreadable: a round that read them would quarantine them.
  for (const e of await q.list())
    if (e.data.target.identifier !== target.identifier) writeFileSync(join(store.dir, "queue", "ban", e.id), "{}");
  const r = await deliverQueues({ api, store }, { players: new Set([playerKey(target)]) });
  expect(r.outcomes.map((o) => [o.result, o.kind === "ban" && o.entry.data.reason])).toEqual([["delivered", "r7"]]);
  expect(store.quarantined()).toEqual([]);
});

test("a round of a few players reads their entries while it waits for the lock, and sends only once it has it", async () => {
  await queue(2);
  const q = sanctionQueues(store).ban;
  const target = who(1);
  const byKey = q.byKey;
  let readAt: number | undefined;
  q.byKey = (key) => ((readAt ??= performance.now()), byKey(key));
  // Another process's round holds the lock for 300 ms.
  let released: number | undefined;
  const held = store.withLock("sanctions", async () => {
    await Bun.sleep(300);
    released = performance.now();
  });
  await Bun.sleep(20);
  const sent: number[] = [];
  sb.control.onHandled({ method: "POST", path: "/ban/" }, () => void sent.push(performance.now()));
  try {
    const r = await deliverQueues({ api, store }, { players: new Set([playerKey(target)]) });
    expect(r.outcomes.map((o) => [o.result, o.kind === "ban" && o.entry.data.reason])).toEqual([["delivered", "r1"]]);
  } finally {
    q.byKey = byKey;
  }
  await held;
  expect(readAt!).toBeLessThan(released!); // read while the other round still held the lock…
  expect(sent.length).toBe(1);
  expect(sent[0]!).toBeGreaterThan(released!); // …and sent only after it let go
});
