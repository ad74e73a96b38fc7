/** Unit tests for the store: queues, caches, counters, quarantine, key safety, temp-file cleanup. */
import { afterEach, beforeEach, describe, expect, spyOn, test } from "bun:test";
import { renameSync, writeFileSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, stat, truncate, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { createStorage } from "unstorage";
import * as v from "valibot";
import { ManualClock } from "../../lib/clock.ts";
import * as fsio from "../../lib/fsio.ts";
import { memoryLogger } from "../../lib/log.ts";
import atomicFs, { keyToPath } from "../../lib/store/driver.ts";
import { openStore } from "../../lib/store/index.ts";
import { cacheAge } from "../../lib/store/cache.ts";
import { createRecords, schemaCheck } from "../../lib/store/records.ts";

const Ban = v.object({ player: v.string(), reason: v.string() });
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "store-unit-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const open = (extra: { clock?: ManualClock } = {}) => {
  const log = memoryLogger();
  return openStore({ dir, logger: log, fsync: false, ...extra }).then((store) => ({ store, log }));
};
const entryFile = (name: string, id: string) => join(dir, "queue", name, id);

describe("queue", () => {
  test("add, list, get, update, remove and size round-trip through the files", async () => {
    const { store } = await open();
    const q = store.queue("ban", Ban);
    const a = await q.add({ player: "p1", reason: "spam" });
    const b = await q.add({ player: "p2", reason: "grief" });
    expect(a).toMatchObject({ attempts: 0, data: { player: "p1", reason: "spam" } });
    expect(await q.size()).toBe(2);
    expect(await q.get(a.id)).toEqual(a);

    const updated = await q.update(a.id, { attempts: 1, lastAttemptAt: 5, lastError: "503" });
    expect(updated).toEqual({ ...a, attempts: 1, lastAttemptAt: 5, lastError: "503" });
    // A fresh store (as another process would) sees the update, with the format version on disk.
    const again = (await open()).store.queue("ban", Ban);
    expect(await again.list()).toEqual([updated!, b]);
    expect(JSON.parse(await readFile(entryFile("ban", a.id), "utf8")).v).toBe(1);

    expect(await q.update(a.id, { lastError: undefined })).not.toHaveProperty("lastError");
    expect(await q.remove(a.id)).toBe(true);
    expect(await q.remove(a.id)).toBe(false);
    expect(await q.list()).toEqual([b]);
  });

  test("update of a removed entry returns undefined and does not bring it back", async () => {
    const { store } = await open();
    const q = store.queue("ban", Ban);
    const e = await q.add({ player: "p1", reason: "x" });
    // Removed by "another process": a second store on the same directory.
    expect(await (await open()).store.queue("ban", Ban).remove(e.id)).toBe(true);
    expect(await q.update(e.id, { attempts: 3 })).toBeUndefined();
    expect(await q.get(e.id)).toBeUndefined();
    expect(await q.size()).toBe(0);
  });

  test("ids sort by creation time, even many within one millisecond", async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const { store } = await open({ clock });
    const q = store.queue("ban", Ban);
    const added = [];
    for (let i = 0; i < 30; i++) {
      added.push(await q.add({ player: `p${i}`, reason: "r" }));
      if (i % 10 === 9) await clock.advance(1);
    }
    const ids = added.map((e) => e.id);
    expect(ids.every((id) => /^\d{15}-[0-9a-f-]{36}$/.test(id))).toBe(true);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(30);
    expect((await q.list()).map((e) => e.data.player)).toEqual(added.map((e) => e.data.player));
    expect(added[0]!.createdAt).toBe(Date.UTC(2026, 0, 1));
  });

  test("data that does not match the schema is refused on write, so it is never quarantined later", async () => {
    const { store } = await open();
    const q = store.queue("ban", Ban);
    await expect(q.add({ player: "p1" } as never)).rejects.toThrow(/invalid record/);
    expect(await q.size()).toBe(0);
  });

  test("names and ids that could escape the store are refused", async () => {
    const { store } = await open();
    expect(() => store.queue("..", Ban)).toThrow(/invalid queue name/);
    expect(() => store.queue("a/b", Ban)).toThrow(/invalid queue name/);
    expect(() => store.cache("../x", Ban)).toThrow(/invalid cache name/);
    await expect(store.withLock("../x", async () => 1)).rejects.toThrow(/invalid lock name/);
    const q = store.queue("ban", Ban);
    expect(await q.get("../../etc/passwd")).toBeUndefined();
    expect(await q.update("..", { attempts: 1 })).toBeUndefined();
    expect(await q.remove("..:..")).toBe(false);
  });
});

describe("atomic driver", () => {
  test("keys map to paths; .. segments, empty segments and temp-file names are rejected", async () => {
    expect(keyToPath("/s", "a:b:c")).toBe("/s/a/b/c");
    for (const key of ["..", "a:..:b", "..:x", "a::b", "a:.:b", "x.tmp-1-2", "a/../b", "nul\0"]) {
      expect(() => keyToPath("/s", key)).toThrow(/invalid store key/);
    }
    const storage = createStorage({ driver: atomicFs({ base: dir, fsync: false }) });
    // unstorage itself rejects `..` before the driver; the driver is the second line of defence.
    await expect(storage.setItem("a:..:b", "x")).rejects.toThrow();
    await expect(storage.setItem("a:x.tmp-1", "x")).rejects.toThrow(/temp-file marker/);
    await storage.setItem("a:b:c", { ok: 1 });
    expect(await storage.getKeys("a")).toEqual(["a:b:c"]);
    expect(await storage.getItem("a:b:c")).toEqual({ ok: 1 });
    expect(await stat(join(dir, "a", "b", "c")).then((s) => s.mode & 0o777)).toBe(0o600);
  });

  test("stale temp files are deleted at open; fresh ones (a live writer's) are kept and never listed", async () => {
    const { store } = await open();
    const q = store.queue("ban", Ban);
    const e = await q.add({ player: "p1", reason: "r" });
    const stale = `${entryFile("ban", e.id)}.tmp-999-aaaa`;
    const fresh = `${entryFile("ban", e.id)}.tmp-998-bbbb`;
    await writeFile(stale, '{"v":1,"id":"half');
    await writeFile(fresh, '{"v":1,"id":"half');
    const old = new Date(Date.now() - 10 * 60_000);
    await utimes(stale, old, old);

    const reopened = await open();
    const names = await readdir(join(dir, "queue", "ban"));
    expect(names).not.toContain(basename(stale));
    expect(names).toContain(basename(fresh));
    expect(reopened.log.lines.some((l) => l.msg.includes("stale temp files"))).toBe(true);
    const q2 = reopened.store.queue("ban", Ban);
    expect(await q2.size()).toBe(1);
    expect((await q2.list()).map((x) => x.id)).toEqual([e.id]);
    expect(reopened.store.quarantined()).toEqual([]);
  });

  test("the sweep at open lists the index's folders, not one folder per key: 1,000 players' bans, a few reads", async () => {
    const { store } = await open();
    const q = store.queue("ban", Ban, { keys: (b) => [`id:${b.player}`] });
    for (let i = 0; i < 1_000; i++) await q.add({ player: `p${i}`, reason: "r" });
    expect(await readdir(join(dir, "index", "ban"))).toHaveLength(1_001); // a folder per player, and `built`
    // The index's own files are swept as any other (markBuilt writes `built` through a temp file).
    const stale = join(dir, "index", "ban", "built.tmp-999-aaaa");
    await writeFile(stale, "half");
    const old = new Date(Date.now() - 10 * 60_000);
    await utimes(stale, old, old);
    const listings = spyOn(fsio, "readdir");
    try {
      await open();
      expect(listings.mock.calls.length).toBeLessThan(20);
    } finally {
      listings.mockRestore();
    }
    expect(await readdir(join(dir, "index", "ban"))).not.toContain("built.tmp-999-aaaa");
  });
});

describe("caches", () => {
  test("a value from the cache's own schema is written without a second validation; any other is checked", async () => {
    const { store } = await open();
    let validated = 0;
    const Counted = v.pipe(
      v.object({ id: v.string() }),
      v.check(() => ++validated > 0),
    );
    const cache = store.cache("counted", Counted);
    await cache.set({ id: "1" });
    expect(validated).toBe(1); // checked before it is written
    await expect(cache.set({ id: 2 } as never)).rejects.toThrow(/refusing to write invalid record cache:counted/);
    validated = 0;
    // The ban list as the service client has just validated it: not validated again on the way to disk.
    await cache.set({ id: "2" }, undefined, { checked: true });
    expect(validated).toBe(0);
    expect((await cache.get())?.data).toEqual({ id: "2" });
    expect(validated).toBe(1); // what is read is always checked
  });
});

describe("a cache kept when unchanged (sameKept: the ban list)", () => {
  const List = v.record(v.string(), v.array(v.object({ id: v.string() })));
  const file = () => join(dir, "cache", "bans");
  const held = async () => (await stat(file())).ino;

  test("the same value again is not written, only its time set; a changed one replaces the file", async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const { store } = await open({ clock });
    const bans = store.cache("bans", List, { sameKept: true });
    await bans.set({ a: [{ id: "1" }] });
    const first = await held();
    await clock.advance(60_000);
    await bans.set({ a: [{ id: "1" }] });
    expect(await held()).toBe(first); // no new file: nothing written
    expect((await stat(file())).mtimeMs).toBe(Date.UTC(2026, 0, 1) + 60_000); // status shows it confirmed now
    await bans.set({ a: [{ id: "1" }], b: [{ id: "2" }] });
    expect(await held()).not.toBe(first);
    expect((await bans.get())?.data).toEqual({ a: [{ id: "1" }], b: [{ id: "2" }] });
    // A cache object made again (banCache(store) per call) knows what the store last wrote.
    const again = await held();
    await store.cache("bans", List, { sameKept: true }).set({ a: [{ id: "1" }], b: [{ id: "2" }] });
    expect(await held()).toBe(again);
  });

  test("a file another process wrote, or removed, since is written again even with the value this one last wrote", async () => {
    const { store } = await open();
    const other = (await open()).store;
    const bans = store.cache("bans", List, { sameKept: true });
    await bans.set({ a: [{ id: "1" }] });
    await other.cache("bans", List, { sameKept: true }).set({ a: [] }); // a lift by a one-shot command
    await bans.set({ a: [{ id: "1" }] });
    expect((await bans.get())?.data).toEqual({ a: [{ id: "1" }] });
    await rm(file());
    await bans.set({ a: [{ id: "1" }] });
    expect((await bans.get())?.data).toEqual({ a: [{ id: "1" }] });
  });

  test("another process's write landing just after this one's is not taken for this one's file", async () => {
    const { store } = await open();
    const bans = store.cache("bans", List, { sameKept: true });
    // Another process (a command's fetch begun a moment earlier) renames its older list in just after this write's
    // rename, before this process could look at the file it made.
    const real = fsio.rename;
    let armed = true;
    const renames = spyOn(fsio, "rename").mockImplementation(async (from, to) => {
      await real(from, to);
      if (!armed || String(to) !== file()) return;
      armed = false;
      writeFileSync(`${file()}.other`, JSON.stringify({ v: 1, savedAt: 1, data: { a: [] } }));
      renameSync(`${file()}.other`, file());
    });
    try {
      await bans.set({ a: [{ id: "1" }] });
    } finally {
      renames.mockRestore();
    }
    expect((await bans.get())?.data).toEqual({ a: [] });
    // The service's list fetched again, unchanged: the file holds another list, so it is written.
    await bans.set({ a: [{ id: "1" }] });
    expect((await bans.get())?.data).toEqual({ a: [{ id: "1" }] });
  });

  test("the record is the one an ordinary write makes, and sets in parallel leave the last one's value", async () => {
    const { store } = await open();
    const bans = store.cache("bans", List, { sameKept: true });
    await bans.set({ a: [{ id: "1" }] }, 17);
    expect(JSON.parse(await readFile(file(), "utf8"))).toEqual({ v: 1, savedAt: 17, data: { a: [{ id: "1" }] } });
    await Promise.all([bans.set({ a: [{ id: "2" }] }), bans.set({ a: [{ id: "1" }] })]);
    expect((await bans.get())?.data).toEqual({ a: [{ id: "1" }] });
    await bans.set({ a: [{ id: "2" }] });
    expect((await bans.get())?.data).toEqual({ a: [{ id: "2" }] });
  });
});

describe("quarantine", () => {
  test("a cache kept without flushes (durable: false) that a power cut left torn reads as missing, not quarantined", async () => {
    const { store } = await open();
    const signal = store.cache("signal", v.object({ id: v.string() }), { durable: false });
    await signal.set({ id: "1" });
    expect((await signal.get())?.data).toEqual({ id: "1" });
    for (const torn of ["", '{"v":1,"savedAt":17']) {
      await writeFile(join(dir, "cache", "signal"), torn);
      expect(await signal.get()).toBeUndefined();
    }
    expect(store.quarantined()).toEqual([]);
    expect(await store.corrupt()).toEqual([]);
    await signal.set({ id: "2" });
    expect((await signal.get())?.data).toEqual({ id: "2" });
  });

  test("a corrupt entry is moved to corrupt/, reported once, and the rest of the queue stays readable", async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const { store, log } = await open({ clock });
    const q = store.queue("ban", Ban);
    const [a, b, c] = [
      await q.add({ player: "a", reason: "r" }),
      await q.add({ player: "b", reason: "r" }),
      await q.add({ player: "c", reason: "r" }),
    ];
    const torn = '{"v":1,"id":"' + b.id + '","createdAt":17';
    await writeFile(entryFile("ban", b.id), torn);

    expect(await q.list()).toEqual([a, c]);
    const [record, ...more] = store.quarantined();
    expect(more).toEqual([]);
    expect(record).toMatchObject({ key: `queue:ban:${b.id}`, at: clock.now() });
    expect(record!.reason).toMatch(/not valid JSON/);
    expect(record!.file).toBe(join(dir, "corrupt", "queue", "ban", `${b.id}.${clock.now()}`));
    expect(await readFile(record!.file, "utf8")).toBe(torn);
    expect(log.lines.filter((l) => l.level === "warn")).toHaveLength(1);
    expect(log.lines[0]).toMatchObject({ tag: "store", data: { key: `queue:ban:${b.id}` } });

    // Reported once: the next read no longer sees it.
    expect(await q.list()).toEqual([a, c]);
    expect(await q.size()).toBe(2);
    expect(store.quarantined()).toHaveLength(1);
  });

  test("an entry that parses but fails the schema is quarantined, not read", async () => {
    const { store } = await open();
    const q = store.queue("ban", Ban);
    const e = await q.add({ player: "a", reason: "r" });
    await writeFile(entryFile("ban", e.id), JSON.stringify({ ...e, v: 1, data: { player: 42 } }));
    expect(await q.get(e.id)).toBeUndefined();
    expect(store.quarantined()[0]?.reason).toMatch(/player/);
  });

  test("an empty file, an entry under the wrong id and a stray file are quarantined too", async () => {
    const { store } = await open();
    const q = store.queue("ban", Ban);
    const a = await q.add({ player: "a", reason: "r" });
    const b = await q.add({ player: "b", reason: "r" });
    await writeFile(entryFile("ban", a.id), "");
    await writeFile(entryFile("ban", b.id), JSON.stringify({ ...a, v: 1 }));
    await writeFile(entryFile("ban", "notes.txt"), "hello");
    expect(await q.list()).toEqual([]);
    expect(
      store
        .quarantined()
        .map((r) => r.key.split(":").pop())
        .sort(),
    ).toEqual([a.id, b.id, "notes.txt"]);
  });

  test("a corrupt cache reads as absent and is quarantined; set replaces it", async () => {
    const { store } = await open();
    const cache = store.cache("server", Ban);
    await mkdir(join(dir, "cache"), { recursive: true });
    await writeFile(join(dir, "cache", "server"), "null");
    expect(await cache.get()).toBeUndefined();
    expect(store.quarantined()).toHaveLength(1);
    await cache.set({ player: "p", reason: "r" }, 123);
    expect(await cache.get()).toEqual({ savedAt: 123, data: { player: "p", reason: "r" } });
  });

  test("a valid version written while a corrupt one is being quarantined is kept", async () => {
    const storage = createStorage({ driver: atomicFs({ base: dir, fsync: false }) });
    const log = memoryLogger();
    const records = createRecords(storage, dir, log, new ManualClock());
    const Rec = v.object({ n: v.number() });
    let raced = false;
    // The check runs between our read and the quarantine move; simulate another process's atomic write there.
    const base = schemaCheck(Rec);
    const racingCheck: typeof base = async (value) => {
      const result = await base(value);
      if (!result.ok && !raced) {
        raced = true;
        writeFileSync(join(dir, "k.new"), JSON.stringify({ n: 7 }));
        renameSync(join(dir, "k.new"), join(dir, "k"));
      }
      return result;
    };
    await writeFile(join(dir, "k"), JSON.stringify({ n: "bad" }));
    expect(await records.read("k", racingCheck)).toEqual({ n: 7 });
    expect(JSON.parse(await readFile(join(dir, "k"), "utf8"))).toEqual({ n: 7 });
    expect(records.quarantined).toEqual([]);
    expect(log.lines).toEqual([]);
  });
});

describe("counters", () => {
  test("get, add, all and remove, including keys that are not safe file names", async () => {
    const { store } = await open();
    const c = store.counters("playtime");
    expect(await c.get("u1")).toBe(0);
    expect(await c.add("u1", 60)).toBe(60);
    expect(await c.add("u1", -15)).toBe(45);
    expect(await c.add("../../x", 1)).toBe(1);
    expect(await c.add("__proto__", 2)).toBe(2);
    expect(await c.add("ünï/cödé 玩家", 3)).toBe(3);
    expect({ ...(await c.all()) }).toEqual({ u1: 45, "../../x": 1, ["__proto__"]: 2, "ünï/cödé 玩家": 3 });
    await c.remove("u1");
    expect(await c.get("u1")).toBe(0);
    await expect(c.add("u1", Number.NaN)).rejects.toThrow(/finite/);
    expect((await readdir(join(dir, "counters", "playtime"))).every((f) => /^[\w~-]+$/.test(f))).toBe(true);
  });

  test("100 concurrent adds in one process lose no update", async () => {
    const { store } = await open();
    const c = store.counters("hits");
    await Promise.all(Array.from({ length: 100 }, () => c.add("k", 1)));
    expect(await c.get("k")).toBe(100);
  });

  test("addMany: a batch of keys (one key twice sums), beside concurrent adds, loses no update", async () => {
    const { store } = await open();
    const c = store.counters("playtime");
    await c.add("a", 5);
    const keys = Array.from({ length: 200 }, (_, i) => `u${i}`);
    await Promise.all([
      c.addMany([...keys.map((k) => [k, 2] as const), ["a", 1], ["a", 1]]),
      ...keys.slice(0, 20).map((k) => c.add(k, 1)),
    ]);
    const all = await c.all();
    expect(all.a).toBe(7);
    expect(keys.map((k, i) => all[k] === (i < 20 ? 3 : 2)).every(Boolean)).toBe(true);
    await expect(
      c.addMany([
        ["x", 1],
        ["y", Number.POSITIVE_INFINITY],
      ]),
    ).rejects.toThrow(/finite/);
    expect(await c.get("x")).toBe(0); // nothing of a refused batch is written
  });
});

describe("bounds", () => {
  test("a 300 MB queue entry is quarantined by its size, unread; the rest of the queue stays readable", async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const { store, log } = await open({ clock });
    const q = store.queue("ban", Ban);
    const [a, b] = [await q.add({ player: "a", reason: "r" }), await q.add({ player: "b", reason: "r" })];
    const huge = entryFile("ban", b.id);
    await truncate(huge, 300_000_000); // sparse: costs no disk
    const rss = process.memoryUsage().rss;
    expect(await q.list()).toEqual([a]);
    expect(process.memoryUsage().rss - rss).toBeLessThan(100_000_000);
    const [record, ...more] = store.quarantined();
    expect(more).toEqual([]);
    expect(record).toMatchObject({
      key: `queue:ban:${b.id}`,
      reason: "300000000 bytes, larger than the 67108864-byte cap for a record; not read",
    });
    expect((await stat(record!.file)).size).toBe(300_000_000);
    expect(log.lines.filter((l) => l.level === "warn")).toHaveLength(1);
  });

  test("a record over the cap is refused on write, so it is never written only to be quarantined", async () => {
    const records = createRecords(
      createStorage({ driver: atomicFs({ base: dir, fsync: false }) }),
      dir,
      memoryLogger(),
      new ManualClock(),
      1024,
    );
    const check = schemaCheck(v.string());
    await expect(records.write("cache:x", "y".repeat(2000), check)).rejects.toThrow(
      "store: refusing to write record cache:x: 2002 bytes, larger than the 1024-byte cap",
    );
    await records.write("cache:x", "small", check);
    expect(await records.read("cache:x", check)).toBe("small");
  });
});

describe("cacheAge", () => {
  test("a timestamp in the future is stale (age unknown), not fresh", async () => {
    expect(cacheAge(1_000, 5_000)).toBe(4_000);
    expect(cacheAge(5_000, 5_000)).toBe(0);
    expect(cacheAge(5_001, 5_000)).toBe(Number.POSITIVE_INFINITY);
  });
});

describe("box", () => {
  test("ids: the notes by name, without temp files or other names, and none when the folder is missing", async () => {
    const { store } = await open();
    const box = store.box("notes", v.object({ n: v.number() }));
    expect(await box.ids()).toEqual([]);
    await box.put("b-2", { n: 2 });
    await box.put("a-1", { n: 1 });
    await writeFile(join(box.dir, "c-3.tmp-1-x"), "{}");
    await writeFile(join(box.dir, "not a note"), "{}");
    expect(await box.ids()).toEqual(["a-1", "b-2"]);
    expect((await box.list()).map((n) => n.id).sort()).toEqual(["a-1", "b-2"]);
  });
});
