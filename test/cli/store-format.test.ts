/**
 * The store across upgrades, as the operator meets it (the compiled binary against the in-memory service): the store
 * 0.1.0 wrote is listed by `queue status` and delivered by `run --once`; a store a newer build marked is refused by
 * every command that opens it, with one line and exit 8, its files untouched.
 */
import { expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SEED_IDS, type Sandbox } from "../../lib/sandbox/index.ts";
import { hub } from "./binary.ts";
import { copyFixture, snapshot } from "../support/old-store.ts";
import { useSandbox } from "../support/sandbox.ts";
import { sandboxEnv } from "../support/sandbox-env.ts";

let sb: Sandbox;
useSandbox((s) => (sb = s));

const { alice: ALICE, bob: BOB } = SEED_IDS.steamid64;

/** A copy of the 0.1.0 store, configured for the sandbox. */
function oldStore() {
  const dir = join(mkdtempSync(join(tmpdir(), "hub-store-format-")), "store");
  copyFixture(dir);
  const env = sandboxEnv(sb, dir);
  return { dir, env };
}

test("the 0.1.0 store: queue status lists its ban, unban and warning; run --once delivers each once", async () => {
  const { env } = oldStore();
  const status = await hub(["queue", "status"], { env });
  expect(status.code).toBe(0);
  expect(status.stdout).toContain(`ban ${ALICE} 30m "griefing" by the console`);
  expect(status.stdout).toContain(`unban ${BOB} by the console`);
  expect(status.stdout).toContain(`warn ${ALICE} "spamming the chat" by the console`);

  const bans = () => [...sb.state.bans.values()];
  const warnings = () => [...sb.state.warnings.values()];
  const before = { bans: bans().length, warnings: warnings().length };
  const once = await hub(["run", "--once"], { env });
  expect(once.code).toBe(0);
  const added = bans().slice(before.bans);
  expect(added.map((b) => [b.user_id, b.reason, b.length])).toEqual([[SEED_IDS.users.alice, "griefing", 1800]]);
  expect(
    warnings()
      .slice(before.warnings)
      .map((w) => [w.user_id, w.reason]),
  ).toEqual([[SEED_IDS.users.alice, "spamming the chat"]]);
  expect(bans().filter((b) => b.user_id === SEED_IDS.users.bob && b.status === "ACTIVE")).toEqual([]);
  const after = JSON.parse((await hub(["queue", "status", "--json"], { env })).stdout);
  expect(after.queues.map((q: { entries: number }) => q.entries)).toEqual([0, 0, 0, 0, 0]);
}, 60_000);

test("a store a newer build marked: refused by every command, one line, exit 8, its files untouched", async () => {
  const { dir, env } = oldStore();
  writeFileSync(join(dir, "format"), '{"format":99,"version":"9.0.0"}\n', { mode: 0o600 });
  const line = `error: the store ${dir} is in format 99, written by hub-agent 9.0.0; `;
  const fix = "run hub-agent 9.0.0 or newer on it";
  // The configuration's cache (config.cache) is the configuration's, keyed by the build, not the store's data.
  const files = () => Object.fromEntries(Object.entries(snapshot(dir)).filter(([name]) => name !== "config.cache"));
  const before = files();
  for (const args of [["queue", "status"], ["run", "--once"], ["ban", ALICE, "1d", "x"], ["warns", ALICE], ["run"]]) {
    const r = await hub(args, { env });
    expect([args.join(" "), r.code]).toEqual([args.join(" "), 8]);
    const lines = r.stderr.trimEnd().split("\n");
    expect(lines.filter((l) => l.includes(dir))).toHaveLength(1);
    expect(lines.find((l) => l.includes(dir))).toContain(fix);
    expect(r.stderr).toContain(line);
  }
  const doctor = await hub(["doctor"], { env });
  expect(doctor.code).toBe(8);
  expect(doctor.stdout).toContain(`the store ${dir} is in format 99, written by hub-agent 9.0.0`);
  expect(doctor.stdout).toContain(`fix: ${fix}`);
  expect(files()).toEqual(before);
}, 60_000);
