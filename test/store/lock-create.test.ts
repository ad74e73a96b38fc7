/** The lock file appears with its content: a holder killed while taking it never leaves an empty lock behind. */
import { expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawn } from "../support/procs.ts";

const STORE = join(import.meta.dir, "..", "..", "lib", "store", "index.ts");

test("a lock file is never seen empty while another process takes it over and over", async () => {
  const dir = mkdtempSync(join(tmpdir(), "lock-create-"));
  const script = `
    const { openStore } = await import(${JSON.stringify(STORE)});
    const store = await openStore({ dir: ${JSON.stringify(dir)}, fsync: false });
    for (let i = 0; i < 1500; i++) await store.withLock("job", async () => {});
  `;
  const child = spawn([process.execPath, "-e", script], { stdout: "ignore", stderr: "pipe" });
  const path = join(dir, "locks", "job.lock");
  let seen = 0;
  let empty = 0;
  while (child.exitCode === null) {
    for (let i = 0; i < 200; i++) {
      try {
        if (readFileSync(path, "utf8") === "") empty++;
        seen++;
      } catch {
        // not held right now
      }
    }
    await Bun.sleep(0);
  }
  expect(await child.exited).toBe(0);
  expect(seen).toBeGreaterThan(0);
  expect(empty).toBe(0);
  // No temp file of the taking is left behind.
  expect(await readdir(join(dir, "locks"))).toEqual([]);
}, 30_000);
