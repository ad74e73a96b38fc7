/**
 * The first hour of an operator, through the compiled binary against the in-memory service: configuration mistakes
 * named with their fix (no silent simulated game, TOML errors with line and column).
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Sandbox } from "../../lib/sandbox/index.ts";
import { useSandbox } from "../support/sandbox.ts";
import { hub } from "./binary.ts";

let sb: Sandbox;
useSandbox((s) => (sb = s));

const tmp = (name: string) => mkdtempSync(join(tmpdir(), `hub-${name}-`));
const apiTable = () => ["[api]", `url = "${sb.url}"`, `key = "${sb.key}"`, `server_id = "${sb.serverId}"`];

describe("configuration", () => {
  test("a config file without game.bridge is refused, naming the key and every kind (no silent simulated game)", async () => {
    const cwd = tmp("nobridge");
    writeFileSync(join(cwd, "hub-agent.toml"), apiTable().join("\n") + "\n");
    for (const args of [["doctor"], ["run", "--once"], ["queue", "status"]]) {
      const r = await hub(args, { cwd });
      expect(r.code).toBe(3);
      const out = r.stdout + r.stderr;
      expect(out).toContain(
        `game.bridge is missing: set bridge under [game] in ${join(cwd, "hub-agent.toml")}, or export HUB_GAME_BRIDGE (how hub-agent talks to the game: sim (simulated), rcon (`,
      );
      for (const kind of ["q3rcon", "dprcon", "webrcon", "econ", "wrapper"]) expect(out).toContain(kind);
      expect(sb.control.requests({ method: "PATCH" })).toEqual([]); // no sim_island reported
    }
    // The environment alone is held to the same rule; saying sim is enough.
    const env = { HUB_API_URL: sb.url, HUB_API_KEY: sb.key, HUB_API_SERVER_ID: sb.serverId };
    const envOnly = await hub(["queue", "status"], { env: { ...env, HUB_STORAGE_DIR: tmp("store") } });
    expect(envOnly.code).toBe(3);
    expect(envOnly.stderr).toContain("game.bridge is missing");
    const sim = await hub(["queue", "status"], {
      env: { ...env, HUB_STORAGE_DIR: tmp("store"), HUB_GAME_BRIDGE: "sim" },
    });
    expect(sim.code).toBe(0);
  });

  test("a TOML syntax error in a long file names the file, line and column, and shows the line", async () => {
    const cwd = tmp("toml");
    const file = join(cwd, "hub-agent.toml");
    const filler = Array.from({ length: 120 }, (_, i) => `# comment line ${i + 1}`);
    const lines = [...apiTable(), "[game]", 'bridge = "sim"', ...filler, "[intervals]", "status = 60 bans = 60"];
    writeFileSync(file, lines.join("\n") + "\n");
    const r = await hub(["doctor"], { cwd });
    expect(r.code).toBe(3);
    expect(r.stdout).toContain(
      `${file}:${lines.length}:13: not valid TOML: Expected a newline or end of file after a key/value pair`,
    );
    const json = await hub(["queue", "status", "--json"], { cwd });
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stdout).error.details).toEqual([
      `${file}:${lines.length}:13: not valid TOML: Expected a newline or end of file after a key/value pair`,
      "| status = 60 bans = 60",
      "|             ^",
    ]);
  });
});
