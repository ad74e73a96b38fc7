/**
 * A queue's index by key (lib/store/keyindex.ts): one player's entries found without reading the queue, and an index
 * that never holds less than the queue, whatever kills the writer (SIGKILL at random moments of adds, updates and
 * removes; kills at each file call are in test/reliability/syscall-kills.test.ts), and that is rebuilt for entries an
 * older version wrote without it.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm, utimes, writeFile, mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as v from "valibot";
import { memoryLogger } from "../../lib/log.ts";
import { bootId, segment } from "../../lib/store/keyindex.ts";
import { openStore } from "../../lib/store/index.ts";
import { spawn } from "../support/procs.ts";
import { indexKeys, Payload } from "./fixtures/schemas.ts";

const Ban = v.object({ player: v.string(), reason: v.string() });
const keys = (b: { player: string }) => [`player:${b.player}`];
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "store-index-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});
const open = () => openStore({ dir, logger: memoryLogger(), fsync: false });
const markerDir = async (queue: string, key: string) => join(dir, "index", queue, await segment(key));

/** Every entry file of `queue` whose marker is missing for one of its keys (read from the files, not the library). */
async function unmarked(queue: string, keysOf: (data: never) => string[]): Promise<string[]> {
  const at = join(dir, "queue", queue);
  if (!existsSync(at)) return [];
  const missing: string[] = [];
  for (const id of readdirSync(at).filter((f) => !f.includes(".tmp-"))) {
    const entry = JSON.parse(readFileSync(join(at, id), "utf8"));
    for (const key of keysOf(entry.data as never))
      if (!existsSync(join(await markerDir(queue, key), id))) missing.push(`${id} ${key}`);
  }
  return missing;
}

describe("byKey", () => {
  test("finds one key's entries, oldest first; a removed entry and its markers go", async () => {
    const store = await open();
    const q = store.queue("ban", Ban, { keys });
    const a1 = await q.add({ player: "a", reason: "1" });
    await q.add({ player: "b", reason: "x" });
    const a2 = await q.add({ player: "a", reason: "2" });
    expect((await q.byKey("player:a")).map((e) => e.id)).toEqual([a1.id, a2.id]);
    expect(await q.byKey("player:nobody")).toEqual([]);
    expect(await q.remove(a1.id)).toBe(true);
    expect((await q.byKey("player:a")).map((e) => e.id)).toEqual([a2.id]);
    expect(existsSync(join(await markerDir("ban", "player:a"), a1.id))).toBe(false);
    await q.remove(a2.id);
    // The key's folder goes with its last marker.
    expect(existsSync(await markerDir("ban", "player:a"))).toBe(false);
  });

  test("a marker without its entry (killed between the two removals) is skipped, and removed by verify when old", async () => {
    const store = await open();
    const q = store.queue("ban", Ban, { keys });
    const e = await q.add({ player: "a", reason: "1" });
    await rm(join(dir, "queue", "ban", e.id)); // the entry went, the marker stayed
    expect(await q.byKey("player:a")).toEqual([]);
    const marker = join(await markerDir("ban", "player:a"), e.id);
    expect(await q.verifyIndex()).toEqual({ added: 0, removed: 0 }); // young: may be an entry being written
    const old = new Date(Date.now() - 10 * 60_000);
    await utimes(marker, old, old);
    expect(await q.verifyIndex()).toEqual({ added: 0, removed: 1 });
    expect(existsSync(marker)).toBe(false);
  });

  test("entries an older version wrote without markers are indexed before the first lookup, once", async () => {
    const old = await open();
    const plain = old.queue("ban", Ban); // no index: as a version without it wrote them
    const a = await plain.add({ player: "a", reason: "1" });
    await plain.add({ player: "b", reason: "2" });
    const q = (await open()).queue("ban", Ban, { keys });
    expect((await q.byKey("player:a")).map((e) => e.id)).toEqual([a.id]);
    expect(existsSync(join(dir, "index", "ban", "built"))).toBe(true);
    expect(await unmarked("ban", keys)).toEqual([]);
    // Written by an old process after that: `run`'s verify at start adds it.
    const late = await plain.add({ player: "a", reason: "3" });
    expect((await q.byKey("player:a")).map((e) => e.id)).toEqual([a.id]);
    expect(await q.verifyIndex()).toEqual({ added: 1, removed: 0 });
    expect((await q.byKey("player:a")).map((e) => e.id)).toEqual([a.id, late.id]);
  });

  test("a marker a power cut took is found again in the next boot: `built` counts only in the boot it names", async () => {
    const q = (await open()).queue("ban", Ban, { keys });
    const e = await q.add({ player: "a", reason: "1" });
    const built = join(dir, "index", "ban", "built");
    expect(readFileSync(built, "utf8")).toBe(await bootId());
    // The power cut: the marker (written unflushed in that boot) is gone, the entry (flushed) is there.
    await rm(join(await markerDir("ban", "player:a"), e.id));
    await writeFile(built, "an-earlier-boot");
    const after = (await open()).queue("ban", Ban, { keys });
    expect((await after.byKey("player:a")).map((x) => x.id)).toEqual([e.id]);
    expect(await unmarked("ban", keys)).toEqual([]);
    expect(readFileSync(built, "utf8")).toBe(await bootId());
  });

  test("a marker planted for another key's entry is not taken for it (the entry's own keys decide)", async () => {
    const store = await open();
    const q = store.queue("ban", Ban, { keys });
    const b = await q.add({ player: "b", reason: "x" });
    const aDir = await markerDir("ban", "player:a");
    await mkdir(aDir, { recursive: true });
    await writeFile(join(aDir, b.id), "");
    expect(await q.byKey("player:a")).toEqual([]);
  });
});

describe("segment", () => {
  test("a key's folder is the first 32 hex digits of its SHA-256, as WebCrypto (Deno's way) computes it", async () => {
    for (const key of ["player:steam:76561198000000001", "user:6a1f…", ""]) {
      const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key)));
      const hex = Array.from(digest.subarray(0, 16), (b) => b.toString(16).padStart(2, "0")).join("");
      expect(await segment(key)).toBe(hex);
    }
    // Pinned: the folders already on disk are named so.
    expect(await segment("player:a")).toBe("4f95d7e874a981cb8a20896425dde8aa");
  });
});

describe("index under SIGKILL", () => {
  test("40 kills of a writer adding, updating and removing: every entry keeps its markers", async () => {
    const writer = join(import.meta.dir, "fixtures", "writer.ts");
    let entries = 0;
    for (let i = 0; i < 40; i++) {
      const child = spawn([process.execPath, writer, "index", dir, "0", String(i)], { stdout: "pipe", stderr: "pipe" });
      const reader = child.stdout.getReader();
      let seen = "";
      while (!seen.includes("started")) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`writer exited: ${await new Response(child.stderr).text()}`);
        seen += new TextDecoder().decode(value);
      }
      reader.releaseLock();
      await Bun.sleep(20 + Math.random() * 250);
      child.kill("SIGKILL");
      await child.exited;
      expect(await unmarked("indexed", indexKeys as (d: never) => string[])).toEqual([]);
      const at = join(dir, "queue", "indexed");
      if (existsSync(at)) entries = readdirSync(at).filter((f) => !f.includes(".tmp-")).length;
    }
    expect(entries).toBeGreaterThan(0);
    // And the library's view agrees: each key finds exactly the entries that have it.
    const q = (await open()).queue("indexed", Payload, { keys: indexKeys });
    const all = await q.list();
    for (const key of new Set(all.flatMap((e) => indexKeys(e.data))))
      expect((await q.byKey(key)).map((e) => e.id)).toEqual(
        all.filter((e) => indexKeys(e.data).includes(key)).map((e) => e.id),
      );
    console.log(`index kill test: 40 kills, ${entries} entries at the end, none without its markers`);
  }, 120_000);
});
