/**
 * The read-only commands need only what they read (issue 21, friction 8): `queue status` without `game.bridge` or
 * the service's keys, and `status` beside a running `run` after a typo in the file, say the configuration's problem
 * in one line and still show what the store holds, instead of exiting 3.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Sandbox } from "../../lib/sandbox/index.ts";
import { ready, startRun } from "../support/agent-run.ts";
import { useSandbox } from "../support/sandbox.ts";
import { hub } from "./binary.ts";

let sb: Sandbox;
useSandbox((s) => (sb = s));
const root = mkdtempSync(join(tmpdir(), "read-only-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const warnings = (stderr: string) => stderr.split("\n").filter((l) => / WARN /.test(l));

test("queue status needs only storage.dir: no game.bridge, no api keys; one line says what is missing", async () => {
  const store = mkdtempSync(join(root, "store-"));
  const r = await hub(["queue", "status"], { env: { HUB_STORAGE_DIR: store } });
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(/^ban +0 entries$/m);
  expect(warnings(r.stderr)).toHaveLength(1);
  expect(r.stderr).toContain(
    "the configuration is incomplete (no config file; environment only): api.url, api.server_id, game.bridge, api.key are missing",
  );
  const json = await hub(["queue", "status", "--json"], { env: { HUB_STORAGE_DIR: store } });
  expect(json.code).toBe(0);
  expect(JSON.parse(json.stdout).queues.map((q: { queue: string }) => q.queue)).toContain("ban");
}, 60_000);

test("status after a typo in the file: the running agent is shown, the typo said in one line", async () => {
  const dir = mkdtempSync(join(root, "run-"));
  const run = await startRun({ sb, dir, name: "run", players: [] });
  try {
    await ready(run);
    const cwd = mkdtempSync(join(root, "cwd-"));
    // The operator's edit: the run goes on with the configuration it loaded; the file no longer parses.
    writeFileSync(
      join(cwd, "hub-agent.toml"),
      `[storage]\ndir = "${join(dir, "store")}"\n\n[intervals]\nstatus = 6O\n`,
    );
    const r = await hub(["status"], { cwd });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^run +alive: pid ${run.proc.pid} `, "m"));
    expect(warnings(r.stderr)).toHaveLength(1);
    expect(r.stderr).toContain("not valid TOML");
    const json = await hub(["status", "--json"], { cwd });
    expect([json.code, JSON.parse(json.stdout).run.alive]).toEqual([0, true]);

    // An unknown key (a misspelt one): the same.
    writeFileSync(join(cwd, "hub-agent.toml"), `[storage]\ndir = "${join(dir, "store")}"\n\n[api]\nkee = "x"\n`);
    const unknown = await hub(["status"], { cwd });
    expect(unknown.code).toBe(0);
    expect(warnings(unknown.stderr)).toHaveLength(1);
    expect(unknown.stderr).toContain("the configuration is not valid");
    expect(unknown.stderr).toContain("unknown key api.kee");
  } finally {
    run.proc.kill("SIGTERM");
    await run.proc.exited;
  }
}, 60_000);
