// The queue operations of lib/app/queue.ts in-process, as `hub-agent queue status` and `queue drop` use them: what
// each queue holds with a line per entry, and each outcome of a drop.
import { expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dropEntry, queueStatus } from "../../lib/app/queue.ts";
import { storeDeps } from "../support/store-deps.ts";
import { DELIVERY_LOCK, queueBan, sanctionQueues } from "../../lib/sanctions/index.ts";
import { openStore } from "../../lib/store/index.ts";

async function withBans(n: number) {
  const dir = join(mkdtempSync(join(tmpdir(), "hub-app-queue-")), "store");
  const store = await openStore({ dir, fsync: false });
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const target = { identifier: String(76561198020000000n + BigInt(i)), type: "STEAM", user_id: null, name: "" };
    const entry = await queueBan(store, { target, length: 600, reason: `r${i}`, creator: null, serverbundleId: "b" });
    ids.push(entry.id);
  }
  return { dir, ids, deps: await storeDeps(dir) };
}

test("queueStatus: every queue, the oldest `limit` entries with a line each when asked, and the quarantine", async () => {
  const { dir, ids, deps } = await withBans(3);
  const r = await queueStatus(deps, { limit: 2, describe: true });
  expect(r.queues.map((q) => q.queue)).toEqual(["ban", "unban", "warning", "reward_executed", "reward_failed"]);
  const ban = r.queues[0]!;
  expect([ban.entries, ban.items.length, ban.more]).toEqual([3, 2, 1]);
  expect(r.what[ids[0]!]).toBe('ban 76561198020000000 10m "r0" by the console');
  expect(r.quarantine).toEqual({ dir: join(dir, "corrupt"), count: 0, files: [] });
  expect((await queueStatus(deps)).what).toEqual({}); // no lines unless asked: --json reads the queues only

  writeFileSync(join(dir, "queue", "ban", ids[2]!), "{");
  const all = await queueStatus(deps);
  expect([all.queues[0]!.entries, all.quarantine.count]).toEqual([2, 1]);
  expect(all.quarantine.files[0]!.key).toContain(ids[2]!);
});

test("dropEntry: by a unique part of the id, never twice; no entry, or a part several ids share, is said", async () => {
  const { ids, deps } = await withBans(2);
  expect(await dropEntry(deps, "no-such-entry")).toEqual({ kind: "unfound", reason: "none", matches: [] });
  const shared = await dropEntry(deps, ids[0]!.slice(0, 8)); // the creation time's digits: both ids
  expect(shared).toMatchObject({ kind: "unfound", reason: "ambiguous" });
  expect(shared.kind === "unfound" && shared.matches.map((m) => m.id).sort()).toEqual([...ids].sort());

  const dropped = await dropEntry(deps, ids[1]!.slice(-12));
  expect(dropped).toMatchObject({ kind: "dropped", queue: "ban", uncertain: false });
  expect(dropped.kind === "dropped" && [dropped.entry.id, dropped.what]).toEqual([
    ids[1]!,
    'ban 76561198020000001 10m "r1" by the console',
  ]);
  expect(await dropEntry(deps, ids[1]!)).toMatchObject({ kind: "unfound", reason: "none" });
  expect((await queueStatus(deps)).queues[0]!.entries).toBe(1);
});

test("dropEntry: a round holding the delivery lock (a drain) holds no drop up; its attempt is said, or finds the entry gone", async () => {
  const { ids, deps } = await withBans(2);
  const store = await openStore({ dir: deps.config.storage.dir, fsync: false });
  const bans = sanctionQueues(store).ban;
  // `run`'s round holds the delivery lock for its whole drain; it has sent the first ban and lost the answer.
  await store.withLock(DELIVERY_LOCK, async () => {
    await bans.update(ids[0]!, { attempts: 1, lastAttemptAt: Date.now(), uncertain: true });
    const [first, second] = [await dropEntry(deps, ids[0]!), await dropEntry(deps, ids[1]!)];
    expect(first).toMatchObject({ kind: "dropped", queue: "ban", uncertain: true }); // "check at VyHub"
    expect(first.kind === "dropped" && first.entry.attempts).toBe(1);
    expect(second).toMatchObject({ kind: "dropped", queue: "ban", uncertain: false });
    // The round comes to the second ban: its attempt is recorded only on the entry it read (Attempt.record), which
    // is gone, so it sends nothing.
    const recorded = await bans.update(ids[1]!, { attempts: 1, uncertain: true }, (now) => now.attempts === 0);
    expect(recorded).toBeUndefined();
  });
  // Its index markers went with it: nothing of the player's is found by key any more.
  expect(await bans.byKey("id:76561198020000001")).toEqual([]);
  expect(readdirSync(join(deps.config.storage.dir, "index", "ban")).filter((d) => d !== "built")).toEqual([]);
});

test("dropEntry: an entry another live process holds past the lock's wait is busy, and stays queued", async () => {
  const { ids, deps } = await withBans(1);
  // A process that stalled holding the entry's own lock (alive, so the lock is not broken before it is stale).
  const holder = Bun.spawn(["sleep", "30"]);
  try {
    const dir = join(deps.config.storage.dir, "locks", "queue-ban");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${ids[0]}.lock`), JSON.stringify({ pid: holder.pid, at: Date.now(), token: "t" }));
    expect(await dropEntry(deps, ids[0]!)).toEqual({ kind: "busy" });
    expect((await queueStatus(deps)).queues[0]!.entries).toBe(1);
  } finally {
    holder.kill();
  }
}, 30_000);
