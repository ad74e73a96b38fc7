/**
 * A store only its owner can use (lib/store/secure.ts): created 0700 with files 0600; a store of ours open to others
 * is corrected, unless something in it belongs to another user (then refused, and left for the operator to look at);
 * another user's store is refused. Files of another owner are made with chown, so these need root (skipped
 * otherwise); test/reliability/store-owner.test.ts has a real second user planting an entry.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as v from "valibot";
import { checkStorage } from "../../lib/doctor.ts";
import { memoryLogger } from "../../lib/log.ts";
import { openStore, StoreUnsafeError } from "../../lib/store/index.ts";
import { secureStore } from "../../lib/store/secure.ts";
const { spawnSync } = Bun;

const root = process.getuid?.() === 0;
if (!root) console.warn("SKIPPED: the store owner tests chown files to another user: run them as root");
const OTHER = 65534; // nobody

const Ban = v.object({ player: v.string() });
let dir: string;
beforeEach(async () => {
  dir = join(await mkdtemp(join(tmpdir(), "store-secure-")), "store");
});
afterEach(async () => {
  await rm(join(dir, ".."), { recursive: true, force: true });
});
const mode = (path: string) => statSync(path).mode & 0o777;
const open = async () => {
  const log = memoryLogger();
  return { store: await openStore({ dir, logger: log, fsync: false }), log };
};

describe("a store only its owner can use", () => {
  test("created 0700, its folders 0700 and files 0600", async () => {
    const { store } = await open();
    const e = await store.queue("ban", Ban).add({ player: "p" });
    expect(mode(dir)).toBe(0o700);
    expect(mode(join(dir, "queue"))).toBe(0o700);
    expect(mode(join(dir, "queue", "ban"))).toBe(0o700);
    expect(mode(join(dir, "queue", "ban", e.id))).toBe(0o600);
  });

  test("ours and open to everyone, nothing of others in it: corrected, folders 0700, files 0600, said once", async () => {
    const { store } = await open();
    const e = await store.queue("ban", Ban).add({ player: "p" });
    for (const d of [dir, join(dir, "queue"), join(dir, "queue", "ban")]) chmodSync(d, 0o777);
    chmodSync(join(dir, "queue", "ban", e.id), 0o666);
    const again = await open();
    expect([mode(dir), mode(join(dir, "queue")), mode(join(dir, "queue", "ban"))]).toEqual([0o700, 0o700, 0o700]);
    expect(mode(join(dir, "queue", "ban", e.id))).toBe(0o600);
    expect(again.log.lines.map((l) => l.msg)).toContain(
      `the store ${dir} was open to other users (mode 0777): corrected to 0700, its files to 0600`,
    );
    expect((await again.store.queue("ban", Ban).list()).map((x) => x.id)).toEqual([e.id]);
    expect((await open()).log.lines).toEqual([]); // correct now: nothing more to say
  });

  test("ours and only readable by others: corrected to 0700 (nobody else could write in it)", async () => {
    mkdirSync(dir, { mode: 0o755 });
    chmodSync(dir, 0o755);
    await open();
    expect(mode(dir)).toBe(0o700);
  });

  test.skipIf(!root)("another user's store is refused with the path and the fix", async () => {
    mkdirSync(dir, { mode: 0o700 });
    chownSync(dir, OTHER, OTHER);
    const refused = await open().catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(StoreUnsafeError);
    expect((refused as Error).message).toBe(
      `the store ${dir} belongs to user nobody (uid ${OTHER}), not to user root (uid 0) running hub-agent: it is not used, since its owner could put bans in it; run hub-agent as its owner, or give it to this user (\`chown -R 0 ${dir}\`)`,
    );
  });

  test.skipIf(!root)(
    "open to everyone with another user's file in it: refused, naming the file, and left as found until fixed",
    async () => {
      const { store } = await open();
      await store.queue("ban", Ban).add({ player: "p" });
      for (const d of [dir, join(dir, "queue"), join(dir, "queue", "ban")]) chmodSync(d, 0o777);
      const planted = join(dir, "queue", "ban", "001795000000000-00000000-0000-4000-8000-000000000000");
      writeFileSync(planted, JSON.stringify({ v: 1 }));
      chownSync(planted, OTHER, OTHER);
      for (let i = 0; i < 2; i++) {
        const refused = await open().catch((e: unknown) => e);
        expect(refused).toBeInstanceOf(StoreUnsafeError);
        expect((refused as Error).message).toBe(
          `the store ${dir} is open to other users (mode 0777) and holds ${planted}, which user nobody (uid ${OTHER}) owns and may have planted: it is not used until you have looked; remove what is not hub-agent's (\`find ${dir} ! -user 0\` lists it), then \`chmod 700 ${dir}\``,
        );
        expect(mode(dir)).toBe(0o777); // not corrected: the next start checks again
      }
      await rm(planted);
      await open();
      expect(mode(dir)).toBe(0o700);
    },
  );

  test.skipIf(!root)(
    "another user writing in a folder of an open store just after it was looked through: nothing gets in",
    async () => {
      const { store } = await open();
      await store.queue("ban", Ban).add({ player: "p" });
      chmodSync(join(dir, ".."), 0o755); // the other user can reach the store
      for (const d of [dir, join(dir, "queue"), join(dir, "queue", "ban")]) chmodSync(d, 0o777);
      // As nobody (a real other user: root would pass any mode), a file in each folder the check has just listed.
      const tried: string[] = [];
      await secureStore(dir, {
        listed: (folder) => {
          const planted = join(folder, "planted");
          tried.push(planted);
          spawnSync([
            "setpriv",
            `--reuid=${OTHER}`,
            `--regid=${OTHER}`,
            "--clear-groups",
            "sh",
            "-c",
            'echo "{}" > "$0"',
            planted,
          ]);
        },
      });
      expect(tried).toContain(join(dir, "queue", "ban", "planted"));
      // Each folder was closed before it was listed: no write got through, and the store is 0700 now.
      expect(tried.filter((f) => existsSync(f))).toEqual([]);
      expect([mode(dir), mode(join(dir, "queue")), mode(join(dir, "queue", "ban"))]).toEqual([0o700, 0o700, 0o700]);
    },
  );

  describe("what a 0700 store follows inside it", () => {
    const refused = async () => {
      const e = await open().catch((x: unknown) => x);
      expect(e).toBeInstanceOf(StoreUnsafeError);
      return (e as Error).message;
    };

    test("a link in place of a queue's folder: refused, naming the link, where it goes and the fix", async () => {
      await (await open()).store.queue("unban", Ban).add({ player: "p" });
      const shared = join(dir, "..", "shared");
      mkdirSync(shared);
      symlinkSync(shared, join(dir, "queue", "ban"));
      const link = join(dir, "queue", "ban");
      expect(await refused()).toBe(
        `the store ${dir} holds ${link}, a link to ${shared}: it is not used, since another user could put bans in it; replace it with a folder of its own (\`rm ${link}\`); to keep the store on another disk, set storage.dir there`,
      );
    });

    test("a top-level link (cache, index, box…) is refused alike", async () => {
      await open();
      symlinkSync(join(dir, ".."), join(dir, "cache"));
      expect(await refused()).toContain(`holds ${join(dir, "cache")}, a link to `);
    });

    test("a folder others may write in: refused with the fix, even in a 0700 store", async () => {
      await (await open()).store.queue("ban", Ban).add({ player: "p" });
      chmodSync(join(dir, "queue"), 0o777);
      const folder = join(dir, "queue");
      expect(await refused()).toBe(
        `the store ${dir} holds ${folder}, which other users may write in (mode 0777): it is not used, since another user could put bans in it; remove what is not hub-agent's (\`find ${folder} ! -user 0\` lists it), then \`chown -R 0 ${folder}\` and \`chmod -R go-rwx ${folder}\``.replaceAll(
          " 0 ",
          ` ${process.getuid?.()} `,
        ),
      );
      chmodSync(folder, 0o700);
      await open();
    });

    test.skipIf(!root)("a folder another user owns: refused", async () => {
      await (await open()).store.queue("ban", Ban).add({ player: "p" });
      chownSync(join(dir, "queue", "ban"), OTHER, OTHER);
      expect(await refused()).toStartWith(
        `the store ${dir} holds ${join(dir, "queue", "ban")}, which user nobody (uid ${OTHER}) owns: it is not used`,
      );
    });

    test.skipIf(!root)("a record another user owns, deeper than the check looks: refused as it is read", async () => {
      const { store } = await open();
      const e = await store.queue("ban", Ban).add({ player: "p" });
      const file = join(dir, "queue", "ban", e.id);
      chownSync(file, OTHER, OTHER);
      const again = await open(); // the layout is ours: opened
      const read = await again.store
        .queue("ban", Ban)
        .list()
        .catch((x: unknown) => x);
      expect(read).toBeInstanceOf(StoreUnsafeError);
      expect((read as Error).message).toStartWith(
        `the store ${dir} holds ${file}, which user nobody (uid ${OTHER}) owns`,
      );
      expect(existsSync(file)).toBe(true); // not quarantined: left for the operator
    });
  });
});

test.skipIf(!root)(
  "doctor refuses another user's store as every command does (exit 8), writing nothing in it",
  async () => {
    mkdirSync(dir, { mode: 0o700 });
    chownSync(dir, OTHER, OTHER);
    const check = await checkStorage(dir);
    expect(check).toMatchObject({ name: "storage", status: "fail", kind: "store" });
    expect(check.message).toContain(`the store ${dir} belongs to user nobody (uid ${OTHER}), not to user root (uid 0)`);
    expect(readdirSync(dir)).toEqual([]); // not even a format file
  },
);
