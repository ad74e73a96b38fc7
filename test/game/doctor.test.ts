/**
 * `hub-agent doctor`'s game checks against the in-repo fake RCON servers (both Source dialects, Quake 3), and once
 * through the compiled binary.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../lib/app/config.ts";
import { checkGame } from "../../lib/game/doctor.ts";
import { startSandbox, type Sandbox } from "../../lib/sandbox/index.ts";
import { binary, hubBinary } from "../cli/binary.ts";
import { ioq3Status } from "../support/ioq3-status.ts";
import { FakeQ3Server } from "./transports/fake-q3-server.ts";
import { FakeSourceRconServer } from "./transports/fake-source-rcon-server.ts";

const SERVER_ID = "541d1c41-1b58-40fc-8780-70c400ea5686";
const base = {
  HUB_API_URL: "https://api.example/x/v1",
  HUB_API_KEY: "k-0123456789",
  HUB_API_SERVER_ID: SERVER_ID,
  HUB_GAME_BRIDGE: "sim",
};

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function config(env: Record<string, string>) {
  const r = await loadConfig({ env: { ...base, ...env }, cwd: mkdtempSync(join(tmpdir(), "hub-doctor-")) });
  if (!r.ok) throw new Error(r.problems.join("\n"));
  return r.config;
}

const MC_LIST =
  "There are 2 of a max of 20 players online: Alice (069a79f4-44e9-4726-a5be-fca90e38aaf5), Bob (853c80ef-3c37-49fd-aa49-938b674adae6)";

async function minecraft() {
  const fake = await FakeSourceRconServer.start({
    dialect: "minecraft",
    handler: (c) => (c === "list uuids" ? MC_LIST : ""),
  });
  cleanups.push(() => fake.close());
  const env = {
    HUB_GAME_BRIDGE: "rcon",
    HUB_GAME_PRESET: "minecraft",
    HUB_GAME_RCON_PORT: String(fake.port),
    HUB_GAME_RCON_PASSWORD: "secret",
  };
  return { fake, env };
}

describe("doctor: the game check", () => {
  test("rcon (minecraft dialect): connects, authenticates and lists the players", async () => {
    const { fake, env } = await minecraft();
    const checks = await checkGame(await config(env));
    expect(checks).toEqual([
      {
        name: "game",
        status: "ok",
        message: `Source RCON 127.0.0.1:${fake.port} (Minecraft (vanilla/Paper + LuckPerms)): password accepted; 2 players online: Alice, Bob`,
      },
    ]);
    expect(fake.commands).toEqual(["list uuids"]);
  });

  test("rcon (source dialect, double auth reply): the gmod status", async () => {
    const status =
      '# userid name uniqueid connected ping loss state adr\n#      2 "Alice" STEAM_0:0:11101 05:12 48 0 active 1.2.3.4:27005\n';
    const fake = await FakeSourceRconServer.start({
      dialect: "source",
      handler: (c) => (c === "status" ? status : ""),
    });
    cleanups.push(() => fake.close());
    const [check] = await checkGame(
      await config({
        HUB_GAME_BRIDGE: "rcon",
        HUB_GAME_PRESET: "gmod",
        HUB_GAME_RCON_PORT: String(fake.port),
        HUB_GAME_RCON_PASSWORD: "secret",
      }),
    );
    expect(check).toMatchObject({ status: "ok", message: expect.stringContaining("1 players online: Alice") });
  });

  test("a wrong password fails once (srcds bans repeat offenders) with the server-side setting as the fix", async () => {
    const { fake, env } = await minecraft();
    const [check] = await checkGame(await config({ ...env, HUB_GAME_RCON_PASSWORD: "wrong-pw" }));
    expect(check).toMatchObject({
      name: "game",
      status: "fail",
      message: `Source RCON 127.0.0.1:${fake.port} refused the password`,
      kind: "config",
    });
    expect(check!.fix).toContain("game.rcon.password");
    expect(check!.fix).toContain("enable-rcon=true");
    expect(fake.authAttempts).toBe(1);
    expect(JSON.stringify(check)).not.toContain("wrong-pw");
  });

  test("nothing listening: fails at once, naming the address and how to turn RCON on", async () => {
    const { fake, env } = await minecraft();
    await fake.close();
    const [check] = await checkGame(await config(env), { timeoutMs: 60_000 });
    expect(check).toMatchObject({ status: "fail", kind: "failure" });
    // The first refusal is the answer (not "no reply within 60000 ms"), with the address once.
    expect(check!.message).toBe(`RCON 127.0.0.1:${fake.port}: connect ECONNREFUSED 127.0.0.1:${fake.port}`);
    expect(check!.fix).toContain("rcon.port=25575");
  });

  test("q3rcon: status answers; a bad password is named", async () => {
    const fake = await FakeQ3Server.start({
      handler: (c) => (c === "status" ? ioq3Status("oa_dm1", [{ slot: 0, name: "Sarge", address: "bot" }]) : ""),
    });
    cleanups.push(() => fake.close());
    const env = { HUB_GAME_BRIDGE: "q3rcon", HUB_GAME_PRESET: "openarena", HUB_GAME_RCON_PORT: String(fake.port) };
    const [ok] = await checkGame(await config({ ...env, HUB_GAME_RCON_PASSWORD: "secret" }));
    expect(ok).toMatchObject({ status: "ok", message: expect.stringContaining("1 players online: Sarge") });
    const [bad] = await checkGame(await config({ ...env, HUB_GAME_RCON_PASSWORD: "nope" }));
    expect(bad).toMatchObject({
      status: "fail",
      kind: "config",
      message: `Quake 3 rcon 127.0.0.1:${fake.port} refused the password`,
    });
    expect(bad!.fix).toContain("rconpassword");
  });

  test("wrapper: the server to start must be an executable; the log file is looked for", async () => {
    const env = { HUB_GAME_BRIDGE: "wrapper", HUB_GAME_PRESET: "openarena" };
    const [ok, log] = await checkGame(
      await config({
        ...env,
        HUB_GAME_WRAPPER_COMMAND: JSON.stringify([process.execPath, "x"]),
        HUB_GAME_LOG_FILE: "/nonexistent/games.log",
      }),
    );
    expect(ok).toMatchObject({
      name: "game",
      status: "ok",
      message: expect.stringContaining(`starts ${process.execPath}`),
    });
    expect(log).toMatchObject({
      name: "log",
      status: "warn",
      message: "/nonexistent/games.log does not exist yet; hub-agent waits for it",
    });
    const [missing] = await checkGame(await config({ ...env, HUB_GAME_WRAPPER_COMMAND: '["no-such-server-xyz"]' }));
    expect(missing).toMatchObject({
      status: "fail",
      message: 'game.wrapper.command: "no-such-server-xyz" is not an executable file on PATH',
    });
  });
});

describe("hub-agent doctor (compiled) with an RCON bridge", () => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await startSandbox({ key: "doctor-test-key-123" });
    await binary();
  }, 120_000);
  afterAll(() => sb?.stop());

  test("✔ game with the player count; a wrong password is exit 3 with the fix, and never printed", async () => {
    const { env } = await minecraft();
    const service = {
      HUB_API_URL: sb.url,
      HUB_API_KEY: "doctor-test-key-123",
      HUB_API_SERVER_ID: sb.serverId,
      HUB_GAME_BRIDGE: "sim",
      HUB_STORAGE_DIR: mkdtempSync(join(tmpdir(), "hub-data-")),
    };
    const good = await hubBinary(["doctor"], { env: { ...service, ...env } });
    expect(good.stdout).toMatch(
      /✔ game +Source RCON 127\.0\.0\.1:\d+ \(Minecraft.*\): password accepted; 2 players online: Alice, Bob/,
    );
    expect(good.code).toBe(0);
    const bad = await hubBinary(["doctor"], { env: { ...service, ...env, HUB_GAME_RCON_PASSWORD: "wrong-pw-4242" } });
    expect(bad.code).toBe(3);
    expect(bad.stdout).toContain("✘ game");
    expect(bad.stdout).toContain("fix: copy the server's password into game.rcon.password");
    expect(bad.stdout + bad.stderr).not.toContain("wrong-pw-4242");
  });
});
