/**
 * A squatter on the plugin port (docs/plugin-protocol.md §4.1). The port is unprivileged, so any local user can bind
 * it while hub-agent's `run` is down (boot, restart, a crash) and hear the shipped plugin
 * (plugins/flying-squid/index.js) connect. Before protocol version 2 the plugin's hello carried the token: the
 * squatter learnt it, and later logged in as the plugin, replaced the real one and spoke for the game (invented
 * players and chat, kicks answered "done"). Now it hears a hello whose HMAC covers only its own challenge: the token
 * is in nothing it hears, the plugin neither answers its requests nor sends it events (it can't prove the token
 * back), and the hello replayed to the real hub-agent is a wrong token: the real plugin stays.
 */
import { afterAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import * as net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { until } from "../support/until.ts";
import { freePort, online, startWorld, stopWorld, type World } from "./world.ts";

const TOKEN = "the-operators-secret-plugin-token";
const ALICE = "069a79f4-44e9-4726-a5be-fca90e38aaf5";
let w: World | undefined;
let stopPlugin = () => {};
afterAll(async () => {
  stopPlugin();
  await stopWorld(w);
});

/** One JSON object per line: each complete line of `text`, parsed. */
const lines = (text: string) =>
  text
    .split("\n")
    .slice(0, -1)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

test("a squatter on the plugin port learns nothing it can use and can't replace the plugin", async () => {
  const port = await freePort("tcp");
  // 1. The squatter (any local user: port > 1024) listens first, greets like hub-agent and records what it hears.
  let heard = "";
  const socks: net.Socket[] = [];
  const squatter = net.createServer((s) => {
    socks.push(s);
    s.on("data", (d) => (heard += String(d)));
  });
  await new Promise<void>((r) => squatter.listen(port, "127.0.0.1", () => r()));

  // 2. The real plugin, as flying-squid loads it, with the operator's settings; a player it could kick.
  const plugin = require("../../plugins/flying-squid/index.js");
  const handlers: Record<string, () => void> = {};
  const said: string[] = [];
  const done: string[] = [];
  const serv = {
    info: (m: string) => said.push(m),
    on: (e: string, f: () => void) => (handlers[e] = f),
    players: [] as unknown[],
    uuidToPlayer: { [ALICE]: { kick: () => done.push("kick"), chat: () => done.push("message") } },
    broadcast: () => done.push("broadcast"),
    commands: { use: async () => void done.push("exec") },
  };
  plugin.server.call({ settings: { host: "127.0.0.1", port, token: TOKEN } }, serv);
  stopPlugin = () => handlers.close?.();
  await until(() => socks.length > 0, "the plugin at the squatter");
  await Bun.sleep(200);
  expect(heard).toBe(""); // nothing before a challenge

  // The squatter challenges with a nonce of its choosing, then welcomes with what it can: the plugin's own proof.
  const sock = socks[0]!;
  const agentNonce = randomBytes(32).toString("hex");
  sock.write(`${JSON.stringify({ t: "challenge", v: 2, nonce: agentNonce })}\n`);
  await until(() => heard.includes("\n"), "the plugin's hello at the squatter");
  const hello = lines(heard)[0]!;
  expect(Object.keys(hello).sort()).toEqual(["game", "mac", "nonce", "software", "t", "v"]);
  expect(heard).not.toContain(TOKEN);
  const closed = new Promise((r) => sock.once("close", r));
  sock.write(`${JSON.stringify({ t: "welcome", v: 2, mac: hello.mac })}\n`);
  for (const [id, op] of [
    [1, "kick"],
    [2, "exec"],
    [3, "message"],
  ] as const)
    sock.write(`${JSON.stringify({ t: "req", id, op, p: ALICE, reason: "x", cmd: "op Mallory", text: "x" })}\n`);
  await closed; // the plugin hung up: the squatter could not prove the token
  expect(said).toContainEqual(expect.stringMatching(/could not prove it knows the token: not hub-agent/));
  expect(lines(heard).map((m) => m.t)).toEqual(["hello"]); // no answer, no event
  expect(done).toEqual([]);

  // 3. The squatter lets go; hub-agent starts; the real plugin reconnects (its backoff).
  for (const s of socks) s.destroy();
  await new Promise<void>((r) => squatter.close(() => r()));
  w = await startWorld(mkdtempSync(join(tmpdir(), "hub-squat-")), {
    HUB_GAME_BRIDGE: "plugin",
    HUB_GAME_PRESET: "minecraft",
    HUB_GAME_RCON_PORT: String(port),
    HUB_GAME_RCON_PASSWORD: TOKEN,
  });
  const world = w;
  await until(() => world.bridge.health().state === "up", "the real plugin in", { timeoutMs: 30_000 });

  // 4. The squatter replays what it heard: another challenge, so a wrong token; its events are never read.
  const evil = net.connect(port, "127.0.0.1");
  let got = "";
  evil.on("data", (d) => (got += String(d)));
  evil.on("error", () => {});
  await until(() => got.includes("\n"), "hub-agent's challenge");
  expect(lines(got)[0]).toMatchObject({ t: "challenge", v: 2 });
  evil.write(`${JSON.stringify(hello)}\n`);
  evil.write(`${JSON.stringify({ t: "event", e: "player_connect", p: { id: ALICE, name: "Alice" } })}\n`);
  await new Promise((r) => evil.once("close", r));
  expect(lines(got).map((m) => [m.t, m.error])).toEqual([
    ["challenge", undefined],
    ["error", "auth"],
  ]);
  expect(got).not.toContain('"mac"'); // hub-agent proves nothing to a peer that didn't prove first
  // The real plugin is still the one: not replaced, nobody invented is let in, and requests reach it.
  const msgs = world.logger.lines.map((l) => l.msg);
  expect(msgs.filter((m) => m.includes("is replaced by"))).toEqual([]);
  expect(msgs).toContainEqual(expect.stringContaining("presented a wrong token"));
  expect(online(world)).toEqual([]);
  expect(done).toEqual([]);
  await world.bridge.exec("list");
  expect(done).toEqual(["exec"]);
}, 60_000);
