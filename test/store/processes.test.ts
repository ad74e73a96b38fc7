/** The store under real processes: SIGKILL mid-write, concurrent producers, and the cross-process lock. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { memoryLogger } from "../../lib/log.ts";
import { openStore } from "../../lib/store/index.ts";
import { Big, Num, Payload } from "./fixtures/schemas.ts";
import { spawn } from "../support/procs.ts";

const WRITER = join(import.meta.dir, "fixtures", "writer.ts");
let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "store-proc-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

function spawnWriter(...args: string[]) {
  return spawn([process.execPath, WRITER, ...args], { stdout: "pipe", stderr: "pipe" });
}

/** Resolves once the child printed `word`; rejects with its stderr if it exits first. */
async function waitFor(proc: ReturnType<typeof spawnWriter>, word: string): Promise<void> {
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let seen = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`writer exited before "${word}": ${await new Response(proc.stderr).text()}`);
    seen += decoder.decode(value);
    if (seen.includes(word)) break;
  }
  reader.releaseLock();
}

async function tempFiles(dir: string): Promise<string[]> {
  const all = await readdir(dir, { recursive: true });
  return all.filter((f) => f.includes(".tmp-"));
}

describe("store under SIGKILL", () => {
  test("60 kills mid-write leave every queue entry and the cache valid", async () => {
    const dir = join(root, "crash");
    const kills = 60;
    let entriesSeen = 0;
    let orphanTemps = 0;
    let cacheSeen = false;
    for (let i = 0; i < kills; i++) {
      const child = spawnWriter("crash", dir, "0", String(i));
      await waitFor(child, "started");
      await Bun.sleep(20 + Math.random() * 180);
      child.kill("SIGKILL");
      expect(await child.exited).not.toBe(0);

      const lines = memoryLogger();
      const store = await openStore({ dir, logger: lines });
      const queue = store.queue("crash", Payload);
      const entries = await queue.list();
      const cached = await store.cache("big", Big).get();
      // Every file in the queue read back valid: nothing quarantined, and no temp file was listed as a key.
      expect(store.quarantined()).toEqual([]);
      expect(lines.lines.filter((l) => l.level === "warn")).toEqual([]);
      expect(await queue.size()).toBe(entries.length);
      // Once a cache was written it is never lost or torn by a later kill: the old or the new one, whole.
      if (cacheSeen || cached) expect(cached?.data.count).toBeOneOf([20_000, 200_000]);
      cacheSeen ||= cached !== undefined;
      entriesSeen += entries.length;
      orphanTemps = (await tempFiles(dir)).length;
    }
    expect(entriesSeen).toBeGreaterThan(0);
    expect(cacheSeen).toBe(true);
    // Orphaned temp files are expected (killed between open and rename); they are simply never read.
    console.log(`store crash test: ${kills} kills, ${entriesSeen} entries checked, ${orphanTemps} orphan temp files`);
  }, 60_000);
});

describe("store with concurrent processes", () => {
  test("10 processes appending 100 entries each to one queue give exactly 1,000 distinct valid entries", async () => {
    const dir = join(root, "append");
    const children = Array.from({ length: 10 }, (_, w) => spawnWriter("append", dir, "100", String(w)));
    await Promise.all(children.map((c) => waitFor(c, "ready")));
    await writeFile(join(dir, "go"), "");
    expect(await Promise.all(children.map((c) => c.exited))).toEqual(Array(10).fill(0));

    const store = await openStore({ dir });
    const entries = await store.queue("shared", Payload).list();
    expect(entries).toHaveLength(1000);
    expect(new Set(entries.map((e) => e.id)).size).toBe(1000);
    expect(new Set(entries.map((e) => `${e.data.writer}:${e.data.seq}`)).size).toBe(1000);
    expect(store.quarantined()).toEqual([]);
    // Each writer's own entries come back in the order it added them.
    for (let w = 0; w < 10; w++) {
      const seqs = entries.filter((e) => e.data.writer === w).map((e) => e.data.seq);
      expect(seqs).toEqual(Array.from({ length: 100 }, (_, i) => i));
    }
  }, 30_000);

  test("4 processes × 50 increments under the lock give the exact totals", async () => {
    const dir = join(root, "count");
    const children = Array.from({ length: 4 }, (_, w) => spawnWriter("count", dir, "50", String(w)));
    await Promise.all(children.map((c) => waitFor(c, "ready")));
    await writeFile(join(dir, "go"), "");
    expect(await Promise.all(children.map((c) => c.exited))).toEqual(Array(4).fill(0));

    const store = await openStore({ dir });
    expect(await store.counters("hits").get("total")).toBe(200);
    expect((await store.cache("tally", Num).get())?.data.n).toBe(200);
    expect(await readdir(join(dir, "locks"))).toEqual([]);
  }, 30_000);
});
