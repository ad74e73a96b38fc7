/**
 * The compiled binary keeps the checked configuration in its store (lib/app/config-cache.ts) and never serves a
 * stale one: a changed file or variable is checked again, a garbled entry is a miss.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runToEnd } from "../support/procs.ts";
import { binary } from "./binary.ts";

const SERVER = "541d1c41-1b58-40fc-8780-70c400ea5686";
const toml = (extra = "") =>
  `[api]\nurl = "http://127.0.0.1:9/v1"\nkey = "k-0123456789"\nserver_id = "${SERVER}"\n` +
  `[game]\nbridge = "sim"\n[intervals]\n${extra}`;

describe("the checked configuration, in the compiled binary", () => {
  test("kept in the store, checked again when the file or a variable changes, a garbled entry a miss", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "hub-config-cache-"));
    mkdirSync(join(cwd, "data"), { mode: 0o700 });
    const file = join(cwd, "hub-agent.toml");
    writeFileSync(file, toml(), { mode: 0o600 });
    // The compiled binary itself: from source (a test's own process) there is no cache.
    const status = async (env: Record<string, string> = {}) => {
      return runToEnd([await binary(), "queue", "status", "--json"], {
        cwd,
        env: { PATH: process.env.PATH ?? "", ...env },
      });
    };

    expect((await status()).code).toBe(0);
    const entry = join(cwd, "data", "config.cache");
    expect(existsSync(entry)).toBe(true);
    expect((await status()).code).toBe(0);

    // `queue status` reads only the store: a configuration checked again and found bad is one warning line, never
    // the cached good one served in silence.
    const problem = (r: { code: number; stderr: string }) =>
      r.code === 0 && r.stderr.includes("not valid") ? r.stderr : "";
    writeFileSync(file, toml('bans = "soon"\n'));
    expect(problem(await status())).toContain('intervals.bans = "soon"');
    writeFileSync(file, toml());
    expect(await status()).toMatchObject({ code: 0, stderr: "" });
    expect(problem(await status({ HUB_INTERVALS_BANS: "soon" }))).toContain("from HUB_INTERVALS_BANS");

    writeFileSync(entry, "0\n{}");
    expect(await status()).toMatchObject({ code: 0, stderr: "" });
    writeFileSync(file, toml("typo = 1\n"));
    expect(problem(await status())).toContain("unknown key intervals.typo");
  });

  test("one server of several: kept in its own store, checked again when its file or the shared one changes", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "hub-config-cache-"));
    mkdirSync(join(cwd, "data", "servers", "alpha"), { recursive: true, mode: 0o700 }); // as its `run` makes it
    const shared = join(cwd, "hub-agent.toml");
    writeFileSync(shared, toml().replace(`server_id = "${SERVER}"\n`, ""), { mode: 0o600 });
    mkdirSync(join(cwd, "servers.d"));
    const alpha = join(cwd, "servers.d", "alpha.toml");
    writeFileSync(alpha, `[api]\nserver_id = "${SERVER}"\n`, { mode: 0o600 });
    writeFileSync(join(cwd, "servers.d", "beta.toml"), `[api]\nserver_id = "${SERVER}"\n[intervals]\nbans = "x"\n`);
    const status = async (server: string) =>
      runToEnd([await binary(), "queue", "status", "--json", "--server", server], {
        cwd,
        env: { PATH: process.env.PATH ?? "" },
      });

    expect(await status("alpha")).toMatchObject({ code: 0, stderr: "" });
    expect(existsSync(join(cwd, "data", "servers", "alpha", "config.cache"))).toBe(true);
    expect(await status("alpha")).toMatchObject({ code: 0, stderr: "" });
    // Another server is its own configuration, never alpha's entry.
    expect((await status("beta")).stderr).toContain('intervals.bans = "x"');
    writeFileSync(alpha, `[api]\nserver_id = "${SERVER}"\n[intervals]\nbans = "soon"\n`);
    expect((await status("alpha")).stderr).toContain('intervals.bans = "soon"');
    writeFileSync(alpha, `[api]\nserver_id = "${SERVER}"\n`);
    expect(await status("alpha")).toMatchObject({ code: 0, stderr: "" });
    writeFileSync(shared, toml("typo = 1\n").replace(`server_id = "${SERVER}"\n`, ""));
    expect((await status("alpha")).stderr).toContain("unknown key intervals.typo");
  });
});
