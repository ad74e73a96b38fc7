/**
 * A store only its owner can use (lib/store/secure.ts): created 0700 with files 0600; a store of ours open to others
 * is corrected, unless something in it belongs to another user (then refused, and left for the operator to look at);
 * another user's store is refused. Files of another owner are made with chown, so these need root (skipped
 * otherwise); test/reliability/store-owner.test.ts has a real second user planting an entry.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { chmodSync, chownSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as v from "valibot";
import { memoryLogger } from "../../lib/log.ts";
import { spawn } from "../support/procs.ts";
import { openStore, StoreUnsafeError } from "../../lib/store/index.ts";

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
    "another user planting every few ms while an open store is checked: refused, or nothing of theirs in it",
    async () => {
      const { store } = await open();
      await store.queue("ban", Ban).add({ player: "p" });
      chmodSync(join(dir, ".."), 0o755); // the other user can reach the store
      const ban = join(dir, "queue", "ban");
      // As nobody, a file in the ban queue every few ms: some land while the store is checked.
      const planter = spawn(
        [
          "setpriv",
          `--reuid=${OTHER}`,
          `--regid=${OTHER}`,
          "--clear-groups",
          "sh",
          "-c",
          'i=0; while :; do echo "{}" > "$0/p$i" 2>/dev/null; i=$((i+1)); sleep 0.002; done',
          ban,
        ],
        { stdout: "ignore", stderr: "ignore" },
      );
      try {
        for (const d of [dir, join(dir, "queue"), ban]) chmodSync(d, 0o777);
        while (!readdirSync(ban).some((f) => f.startsWith("p"))) await Bun.sleep(5); // under way
        let used = 0;
        let refused = 0;
        for (let i = 0; i < 100; i++) {
          for (const d of [dir, join(dir, "queue"), ban]) chmodSync(d, 0o777);
          // Reopened to everyone, the folder is emptied of what was planted so far (as the operator would).
          for (const f of readdirSync(ban)) if (f.startsWith("p")) await rm(join(ban, f), { force: true });
          const opened = await open().then(
            () => true,
            (e: unknown) => {
              if (!(e instanceof StoreUnsafeError)) throw e;
              return false;
            },
          );
          if (!opened) {
            refused++;
            continue;
          }
          used++;
          // Used: then nothing another user wrote is in it, and nothing more can come.
          expect(readdirSync(ban).filter((f) => statSync(join(ban, f)).uid === OTHER)).toEqual([]);
          expect(mode(dir)).toBe(0o700);
        }
        expect(used).toBeGreaterThan(0);
        expect(refused).toBeGreaterThan(0); // the planter did plant
      } finally {
        planter.kill("SIGKILL");
        await planter.exited;
      }
    },
    60_000,
  );
});
