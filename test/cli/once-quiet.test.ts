/**
 * `run --once --quiet` from cron: the configuration's warnings (an interval below the spec's) and a reward refused
 * (a SCRIPT) are said once per change, remembered in the store, not in every cron mail.
 */
import { expect, test } from "bun:test";
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Sandbox } from "../../lib/sandbox/index.ts";
import { hub } from "./binary.ts";
import { useSandbox } from "../support/sandbox.ts";

let sb: Sandbox;
useSandbox((s) => (sb = s));

const INTERVAL = (s: number) => `intervals.rewards = ${s} s is below the spec's 60 s`;
const SCRIPT = "(Starter pack) for Carol not executed: it is a SCRIPT reward";
const LOOSE = "holds the API key or a console password and other users can read it";

test("run --once --quiet says each warning once per change of the configuration; without --quiet, every time", async () => {
  const cwd = mkdtempSync(join(tmpdir(), "hub-quiet-"));
  const file = join(cwd, "hub-agent.toml");
  const write = (rewards: number) => {
    writeFileSync(file, `[api]\nkey = "${sb.key}"\n\n[intervals]\nrewards = ${rewards}\n`);
    chmodSync(file, 0o644); // a key others can read: a warning about the configuration too
  };
  const env = {
    HUB_API_URL: sb.url,
    HUB_API_SERVER_ID: sb.serverId,
    HUB_GAME_BRIDGE: "sim",
    HUB_GAME_SIM_PLAYERS: "76561198123456783:Carol", // her seeded SCRIPT reward is refused (allow_script is off)
  };
  const cron = async (...flags: string[]) => {
    const r = await hub(["run", "--once", ...flags], { env, cwd });
    expect([r.code, r.stdout]).toEqual([0, ""]);
    return r.stderr;
  };
  write(10);
  const first = await cron("--quiet");
  for (const said of [INTERVAL(10), SCRIPT, LOOSE]) expect(first).toContain(said);

  // The same configuration: nothing to say (a cron job mails nothing).
  expect(await cron("--quiet")).toBe("");

  // A change: its new warning is said, once; the unchanged ones stay silent.
  write(20);
  const changed = await cron("--quiet");
  expect(changed).toContain(INTERVAL(20));
  expect(changed).not.toContain(SCRIPT);
  expect(changed).not.toContain(LOOSE);
  expect(await cron("--quiet")).toBe("");

  // Without --quiet (a person at a terminal) the configuration's warnings are said every time.
  const loud = await cron();
  expect(loud).toContain(INTERVAL(20));
  expect(loud).toContain(LOOSE);
}, 60_000);

test("run --once --quiet: a warning fixed (none left), then back, is said again", async () => {
  const cwd = mkdtempSync(join(tmpdir(), "hub-quiet-"));
  const file = join(cwd, "hub-agent.toml");
  const write = (rewards: number) => {
    writeFileSync(file, `[api]\nkey = "${sb.key}"\n\n[intervals]\nrewards = ${rewards}\n`);
    chmodSync(file, 0o600);
  };
  const env = { HUB_API_URL: sb.url, HUB_API_SERVER_ID: sb.serverId, HUB_GAME_BRIDGE: "sim" };
  const cron = async () => {
    const r = await hub(["run", "--once", "--quiet"], { env, cwd });
    expect([r.code, r.stdout]).toEqual([0, ""]);
    return r.stderr;
  };
  write(10);
  expect(await cron()).toContain(INTERVAL(10));
  write(60); // fixed: no warning at all
  expect(await cron()).toBe("");
  write(10); // the same mistake again: a change, said once more
  expect(await cron()).toContain(INTERVAL(10));
}, 60_000);
