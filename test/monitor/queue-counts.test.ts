/**
 * The queue depths of the status page and /metrics, kept as the queues change (lib/monitor/queue-counts.ts): they
 * agree with reading every entry of every queue, through this process's changes and another process's, and a
 * request after the first reads no entry and lists no queue, however long the queues are.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as v from "valibot";
import { ManualClock } from "../../lib/clock.ts";
import { QueueCounts, SYNC_MS } from "../../lib/monitor/queue-counts.ts";
import { storeFacts } from "../../lib/monitor/status.ts";
import { openStore, type Store } from "../../lib/store/index.ts";

let dir: string;
let clock: ManualClock;
let store: Store;
/** The same store opened a second time: what another process (`hub-agent ban`, `queue drop`) does through it. */
let other: Store;
let counts: QueueCounts;
/** Entries read and queues listed by the counts. */
let reads = 0;
let listings = 0;
/** Run after a queue's folder is listed, before the listing is used. */
let afterListing: (() => Promise<void>) | undefined;

/** `store` with the entry reads and listings the counts make counted. */
function counted(s: Store): Store {
  return {
    ...s,
    queue: (name, schema) => {
      const q = s.queue(name, schema);
      return {
        ...q,
        get: (id) => (reads++, q.get(id)),
        list: () => Promise.reject(new Error("the counts must not read a whole queue with list()")),
      };
    },
    queueIds: async (name) => {
      listings++;
      const ids = await s.queueIds(name);
      await afterListing?.();
      return ids;
    },
  };
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "queue-counts-"));
  clock = new ManualClock();
  store = await openStore({ dir, clock, fsync: false });
  other = await openStore({ dir, clock, fsync: false });
  reads = 0;
  listings = 0;
  afterListing = undefined;
  counts = new QueueCounts(counted(store), clock);
});
afterEach(() => {
  counts.close();
  rmSync(dir, { recursive: true, force: true });
});

const q = (s: Store, name: string) => s.queue(name, v.unknown());
/** What reading every entry of every queue says (`hub-agent status` from another shell does that). */
const truth = async () => (await storeFacts(store, clock.now())).queues;
const depths = () => counts.depths(clock.now());
/** The queue's folder as if nothing had changed there for a minute. */
const settle = (name: string) =>
  utimesSync(join(dir, "queue", name), new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));

async function bans(s: Store, n: number) {
  const out = [];
  for (let i = 0; i < n; i++) out.push(await q(s, "ban").add({ player: `p${i}` }));
  return out;
}

test("they agree with reading every entry, through this process's changes and another process's", async () => {
  const [first, second, third, dropped] = await bans(store, 4);
  await clock.advance(5_000);
  await q(store, "reward_executed").add({ reward: "a" });
  const reported = await q(store, "reward_executed").add({ reward: "b" });
  await q(store, "reward_executed").update(reported.id, { data: { reward: "b", reported: true } });
  expect(await depths()).toEqual(await truth());
  expect((await depths()).find((d) => d.queue === "ban")).toMatchObject({ entries: 4, waiting: 4, oldest_age_s: 5 });
  expect((await depths()).find((d) => d.queue === "reward_executed")).toMatchObject({ entries: 2, waiting: 1 });

  // This process: told by the store, counted at once (no time passes, so nothing is listed again).
  const listed = listings;
  await q(store, "ban").update(second!.id, { attempts: 1, uncertain: true });
  await q(store, "ban").remove(first!.id);
  await q(store, "ban").take(dropped!.id); // `queue drop` in this process
  await q(store, "warning").add({ player: "w" });
  expect(await depths()).toEqual(await truth());
  expect((await depths()).find((d) => d.queue === "ban")).toMatchObject({ entries: 2, uncertain: 1 });
  expect(listings).toBe(listed);

  // Another process: seen by the queue's stamp once SYNC_MS has passed; only the new entry is read.
  await q(other, "ban").remove(third!.id);
  await bans(other, 1);
  await q(other, "reward_failed").add({ reward: "c" });
  const read = reads;
  await clock.advance(SYNC_MS);
  expect(await depths()).toEqual(await truth());
  expect(reads - read).toBe(2);
});

test("after the first request, a request reads no entry and lists no queue, however long the queues are", async () => {
  await bans(other, 400);
  settle("ban");
  await depths();
  expect(reads).toBe(400);
  const listed = listings;
  for (let i = 0; i < 50; i++) {
    await clock.advance(SYNC_MS);
    await depths();
  }
  expect({ reads, listings: listings - listed }).toEqual({ reads: 400, listings: 0 });

  // One entry from another process: one listing of its queue, one read.
  await bans(other, 1);
  await clock.advance(SYNC_MS);
  expect((await depths()).find((d) => d.queue === "ban")?.entries).toBe(401);
  expect({ reads, listings: listings - listed }).toEqual({ reads: 401, listings: 1 });
});

test("changes this process makes while a queue is being listed are counted", async () => {
  const entries = await bans(other, 300);
  // The first request lists and reads the queue while entries are removed and added beside it.
  await Promise.all([
    depths(),
    (async () => {
      for (const e of entries.slice(0, 150)) await q(store, "ban").remove(e.id);
      await bans(store, 20);
    })(),
  ]);
  expect(await depths()).toEqual(await truth());
  expect((await depths()).find((d) => d.queue === "ban")?.entries).toBe(170);
});

test("entries this process writes or removes between a listing and its use are counted as they are", async () => {
  const queued = await bans(other, 50);
  afterListing = async () => {
    afterListing = undefined;
    await bans(store, 5); // not in the listing
    for (const e of queued.slice(0, 5)) await q(store, "ban").remove(e.id); // in the listing, gone
  };
  expect((await depths()).find((d) => d.queue === "ban")?.entries).toBe(50);
  expect(await depths()).toEqual(await truth());
});
