import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSandbox, type Sandbox } from "../../lib/sandbox/index.ts";
import { binary, hubBinary, type Run } from "./binary.ts";
import { spawn } from "../support/procs.ts";

let sb: Sandbox;
let env: Record<string, string>;
const KEY = "cli-test-key-7f3a9c51e2";

beforeAll(async () => {
  sb = await startSandbox({ key: KEY });
  env = {
    HUB_API_URL: sb.url,
    HUB_API_KEY: KEY,
    HUB_API_SERVER_ID: sb.serverId,
    HUB_GAME_BRIDGE: "sim",
    HUB_STORAGE_DIR: mkdtempSync(join(tmpdir(), "hub-data-")),
  };
  await binary();
}, 120_000);
afterAll(() => sb?.stop());

const all: Run[] = [];
const run = async (args: string[], opts?: Parameters<typeof hubBinary>[1]) => {
  const r = await hubBinary(args, opts);
  all.push(r);
  return r;
};

describe("the compiled binary", () => {
  test("--help lists the commands and exit codes; --version prints the version", async () => {
    const r = await run(["--help"]);
    expect(r.code).toBe(0);
    for (const c of ["doctor", "init", "queue", "sandbox"]) expect(r.stdout).toContain(`  ${c} `);
    expect(r.stdout).toContain("3 configuration error");
    expect((await run(["--version"])).stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  test("a command's --help names the full invocation; --help after -- is not help", async () => {
    const r = await run(["queue", "status", "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("USAGE hub-agent queue status");
    expect(r.stdout).not.toContain("\x1b[");
    const after = await run(["doctor", "--", "--help"], { env });
    expect(after.stdout).not.toContain("USAGE");
  });

  test("usage errors exit 2 with one line naming the mistake", async () => {
    const none = await run([]);
    expect(none.code).toBe(2);
    const unknown = await run(["frobnicate"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr.trim()).toBe(
      'error: unknown command "frobnicate": run `hub-agent --help` to see the commands',
    );
    const flag = await run(["doctor", "--jsn"], { env });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("unknown option --jsn for `hub-agent doctor`");
    const group = await run(["queue"]);
    expect(group.code).toBe(2);
    expect(group.stderr).toContain("hub-agent queue needs a command: status, retry, drop");
    expect((await run(["doctor", "--log-format", "xml"], { env })).code).toBe(2);
  });

  test("init writes a 0600 template that is valid once filled in, and never overwrites without --force", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "hub-init-"));
    const first = await run(["init"], { cwd });
    expect(first.code).toBe(0);
    const file = join(cwd, "hub-agent.toml");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const again = await run(["init"], { cwd });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("already exists");
    for (const force of [[], ["--force"]]) {
      const folder = await run(["init", "--config", cwd, ...force], { cwd });
      expect([folder.code, folder.stderr.trim()]).toEqual([
        1,
        `error: ${cwd} is a directory: give the configuration file's path (${join(cwd, "hub-agent.toml")})`,
      ]);
    }
    const filled = readFileSync(file, "utf8")
      .replaceAll("https://api.vyhub.app/<instance>/v1", sb.url)
      .replaceAll("<paste the server's API key here>", KEY)
      .replaceAll("<server id, a UUID>", sb.serverId)
      .replace(/bridge = "<[^"]*>"/, 'bridge = "sim"');
    writeFileSync(file, filled);
    const doctor = await run(["doctor"], { cwd });
    expect(doctor.code).toBe(0);
    expect((await run(["init", "--force"], { cwd })).code).toBe(0);
    expect(readFileSync(file, "utf8")).toContain("<paste the server's API key here>");
  });

  test("init --server writes one server's file in servers.d: its placeholders refused until filled in", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "hub-init-"));
    writeFileSync(join(cwd, "hub-agent.toml"), `[api]\nurl = "${sb.url}"\n`);
    const made = await run(["init", "--server", "ttt-1"], { cwd });
    const file = join(cwd, "servers.d", "ttt-1.toml");
    expect([made.code, made.stdout.trim()]).toEqual([
      0,
      `wrote ${file}: fill in api.key, api.server_id and game.bridge, then run \`hub-agent doctor --server ttt-1\``,
    ]);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect((await run(["init", "--server", "ttt-1"], { cwd })).code).toBe(1); // never overwritten without --force
    const unfilled = await run(["doctor", "--server", "ttt-1"], { cwd });
    expect(unfilled.code).toBe(3);
    expect(unfilled.stdout).toContain('api.server_id = "<server id, a UUID>"');
    const filled = readFileSync(file, "utf8")
      .replaceAll("<paste the server's API key here>", KEY)
      .replaceAll("<server id, a UUID>", sb.serverId)
      .replace(/bridge = "<[^"]*>"/, 'bridge = "sim"');
    writeFileSync(file, filled);
    expect((await run(["doctor"], { cwd })).code).toBe(0); // the only server: implied
  });

  test("doctor passes every check against the in-memory service", async () => {
    const r = await run(["doctor"], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("✔ config");
    expect(r.stdout).toContain("✔ storage");
    expect(r.stdout).toContain("✔ service");
    expect(r.stdout).toMatch(/✔ server +key accepted; server "TTT #1 \| example\.org" \(GMOD\) in serverbundle "TTT"/);
    expect(r.stdout).toContain("✔ clock");
    const json = await run(["doctor", "--json"], { env });
    const checks = JSON.parse(json.stdout) as { name: string; status: string }[];
    expect(checks.map((c) => [c.name, c.status])).toEqual([
      ["config", "ok"],
      ["storage", "ok"],
      ["service", "ok"],
      ["server", "ok"],
      ["clock", "ok"],
    ]);
  });

  test("doctor with a wrong key fails the key check with exit 3 and a fix", async () => {
    const r = await run(["doctor"], { env: { ...env, HUB_API_KEY: "wrong-key-123456" } });
    expect(r.code).toBe(3);
    expect(r.stdout).toContain("✘ server   the service refused the API key (401");
    expect(r.stdout).toContain("fix: create a new server API key");
  });

  test("doctor with an unknown server id fails with exit 3", async () => {
    const r = await run(["doctor"], { env: { ...env, HUB_API_SERVER_ID: "00000000-0000-4000-8000-000000000000" } });
    expect(r.code).toBe(3);
    expect(r.stdout).toContain("knows no server 00000000-0000-4000-8000-000000000000");
  });

  test("doctor with no configuration exits 3 naming the missing keys", async () => {
    const r = await run(["doctor"]);
    expect(r.code).toBe(3);
    // One line each, under the check's: not joined into one line with the breaks escaped.
    const lines = r.stdout.split("\n");
    expect(lines[0]).toBe("✘ config   configuration is not valid (no config file; environment only)");
    for (const key of ["api.url", "api.server_id", "api.key"])
      expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^    ${key.replace(".", "\\.")} is missing: `)));
    expect(r.stdout).not.toContain("\\n");
    const json = await run(["doctor", "--json"]);
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stdout)[0]).toMatchObject({ name: "config", status: "fail", exitCode: 3 });
  });

  test("doctor with the service down exits 4, and says where it looked", async () => {
    const r = await run(["doctor"], {
      env: { ...env, HUB_API_URL: "http://127.0.0.1:1/sandbox/v1", HUB_API_TIMEOUT: "2" },
    });
    expect(r.code).toBe(4);
    expect(r.stdout).toContain("✘ service  http://127.0.0.1:1/sandbox/v1");
    expect(r.stdout).toContain("- server   the service did not answer");
  });

  test("queue drop of an id part shorter than 8 characters says so (exit 2), not that no entry has it", async () => {
    const r = await run(["queue", "drop", "0017962"], { env });
    expect([r.code, r.stderr.trim()]).toEqual([
      2,
      'error: "0017962" is too short to find an entry by: give 8 characters or more of its id (`hub-agent queue status` lists them)',
    ]);
  });

  test("queue status --json lists every queue, even empty ones", async () => {
    const r = await run(["queue", "status", "--json"], { env });
    expect(r.code).toBe(0);
    const { queues } = JSON.parse(r.stdout) as { queues: { queue: string; entries: number }[] };
    expect(queues.map((q) => [q.queue, q.entries])).toEqual([
      ["ban", 0],
      ["unban", 0],
      ["warning", 0],
      ["reward_executed", 0],
      ["reward_failed", 0],
    ]);
  });

  test("a bad configuration with --json is an error object on stdout", async () => {
    // (Not `queue status`: it reads only the store, and says such a problem in one line.)
    const r = await run(["dashboard", "--json"], { env: { ...env, HUB_INTERVALS_BANS: "soon" } });
    expect(r.code).toBe(3);
    const { error } = JSON.parse(r.stdout);
    expect(error.code).toBe(3);
    expect(error.details[0]).toContain('intervals.bans = "soon" (from HUB_INTERVALS_BANS)');
  });

  test("a .env file in the working directory is not loaded", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "hub-dotenv-"));
    writeFileSync(join(cwd, ".env"), `HUB_API_URL=${sb.url}\nHUB_API_KEY=${KEY}\nHUB_API_SERVER_ID=${sb.serverId}\n`);
    const r = await run(["doctor"], { cwd });
    expect(r.code).toBe(3);
  });

  test("run --once sends one status round and exits 0; with the service unreachable and no cache it exits 4", async () => {
    sb.control.clearRequests();
    const r = await run(["run", "--once"], {
      env: { ...env, HUB_STORAGE_DIR: mkdtempSync(join(tmpdir(), "hub-once-")) },
    });
    expect(r.code).toBe(0);
    expect(sb.control.requests({ method: "PATCH", path: `/server/${sb.serverId}` })).toHaveLength(1);
    const down = await run(["run", "--once"], {
      env: {
        ...env,
        HUB_API_URL: "http://127.0.0.1:1/sandbox/v1",
        HUB_STORAGE_DIR: mkdtempSync(join(tmpdir(), "hub-once-")),
      },
    });
    expect(down.code).toBe(4);
    expect(down.stderr).toContain("error: the service is unreachable and no usable cached server record exists");
  });

  test("run stops cleanly on SIGTERM with exit 0", async () => {
    const p = spawn([await binary(), "run"], {
      env: { PATH: process.env.PATH ?? "", ...env, HUB_STORAGE_DIR: mkdtempSync(join(tmpdir(), "hub-run-")) },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    const reader = p.stderr.getReader();
    let log = "";
    while (!log.includes("INFO  ready")) {
      const { value, done } = await reader.read();
      if (done) break;
      log += new TextDecoder().decode(value);
    }
    p.kill("SIGTERM");
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      log += new TextDecoder().decode(value);
    }
    expect(await p.exited).toBe(0);
    expect(log).toContain("stopping (SIGTERM): finishing work in flight");
    expect(log).toContain("INFO  stopped");
    all.push({ code: 0, stdout: "", stderr: log });
  });

  // Runs last: every output above, of every command, with the key in the environment or a config file.
  test("the API key never appears in any output", async () => {
    await run(["doctor", "--log-format", "json"], { env: { ...env, HUB_LOG_LEVEL: "debug" } });
    await run(["doctor"], { env: { ...env, HUB_API_URL: "ftp://nowhere" } });
    await run(["queue", "status"], { env });
    expect(all.length).toBeGreaterThan(15);
    for (const r of all) {
      expect(r.stdout).not.toContain(KEY);
      expect(r.stderr).not.toContain(KEY);
    }
  });
});
