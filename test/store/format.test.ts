/**
 * The store across upgrades (lib/store/format.ts): a store 0.1.0 wrote (test/fixtures/store-0.1.0, frozen as that
 * release wrote it) is read whole by this build and marked; a store a newer build marked is refused with one line,
 * nothing in it read or written; a new store is marked with this build's format.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as v from "valibot";
import pkg from "../../package.json" with { type: "json" };
import { openStore, STORE_FORMAT, StoreFormatError } from "../../lib/store/index.ts";
import { holdInstance } from "../../lib/store/instance.ts";
import { sanctionQueues } from "../../lib/sanctions/schemas.ts";
import { copyFixture, snapshot } from "../support/old-store.ts";

let dir: string;
beforeEach(async () => {
  dir = join(await mkdtemp(join(tmpdir(), "store-format-")), "store");
});
afterEach(async () => {
  await rm(join(dir, ".."), { recursive: true, force: true });
});

test("a new store is marked with this build's format and version", async () => {
  await openStore({ dir });
  expect(JSON.parse(readFileSync(join(dir, "format"), "utf8"))).toEqual({ format: STORE_FORMAT, version: pkg.version });
  expect(statSync(join(dir, "format")).mode & 0o777).toBe(0o600);
  await openStore({ dir }); // read again, not rewritten
});

test("the 0.1.0 store: every queue entry, the cache and the counter read as written; then marked", async () => {
  copyFixture(dir);
  const store = await openStore({ dir });
  const queues = sanctionQueues(store);
  const [bans, unbans, warnings] = await Promise.all([queues.ban.list(), queues.unban.list(), queues.warning.list()]);
  expect(bans.map((e) => [e.data.target.identifier, e.data.length, e.data.reason, e.attempts])).toEqual([
    ["76561198012345671", 1800, "griefing", 1],
  ]);
  expect(unbans.map((e) => e.data.target.identifier)).toEqual(["76561198087654322"]);
  expect(warnings.map((e) => [e.data.target.identifier, e.data.reason])).toEqual([
    ["76561198012345671", "spamming the chat"],
  ]);
  const server = await store.cache("server", v.object({ serverbundle_id: v.string() })).get();
  expect(server?.data.serverbundle_id).toBe("c7dd795f-fa48-44da-96f9-f11abbf98ccb");
  expect(await store.counters("playtime").all()).toEqual({ "6d608cd3-155d-4344-b9e8-7c0280165d73": 120 });
  expect(store.quarantined()).toEqual([]);
  expect(JSON.parse(readFileSync(join(dir, "format"), "utf8"))).toEqual({ format: 1, version: pkg.version });
});

test("a store a newer build marked: refused with one line, nothing read or written, not even the instance lock", async () => {
  copyFixture(dir);
  writeFileSync(join(dir, "format"), `${JSON.stringify({ format: STORE_FORMAT + 1, version: "9.0.0" })}\n`, {
    mode: 0o600,
  });
  const before = snapshot(dir);
  const line =
    `the store ${dir} is in format ${STORE_FORMAT + 1}, written by hub-agent 9.0.0; hub-agent ${pkg.version} reads ` +
    `formats up to ${STORE_FORMAT}: it is not used, so that nothing in it is misread; run hub-agent 9.0.0 or newer on it`;
  const refused = await openStore({ dir }).catch((e) => e);
  expect(refused).toBeInstanceOf(StoreFormatError);
  expect(refused.message).toBe(line);
  expect((await holdInstance(dir).catch((e) => e)).message).toBe(line);
  expect(snapshot(dir)).toEqual(before);
});

test("a format marker that can't be read: refused, never taken for format 1", async () => {
  await openStore({ dir });
  for (const text of ["", "{", '{"format":"2"}', '{"format":0}', '{"format":1.5}']) {
    writeFileSync(join(dir, "format"), text);
    const refused = await openStore({ dir }).catch((e) => e);
    expect(refused).toBeInstanceOf(StoreFormatError);
    expect(refused.message).toStartWith(`the store ${dir} has a format marker hub-agent ${pkg.version} can't read`);
  }
});
