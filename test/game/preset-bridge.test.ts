/**
 * The composed bridge over real transports (the in-repo Source RCON and Quake 3 servers), a real log tail on a
 * temporary file, and a stand-in for the wrapper's process events.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { EventEmitter } from "node:events";
import { appendFileSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ManualClock, systemClock } from "../../lib/clock.ts";
import type { BridgeEvent } from "../../lib/game/bridge.ts";
import { PresetBridge, type PresetBridgeOptions, type ServerProcess } from "../../lib/game/preset-bridge.ts";
import { resolvePreset } from "../../lib/game/presets/index.ts";
import { LogTail } from "../../lib/game/sources/log-tail.ts";
import { Q3Rcon } from "../../lib/game/transports/q3-rcon.ts";
import { SourceRcon } from "../../lib/game/transports/source-rcon.ts";
import { memoryLogger } from "../../lib/log.ts";
import { until } from "../agent/harness.ts";
import { ioq3Status } from "../support/ioq3-status.ts";
import { RecordingTransport, StubLines } from "./presets/recording.ts";
import { FakeQ3Server } from "./transports/fake-q3-server.ts";
import { FakeSourceRconServer } from "./transports/fake-source-rcon-server.ts";

const ALICE = "069a79f4-44e9-4726-a5be-fca90e38aaf5";
const BOB = "853c80ef-3c37-49fd-aa49-938b674adae6";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

function record(bridge: PresetBridge) {
  const events: BridgeEvent[] = [];
  bridge.on((e) => events.push(e));
  const kinds = () =>
    events.map((e) => (e.type === "down" ? "down" : `${e.type}${"player" in e ? ` ${e.player.name}` : ""}`));
  return { events, kinds };
}

/** A Minecraft server behind Source RCON whose online players the test sets. */
async function minecraftServer() {
  const online = new Map<string, string>();
  const fake = await FakeSourceRconServer.start({
    dialect: "minecraft",
    handler: (command) => {
      if (command !== "list uuids") return "";
      const rows = [...online].map(([name, id]) => `${name} (${id})`).join(", ");
      return `There are ${online.size} of a max of 20 players online: ${rows}`;
    },
  });
  cleanups.push(() => fake.close());
  return { fake, online };
}

function rconBridge(fake: FakeSourceRconServer, extra: Partial<PresetBridgeOptions> = {}) {
  const transport = new SourceRcon({
    host: fake.host,
    port: fake.port,
    password: "secret",
    dialect: "minecraft",
    backoff: { initialMs: 10, maxMs: 20 },
    timeoutMs: 2000,
  });
  const bridge = new PresetBridge({
    preset: resolvePreset("minecraft"),
    transport,
    pollIntervalMs: 0,
    clock: systemClock,
    logger: memoryLogger(),
    ...extra,
  });
  cleanups.push(() => bridge.stop());
  return bridge;
}

describe("PresetBridge over Source RCON (minecraft)", () => {
  test("ready once the list answers; players found by polling; commands reach the server", async () => {
    const { fake, online } = await minecraftServer();
    online.set("Alice", ALICE);
    const bridge = rconBridge(fake);
    const { kinds } = record(bridge);
    await bridge.start();
    await until(() => kinds().includes("player_connect Alice"), "Alice to be found");
    expect(kinds()).toEqual(["ready", "player_connect Alice"]);
    const status = await bridge.status();
    expect(status).toEqual({ players: [{ id: ALICE, name: "Alice" }], maxPlayers: 20 });

    await bridge.kick({ id: ALICE, name: "Alice" }, "Breaking rules");
    await bridge.message(null, "hello\nworld");
    expect(fake.commands.filter((c) => c !== "list uuids")).toEqual([
      `kick ${ALICE} Breaking rules`,
      'tellraw @a {"text":"hello"}',
      'tellraw @a {"text":"world"}',
    ]);
  });

  test("down when the server goes away, ready and a resync when it is back", async () => {
    const { fake, online } = await minecraftServer();
    online.set("Alice", ALICE).set("Bob", BOB);
    const bridge = rconBridge(fake);
    const { kinds } = record(bridge);
    await bridge.start();
    await until(() => kinds().includes("ready"), "ready");
    await fake.close(); // the server stops…
    await until(() => kinds().includes("down"), "down");
    online.delete("Bob"); // …and comes back without Bob
    await fake.restart();
    await until(() => kinds().includes("player_disconnect Bob"), "the resync after the reconnect");
    expect(kinds()).toEqual([
      "ready",
      "player_connect Alice",
      "player_connect Bob",
      "down",
      "ready",
      "player_disconnect Bob",
    ]);
    expect(bridge.caps.events.has("operator_input")).toBe(false);
  });

  test("a game that is down at startup is logged once, without a down event", async () => {
    const { fake } = await minecraftServer();
    await fake.close();
    const logger = memoryLogger();
    const transport = new SourceRcon({ host: fake.host, port: fake.port, password: "secret", timeoutMs: 200 });
    const bridge = rconBridge(fake, { logger, transport });
    const { kinds } = record(bridge);
    await bridge.start();
    await expect(bridge.status()).rejects.toThrow("ECONNREFUSED");
    await expect(bridge.status()).rejects.toThrow();
    const warnings = logger.lines.filter((l) => l.level === "warn" && l.msg.includes("is not reachable"));
    expect(warnings).toHaveLength(1);
    expect(kinds()).toEqual([]);
  });

  test("a log file's join line and the poll report one connect; chat commands come from the log", async () => {
    const { fake, online } = await minecraftServer();
    const dir = mkdtempSync(join(tmpdir(), "hub-bridge-"));
    const path = join(dir, "latest.log");
    writeFileSync(path, "[11:59:00] [Server thread/INFO]: Starting minecraft server\n");
    const tail = new LogTail({ path, pollMs: 10 });
    const bridge = rconBridge(fake, { sources: [tail] });
    const { events, kinds } = record(bridge);
    await bridge.start();
    await until(() => kinds().includes("ready"), "ready");
    online.set("Alice", ALICE);
    appendFileSync(
      path,
      `[12:00:01] [User Authenticator #1/INFO]: UUID of player Alice is ${ALICE}\n` +
        "[12:00:01] [Server thread/INFO]: Alice joined the game\n" +
        "[12:00:05] [Server thread/INFO]: <Alice> !dashboard\n",
    );
    await until(() => kinds().includes("chat_command Alice"), "the chat command");
    await bridge.status();
    await bridge.status();
    expect(kinds().filter((k) => k === "player_connect Alice")).toHaveLength(1);
    expect(events.find((e) => e.type === "chat_command")).toMatchObject({ command: "dashboard", args: [] });
    expect(bridge.caps.events.has("chat_command")).toBe(true);
  });
});

describe("PresetBridge over Quake 3 rcon (openarena)", () => {
  test("events printed into rcon replies are seen; kick by slot", async () => {
    let status = ioq3Status("oa_dm1", [{ slot: 0, name: "Sarge", address: "bot" }]);
    const fake = await FakeQ3Server.start({
      handler: (c) => {
        if (c === "status") return status;
        if (c === "addbot grunt 1")
          return "ClientUserinfoChanged: 1 n\\Grunt\\t\\0\\id\\\nClientConnect: 1\nClientBegin: 1\n";
        if (c === "clientkick 0") {
          status = ioq3Status("oa_dm1", []);
          return "Sarge was kicked\nClientDisconnect: 0\n";
        }
        return "";
      },
    });
    cleanups.push(() => fake.close());
    const bridge = new PresetBridge({
      preset: resolvePreset("openarena"),
      transport: new Q3Rcon({ host: fake.host, port: fake.port, password: "secret", quietMs: 30 }),
      parseReplies: true,
      pollIntervalMs: 0,
      clock: systemClock,
      logger: memoryLogger(),
    });
    cleanups.push(() => bridge.stop());
    const { kinds } = record(bridge);
    await bridge.start();
    await until(() => kinds().includes("ready"), "ready");
    await bridge.exec("addbot grunt 1");
    expect(kinds()).toEqual(["ready", "player_connect Sarge", "player_connect Grunt", "player_spawn Grunt"]);
    await bridge.kick({ id: "Sarge", name: "Sarge" }, "bye");
    expect(kinds().at(-1)).toBe("player_disconnect Sarge");
    expect((await bridge.status()).map).toBe("oa_dm1");
  });
});

describe("PresetBridge with the wrapper's process events", () => {
  function wrapped() {
    const proc = new EventEmitter();
    const process: ServerProcess = {
      on(event, fn) {
        proc.on(event, fn);
        return () => proc.off(event, fn);
      },
    };
    const lines = new StubLines();
    const transport = new RecordingTransport(() => "");
    const bridge = new PresetBridge({
      preset: resolvePreset("openarena"),
      transport,
      sources: [lines],
      process,
      pollIntervalMs: 10_000,
      clock: new ManualClock(),
      logger: memoryLogger(),
    });
    cleanups.push(() => bridge.stop());
    return { proc, lines, bridge, transport, ...record(bridge) };
  }

  test("ready from the process; a down takes every player with it; operator lines become events", async () => {
    const w = wrapped();
    await w.bridge.start();
    expect(w.kinds()).toEqual([]);
    w.proc.emit("ready");
    w.lines.push("ClientUserinfoChanged: 0 n\\Sarge\\id\\", "ClientConnect: 0");
    w.proc.emit("operator_input", "ban Sarge 10 griefing");
    w.proc.emit("down", "the server exited with code 1");
    expect(w.kinds()).toEqual(["ready", "player_connect Sarge", "operator_input", "down", "player_disconnect Sarge"]);
    expect(w.events.find((e) => e.type === "operator_input")).toEqual({
      type: "operator_input",
      line: "ban Sarge 10 griefing",
    });
    expect(w.events.at(-1)).toMatchObject({ reason: "the server exited with code 1" });
    expect(w.bridge.caps.events.has("operator_input")).toBe(true);
    await w.bridge.stop();
    expect(w.lines.stopped).toBe(true);
  });

  test("onEnd: only an exit that no restart follows", () => {
    const w = wrapped();
    const ends: unknown[] = [];
    w.bridge.onEnd((end) => ends.push(end));
    w.proc.emit("exit", { reason: "the server exited with code 3", requested: false, restarting: true });
    expect(ends).toEqual([]);
    w.proc.emit("exit", { reason: "the server exited with code 3", requested: false, restarting: false });
    expect(ends).toEqual([{ reason: "the server exited with code 3", requested: false }]);
  });
});

describe("echo suppression", () => {
  test("a group change the agent made is not reported back; another one (or a late one) is", async () => {
    // ULX's log line for adduserid, anchored so chat can't forge it.
    const preset = resolvePreset("gmod", {
      lines: {
        group_add: String.raw`^\[ULX\] \(Console\) added userid (?<id>STEAM_[0-5]:[01]:\d+) to group (?<group>[\w.-]+)$`,
      },
    });
    const clock = new ManualClock();
    const lines = new StubLines();
    const transport = new RecordingTransport((c) => {
      // The game reports our own change while the command runs.
      if (c.startsWith("ulx adduserid")) lines.push("[ULX] (Console) added userid STEAM_0:0:11101 to group vip");
      return "";
    });
    const bridge = new PresetBridge({
      preset,
      transport,
      sources: [lines],
      pollIntervalMs: 0,
      clock,
      logger: memoryLogger(),
    });
    const { events } = record(bridge);
    await bridge.start();
    const alice = { id: "76561197960287930", name: "Alice" };
    await bridge.setGroup(alice, "vip", "add");
    expect(events.filter((e) => e.type === "group_change")).toEqual([]);
    lines.push("[ULX] (Console) added userid STEAM_0:0:11101 to group admin");
    await clock.advance(30_000);
    lines.push("[ULX] (Console) added userid STEAM_0:0:11101 to group vip");
    expect(events.filter((e) => e.type === "group_change")).toEqual([
      { type: "group_change", player: { id: alice.id, name: alice.id }, group: "admin", op: "add" },
      { type: "group_change", player: { id: alice.id, name: alice.id }, group: "vip", op: "add" },
    ]);
    expect(bridge.caps.events.has("group_change")).toBe(true);
    await bridge.stop();
  });
});
