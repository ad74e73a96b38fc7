/**
 * `game.bridge = "plugin"` from the configuration to the bridge features see, with the fake plugin: ids normalised
 * by the preset, chat commands, group changes (our own echoed back ignored), kicks, messages and groups as requests,
 * the plugin's restart resynced; its config checks; and doctor's check through the kind registry.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import * as net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { systemClock } from "../../lib/clock.ts";
import { type Config, loadConfig } from "../../lib/app/config.ts";
import type { BridgeEvent } from "../../lib/game/bridge.ts";
import { checkGame } from "../../lib/game/doctor.ts";
import { createBridge } from "../../lib/game/index.ts";
import type { PresetBridge } from "../../lib/game/preset-bridge.ts";
import { memoryLogger } from "../../lib/log.ts";
import { hubBinary } from "../cli/binary.ts";
import { until } from "../support/until.ts";
import { freePort } from "../e2e/world.ts";
import { FakePlugin } from "./transports/fake-plugin.ts";

const base = {
  HUB_API_URL: "https://api.example/x/v1",
  HUB_API_KEY: "k-0123456789",
  HUB_API_SERVER_ID: "541d1c41-1b58-40fc-8780-70c400ea5686",
};
const ALICE = "069a79f4-44e9-4726-a5be-fca90e38aaf5";
const TOKEN = "a-plugin-token-long-enough";
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function config(env: Record<string, string>): Promise<Config> {
  const r = await loadConfig({ env: { ...base, ...env }, cwd: mkdtempSync(join(tmpdir(), "hub-plugin-")) });
  if (!r.ok) throw new Error(r.problems.join("\n"));
  return r.config;
}

async function problems(env: Record<string, string>): Promise<string[]> {
  const r = await loadConfig({ env: { ...base, ...env }, cwd: mkdtempSync(join(tmpdir(), "hub-plugin-")) });
  return r.ok ? [] : r.problems;
}

async function setup() {
  const port = await freePort("tcp");
  const env = { HUB_GAME_BRIDGE: "plugin", HUB_GAME_PRESET: "minecraft", HUB_GAME_RCON_PORT: String(port) };
  const logger = memoryLogger();
  const bridge = (await createBridge(await config({ ...env, HUB_GAME_RCON_PASSWORD: TOKEN }), {
    clock: systemClock,
    logger,
  })) as PresetBridge;
  cleanups.push(() => bridge.stop());
  const events: BridgeEvent[] = [];
  bridge.on((e) => void events.push(e));
  await bridge.start();
  const online: { id: string; name: string }[] = [];
  const plugin = FakePlugin.start({ port, token: TOKEN, players: () => online, handler: (c) => `did ${c}` });
  cleanups.push(() => plugin.close());
  return { bridge, events, plugin, online, logger, port };
}

describe("the plugin bridge", () => {
  test("ready once the plugin is in; events with ids the preset normalises; actions are requests", async () => {
    const { bridge, events, plugin, online } = await setup();
    await until(() => bridge.health().state === "up", "the bridge up");
    expect(events[0]).toEqual({ type: "ready" });
    expect(bridge.caps.events.has("group_change")).toBe(true);
    // A UUID without dashes, in capitals: the minecraft preset's normal form is lower case with dashes.
    const raw = ALICE.replaceAll("-", "").toUpperCase();
    plugin.event("player_connect", { p: { id: raw, name: "Alice" }, ip: "10.0.0.7" });
    plugin.event("player_spawn", { p: { id: raw, name: "Alice" } });
    plugin.event("chat", { p: { id: raw, name: "Alice" }, text: "hello" });
    plugin.event("chat", { p: { id: raw, name: "Alice" }, text: "!dashboard please" });
    plugin.event("player_death", { p: { id: raw, name: "Alice" } });
    await until(() => events.length === 5, "four events after ready");
    const alice = { id: ALICE, name: "Alice", extra: { ip: "10.0.0.7" } };
    expect(events.slice(1)).toEqual([
      { type: "player_connect", player: alice },
      { type: "player_spawn", player: alice },
      { type: "chat_command", player: alice, command: "dashboard", args: ["please"] },
      { type: "player_death", player: alice },
    ]);
    online.push({ id: raw, name: "Alice" });
    expect((await bridge.status()).players).toEqual([alice]);
    await bridge.message(alice, "line one\nline two");
    await bridge.message(null, "to all");
    await bridge.kick(alice, "griefing");
    await bridge.setGroup(alice, "vip", "add", 60);
    expect(await bridge.exec("give Alice diamond 1")).toBe("did give Alice diamond 1");
    const asked = plugin.requests.filter((r) => r.op !== "players").map((r) => ({ ...r, id: undefined, t: undefined }));
    expect(asked).toEqual(
      [
        { op: "message", p: ALICE, text: "line one" },
        { op: "message", p: ALICE, text: "line two" },
        { op: "message", text: "to all" },
        { op: "kick", p: ALICE, reason: "griefing" },
        { op: "group", p: ALICE, group: "vip", action: "add", seconds: 60 },
        { op: "exec", cmd: "give Alice diamond 1" },
      ].map((r) => ({ ...r, id: undefined, t: undefined })),
    );
    // The plugin reports our own change back (ignored) and one made in the game (reported).
    plugin.event("group_change", { p: { id: raw, name: "Alice" }, group: "vip", op: "add" });
    plugin.event("group_change", { p: { id: raw, name: "Alice" }, group: "mod", op: "remove" });
    plugin.event("player_disconnect", { p: { id: raw, name: "Alice" }, reason: "Quit" });
    await until(() => events.length === 7, "the group change and the leave");
    expect(events.slice(5)).toEqual([
      { type: "group_change", player: alice, group: "mod", op: "remove" },
      { type: "player_disconnect", player: alice, reason: "Quit" },
    ]);
  });

  test("the plugin's game restarts: down, then the list after the reconnect says who is still there", async () => {
    const { bridge, events, plugin, online } = await setup();
    await until(() => bridge.health().state === "up", "the bridge up");
    online.push({ id: ALICE, name: "Alice" }, { id: "853c80ef-3c37-49fd-aa49-938b674adae6", name: "Bob" });
    await bridge.status();
    expect(events.filter((e) => e.type === "player_connect")).toHaveLength(2);
    online.splice(1); // Bob left while the plugin was away
    await plugin.restart();
    await until(() => events.some((e) => e.type === "player_disconnect"), "Bob gone after the resync");
    expect(events.filter((e) => e.type === "player_disconnect").map((e) => "player" in e && e.player.name)).toEqual([
      "Bob",
    ]);
    expect((await bridge.status()).players.map((p) => p.name)).toEqual(["Alice"]);
  });
});

describe("plugin config", () => {
  const env = { HUB_GAME_BRIDGE: "plugin", HUB_GAME_PRESET: "minecraft" };
  test("the token is required, and redacted like every secret", async () => {
    expect(await problems(env)).toEqual([expect.stringContaining("game.rcon.password is missing")]);
    const r = await loadConfig({ env: { ...base, ...env, HUB_GAME_RCON_PASSWORD: TOKEN }, cwd: "/" });
    expect(r.secrets).toContain(TOKEN);
  });

  test("a short token is refused: a squatter on the port could guess it offline", async () => {
    expect(await problems({ ...env, HUB_GAME_RCON_PASSWORD: "fifteen-chars-x" })).toEqual([
      "game.rcon.password (from HUB_GAME_RCON_PASSWORD) is too short for a plugin token: use a random one of at least 16 characters (openssl rand -hex 24), in the plugin's settings too",
    ]);
    expect(await problems({ ...env, HUB_GAME_RCON_PASSWORD: "sixteen-chars-xx" })).toEqual([]);
    // From a file, read after the check: refused before the port is opened.
    const dir = mkdtempSync(join(tmpdir(), "hub-plugin-"));
    writeFileSync(join(dir, "token"), "short\n");
    const c = await config({ ...env, HUB_GAME_RCON_PASSWORD_FILE: join(dir, "token") });
    await expect(createBridge(c, { clock: systemClock, logger: memoryLogger() })).rejects.toThrow(
      /token .* is too short/,
    );
  });

  test("listening beyond loopback needs game.rcon.allow_remote", async () => {
    const remote = { ...env, HUB_GAME_RCON_PASSWORD: TOKEN, HUB_GAME_RCON_HOST: "0.0.0.0" };
    expect(await problems(remote)).toEqual([
      'game.rcon.host = "0.0.0.0" (from HUB_GAME_RCON_HOST) is not a loopback address, so plugins on other machines could try tokens: use 127.0.0.1 when the game server runs here, or set game.rcon.allow_remote = true if it runs elsewhere',
    ]);
    expect(await problems({ ...remote, HUB_GAME_RCON_ALLOW_REMOTE: "true" })).toEqual([]);
    expect(await problems({ ...env, HUB_GAME_RCON_PASSWORD: TOKEN, HUB_GAME_RCON_HOST: "::1" })).toEqual([]);
  });
});

describe("doctor through the registry", () => {
  const env = (port: number, token = TOKEN) => ({
    HUB_GAME_BRIDGE: "plugin",
    HUB_GAME_PRESET: "minecraft",
    HUB_GAME_RCON_PORT: String(port),
    HUB_GAME_RCON_PASSWORD: token,
  });

  test("a plugin connects within the time: ok, with the players", async () => {
    const port = await freePort("tcp");
    const plugin = FakePlugin.start({ port, token: TOKEN, players: () => [{ id: ALICE, name: "Alice" }] });
    cleanups.push(() => plugin.close());
    const [check] = await checkGame(await config(env(port)), { timeoutMs: 5000 });
    expect(check).toEqual({
      name: "game",
      status: "ok",
      message: `plugin protocol 127.0.0.1:${port} (Minecraft (vanilla/Paper + LuckPerms)): a plugin connected, token accepted; 1 players online: Alice`,
    });
  });

  test("a wrong token is a config failure; nobody connecting is unreachable; a port in use is named", async () => {
    const port = await freePort("tcp");
    const plugin = FakePlugin.start({ port, token: "other" });
    cleanups.push(() => plugin.close());
    const [wrong] = await checkGame(await config(env(port)), { timeoutMs: 5000 });
    expect(wrong).toMatchObject({ status: "fail", kind: "config" });
    expect(wrong!.message).toContain("presented a wrong token");
    await plugin.close();
    const [nobody] = await checkGame(await config(env(port)), { timeoutMs: 300 });
    expect(nobody).toMatchObject({
      status: "fail",
      kind: "unreachable",
      message: `plugin protocol 127.0.0.1:${port}: no plugin connected to 127.0.0.1:${port} within 300 ms`,
    });
    const busy = net.createServer();
    await new Promise<void>((resolve) => busy.listen(port, "127.0.0.1", () => resolve()));
    cleanups.push(() => new Promise<void>((resolve) => busy.close(() => resolve())));
    const [inUse] = await checkGame(await config(env(port)), { timeoutMs: 300 });
    expect(inUse).toMatchObject({ status: "fail", kind: "failure" });
    expect(inUse!.message).toContain("the address is in use");
  });
});

describe("run", () => {
  test("the plugin's port in use: `run` exits 1 with one line naming the address", async () => {
    const busy = net.createServer();
    await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", () => resolve()));
    cleanups.push(() => new Promise<void>((resolve) => busy.close(() => resolve())));
    const port = (busy.address() as net.AddressInfo).port;
    const home = mkdtempSync(join(tmpdir(), "hub-plugin-run-"));
    const r = await hubBinary(["run"], {
      env: {
        ...base,
        HUB_STORAGE_DIR: join(home, "data"),
        HUB_GAME_BRIDGE: "plugin",
        HUB_GAME_PRESET: "minecraft",
        HUB_GAME_RCON_PORT: String(port),
        HUB_GAME_RCON_PASSWORD: TOKEN,
      },
    });
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n").at(-1)).toBe(
      `error: could not listen for the plugin on 127.0.0.1:${port}: the address is in use (another hub-agent, or another program)`,
    );
  }, 120_000); // the first CLI step may wait for the compile on a loaded machine
});
