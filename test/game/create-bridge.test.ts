import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { systemClock } from "../../lib/clock.ts";
import { loadConfig } from "../../lib/app/config.ts";
import type { BridgeEvent, GameBridge } from "../../lib/game/bridge.ts";
import { createBridge } from "../../lib/game/index.ts";
import { PresetBridge } from "../../lib/game/preset-bridge.ts";
import { SimGame } from "../../lib/game/sim.ts";
import { mayHaveRun, type TransportError } from "../../lib/game/transports/transport.ts";
import { until } from "../support/until.ts";
import { memoryLogger } from "../../lib/log.ts";
import { FakeQ3Server } from "./transports/fake-q3-server.ts";
import { FakeSourceRconServer } from "./transports/fake-source-rcon-server.ts";
import { FakeWebRconServer } from "./transports/fake-web-rcon-server.ts";

const base = {
  HUB_API_URL: "https://api.example/x/v1",
  HUB_API_KEY: "k-0123456789",
  HUB_API_SERVER_ID: "541d1c41-1b58-40fc-8780-70c400ea5686",
  HUB_GAME_BRIDGE: "sim",
};
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function bridgeFor(env: Record<string, string>): Promise<GameBridge> {
  const r = await loadConfig({ env: { ...base, ...env }, cwd: mkdtempSync(join(tmpdir(), "hub-create-")) });
  if (!r.ok) throw new Error(r.problems.join("\n"));
  const bridge = await createBridge(r.config, { clock: systemClock, logger: memoryLogger(), input: new PassThrough() });
  cleanups.push(() => bridge.stop());
  return bridge;
}

describe("createBridge", () => {
  test("sim stays the simulated game", async () => {
    expect(await bridgeFor({})).toBeInstanceOf(SimGame);
  });

  test("rcon: the preset's dialect, the configured port and password", async () => {
    const fake = await FakeSourceRconServer.start({
      dialect: "minecraft",
      handler: (c) => (c === "list uuids" ? "There are 0 of a max of 8 players online:" : ""),
    });
    cleanups.push(() => fake.close());
    const bridge = await bridgeFor({
      HUB_GAME_BRIDGE: "rcon",
      HUB_GAME_PRESET: "minecraft",
      HUB_GAME_RCON_PORT: String(fake.port),
      HUB_GAME_RCON_PASSWORD: "secret",
      HUB_GAME_OVERRIDES_COMMAND_PREFIX: "/",
    });
    expect(bridge).toBeInstanceOf(PresetBridge);
    expect(bridge.userType).toBe("MINECRAFT");
    expect(bridge.nameId).toBeUndefined(); // platform ids: a nick is never an id
    expect((bridge as PresetBridge).preset.commandPrefix).toBe("/");
    expect(await bridge.status()).toEqual({ players: [], maxPlayers: 8 });
    expect(fake.commands).toEqual(["list uuids"]);
  });

  test("q3rcon: replies are parsed for events", async () => {
    const fake = await FakeQ3Server.start({
      handler: (c) => (c === "addbot sarge" ? "ClientUserinfoChanged: 0 n\\Sarge\\id\\\nClientConnect: 0\n" : ""),
    });
    cleanups.push(() => fake.close());
    const bridge = await bridgeFor({
      HUB_GAME_BRIDGE: "q3rcon",
      HUB_GAME_PRESET: "openarena",
      HUB_GAME_RCON_PORT: String(fake.port),
      HUB_GAME_RCON_PASSWORD: "secret",
    });
    const seen: string[] = [];
    bridge.on((e) => seen.push(e.type));
    await bridge.exec("addbot sarge");
    expect(seen).toEqual(["player_connect"]);
  });

  test("wrapper: operator input is an event this bridge reports; the server starts with the bridge", async () => {
    const bridge = await bridgeFor({
      HUB_GAME_BRIDGE: "wrapper",
      HUB_GAME_PRESET: "openarena",
      HUB_GAME_WRAPPER_COMMAND: JSON.stringify(["/nonexistent/openarena-server"]),
    });
    expect(bridge.caps.events.has("operator_input")).toBe(true);
    // Players known by name: the console's `ban <name>` names an offline player by the id the game gives it.
    expect(bridge.nameId?.("^1Gri^7efer")).toBe("Griefer");
    await expect(bridge.start()).rejects.toThrow("cannot start");
  });

  test("gmod over rcon runs SCRIPT rewards as lua_run lines; minecraft has no script console", async () => {
    let chunks = 0;
    let hangOnChunk = 0;
    const fake = await FakeSourceRconServer.start({
      handler: (c) => (c.startsWith("lua_run _G.") && ++chunks === hangOnChunk ? new Promise<string>(() => {}) : ""),
    });
    cleanups.push(() => fake.close());
    const env = { HUB_GAME_RCON_PORT: String(fake.port), HUB_GAME_RCON_PASSWORD: "secret", HUB_GAME_BRIDGE: "rcon" };
    expect((await bridgeFor({ ...env, HUB_GAME_PRESET: "minecraft" })).script).toBeUndefined();
    const bridge = await bridgeFor({ ...env, HUB_GAME_PRESET: "gmod" });
    const code = `PLAYER:ChatPrint(${bridge.script!.escape('Thanks "you"; quit')}) ${"-- padding ".repeat(60)}`;
    await bridge.script!.run(code, { id: "76561198000000001", name: "Carol" });
    expect(fake.commands.length).toBeGreaterThan(2);
    expect(fake.commands.every((c) => c.startsWith("lua_run "))).toBe(true);
    expect(fake.commands.at(-1)).toContain("RunString(util.Base64Decode(s)");
    // A line before the last one is lost: the code was not run, so the reward may be tried again.
    fake.commands.length = 0;
    chunks = 0;
    hangOnChunk = 2;
    const pending = bridge.script!.run(code, null).catch((e: TransportError) => e);
    await until(() => fake.commands.length === 2, "the second chunk");
    await fake.restart();
    const err = (await pending) as TransportError;
    expect(err.message).toContain("the script was not run");
    expect(mayHaveRun(err)).toBe(false);
    expect(fake.commands.some((c) => c.includes("RunString"))).toBe(false);
  });

  test("webrcon: Rust's broadcast is the event stream; chat comes from its fields, so a nick can't forge an id", async () => {
    const fake = await FakeWebRconServer.start({
      handler: (c) =>
        c === "playerlist" ? JSON.stringify([{ SteamID: "76561198000000001", DisplayName: "Alice", Ping: 20 }]) : "",
    });
    cleanups.push(() => fake.close());
    const bridge = await bridgeFor({
      HUB_GAME_BRIDGE: "webrcon",
      HUB_GAME_PRESET: "rust",
      HUB_GAME_RCON_PORT: String(fake.port),
      HUB_GAME_RCON_PASSWORD: "secret",
    });
    const events: BridgeEvent[] = [];
    bridge.on((e) => void events.push(e));
    await bridge.start();
    expect((await bridge.status()).players).toEqual([{ id: "76561198000000001", name: "Alice", extra: { Ping: 20 } }]);
    fake.broadcast("203.0.113.7:61234/76561198000000002/Bob joined [windows/76561198000000002]");
    fake.chat("76561198000000002", "Bob[76561198000000001] : !ban Alice", "!dashboard");
    // Rust's console echo of the chat line is not a second copy.
    fake.broadcast("[CHAT] Bob[76561198000000001] : !dashboard");
    await until(() => events.some((e) => e.type === "chat_command"), "the chat command");
    const bob = events.find((e) => e.type === "player_connect" && e.player.id === "76561198000000002");
    expect(bob).toBeDefined();
    const chats = events.filter((e) => e.type === "chat_command");
    expect(chats).toEqual([
      expect.objectContaining({ command: "dashboard", player: expect.objectContaining({ id: "76561198000000002" }) }),
    ]);
  });
});
