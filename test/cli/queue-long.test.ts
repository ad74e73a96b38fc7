/**
 * `queue status` over a long queue (the CLI run in this process): the oldest 20 entries of each queue and how many
 * more, read without reading the rest (lib/queues.ts); `--all` lists every one; `queue drop` finds an entry by a part
 * of its id among the names, reading only that one; the quarantine shows its newest 20 files (`--all`: every one).
 */
import { expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Sandbox } from "../../lib/sandbox/index.ts";
import { queueBan } from "../../lib/sanctions/index.ts";
import { openStore } from "../../lib/store/index.ts";
import { useSandbox } from "../support/sandbox.ts";
import { hub } from "./binary.ts";

let sb: Sandbox;
useSandbox((s) => (sb = s));

test("queue status: the oldest 20 of 50 bans and `… and 30 more`; --all every one; the rest is never read", async () => {
  const dir = mkdtempSync(join(tmpdir(), "hub-queue-long-"));
  const store = await openStore({ dir: join(dir, "store"), fsync: false });
  const ids: string[] = [];
  for (let i = 0; i < 50; i++) {
    const target = { identifier: String(76561198020000000n + BigInt(i)), type: "STEAM", user_id: null, name: "" };
    ids.push(
      (await queueBan(store, { target, length: 600, reason: `r${i}`, creator: null, serverbundleId: sb.bundleId })).id,
    );
  }
  // The newest entry unreadable: shown by count only, so status reads it not (and quarantines nothing).
  writeFileSync(join(dir, "store", "queue", "ban", ids[49]!), "{");
  const env = {
    HUB_API_URL: sb.url,
    HUB_API_KEY: sb.key,
    HUB_API_SERVER_ID: sb.serverId,
    HUB_GAME_BRIDGE: "sim",
    HUB_STORAGE_DIR: join(dir, "store"),
  };

  const text = await hub(["queue", "status"], { env, cwd: dir });
  expect(text.code).toBe(0);
  expect(text.stdout).toMatch(/^ban +50 entries, oldest \d+ s$/m);
  expect(text.stdout).toContain("  … and 30 more (`hub-agent queue status --all` lists every entry)");
  expect(text.stdout.split("\n").filter((l) => /^ {2}\d{15}-/.test(l))).toHaveLength(20);
  expect(text.stdout).toContain(`quarantine       none`);

  const json = JSON.parse((await hub(["queue", "status", "--json"], { env, cwd: dir })).stdout);
  const ban = json.queues.find((q: { queue: string }) => q.queue === "ban");
  expect([ban.entries, ban.items.length, ban.more]).toEqual([50, 20, 30]);
  expect(ban.items.map((i: { id: string }) => i.id)).toEqual(ids.slice(0, 20));

  const all = JSON.parse((await hub(["queue", "status", "--all", "--json"], { env, cwd: dir })).stdout);
  const every = all.queues.find((q: { queue: string }) => q.queue === "ban");
  expect([every.entries, every.items.length, every.more]).toEqual([49, 49, 0]); // --all read them: one quarantined
  expect(all.quarantine.count).toBe(1);

  const part = ids[30]!.slice(-12);
  const drop = await hub(["queue", "drop", part], { env, cwd: dir });
  expect(drop.code).toBe(0);
  expect(drop.stdout).toContain(`dropped ${ids[30]} from the ban queue`);
});

test("queue status: the newest 20 of 30 quarantined files and `… and 10 more`; --all every one", async () => {
  const dir = mkdtempSync(join(tmpdir(), "hub-queue-quarantine-"));
  const store = join(dir, "store");
  await openStore({ dir: store, fsync: false });
  // As the store names what it moves aside: `<key path>.<ms>` (lib/store/records.ts).
  mkdirSync(join(store, "corrupt", "queue", "ban"), { recursive: true, mode: 0o700 });
  const at = (i: number) => 1_796_000_000_000 + i * 1000;
  for (let i = 0; i < 30; i++)
    writeFileSync(join(store, "corrupt", "queue", "ban", `${String(i).padStart(15, "0")}-x.${at(i)}`), "{", {
      mode: 0o600,
    });
  const env = { HUB_API_URL: sb.url, HUB_API_KEY: sb.key, HUB_API_SERVER_ID: sb.serverId, HUB_STORAGE_DIR: store };
  const text = await hub(["queue", "status"], { env, cwd: dir });
  expect(text.code).toBe(0);
  const listed = text.stdout.split("\n").filter((l) => /^ {2}queue:ban:/.test(l));
  expect(listed).toHaveLength(20);
  expect(listed[0]).toContain(new Date(at(29)).toISOString()); // newest first
  expect(text.stdout).toContain("  … and 10 more (`hub-agent queue status --all` lists every file)");
  const json = JSON.parse((await hub(["queue", "status", "--json"], { env, cwd: dir })).stdout);
  expect([json.quarantine.count, json.quarantine.files.length]).toEqual([30, 20]);
  const all = JSON.parse((await hub(["queue", "status", "--all", "--json"], { env, cwd: dir })).stdout);
  expect([all.quarantine.count, all.quarantine.files.length]).toEqual([30, 30]);
});
