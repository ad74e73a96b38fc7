/**
 * End-to-end through the plugin protocol against a real Minecraft server: flying-squid (npm, a Minecraft server in
 * JavaScript, run with Node as its operators do) with hub-agent's plugin (plugins/flying-squid/), hub-agent against
 * the in-memory service, and a real Minecraft client, a mineflayer bot, in offline mode. The plugin connects to
 * hub-agent with its token; the bot's join is registered with its UUID (the offline-mode UUID, computed here as the
 * game does), its `!dashboard` is answered in its chat, a reward's `give` puts diamonds in its inventory, its death
 * and an `op` given in the game arrive as events, and `hub-agent ban` (the compiled CLI) gets it kicked, and kicked
 * again when it comes back.
 *
 * Both servers bind 127.0.0.1; flying-squid has no master server or heartbeat in offline mode. Skipped, with the
 * reason, when flying-squid or mineflayer (devDependencies, installed by `npm ci`) or Node is missing.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sendStatus } from "../../lib/features/status.ts";
import { binary, hubBinary } from "../cli/binary.ts";
import { spawn } from "../support/procs.ts";
import { until } from "../support/until.ts";
import { freePort, startWorld, stopWorld, type World } from "./world.ts";

const root = join(import.meta.dir, "../..");
const VERSION = "1.21.4";
const TOKEN = "hub-plugin-token-for-the-test";
const node = Bun.which("node");
const nodeMajor = node
  ? Number(Bun.spawnSync([node, "-p", "process.versions.node.split('.')[0]"]).stdout.toString())
  : 0;
const missing = !existsSync(join(root, "node_modules/flying-squid"))
  ? "flying-squid is not installed (a devDependency: run npm ci)"
  : !existsSync(join(root, "node_modules/mineflayer"))
    ? "mineflayer is not installed (a devDependency: run npm ci)"
    : nodeMajor < 18
      ? `flying-squid needs Node 18 or newer on PATH (found ${node ? `Node ${nodeMajor}` : "none"})`
      : undefined;
if (missing) console.warn(`SKIPPED: the flying-squid test: ${missing}`);

const SLOW = { timeoutMs: 30_000 };

/** The UUID an offline-mode Minecraft server gives a name: version 3 of MD5("OfflinePlayer:" + name). */
function offlineUuid(name: string): string {
  const b = createHash("md5").update(`OfflinePlayer:${name}`).digest();
  b[6] = (b[6]! & 0x0f) | 0x30;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

type Bot = import("mineflayer").Bot;

describe.skipIf(missing !== undefined)("flying-squid + mineflayer through the plugin protocol (real server)", () => {
  let w: World;
  let mcPort: number;
  let server: ReturnType<typeof spawn<"pipe", "pipe", "pipe">>;
  let serverLog = "";
  const bots: Bot[] = [];
  const NAME = "Bot1";
  const uuid = offlineUuid(NAME);

  /** A bot that joins and spawns, keeping every chat line it sees and why it was kicked. */
  async function joinBot(name: string) {
    const { createBot } = await import("mineflayer");
    const bot = createBot({ host: "127.0.0.1", port: mcPort, username: name, auth: "offline", version: VERSION });
    bots.push(bot);
    const seen = { chat: [] as string[], kicked: undefined as string | undefined, ended: false };
    bot.on("messagestr", (m) => void seen.chat.push(m));
    bot.on("kicked", (reason) => {
      seen.kicked = typeof reason === "string" ? reason : JSON.stringify(reason);
    });
    bot.on("end", () => {
      seen.ended = true;
    });
    bot.on("error", () => {}); // "end" follows
    return { bot, seen };
  }

  beforeAll(async () => {
    const home = mkdtempSync(join(tmpdir(), "hub-flying-squid-"));
    void binary().catch(() => {}); // compiles while the game starts
    const pluginPort = await freePort("tcp");
    mcPort = await freePort("tcp");
    // The operator's configuration, as in docs/plugin-protocol.md: hub-agent listens, the token is the password.
    w = await startWorld(home, {
      HUB_GAME_BRIDGE: "plugin",
      HUB_GAME_PRESET: "minecraft",
      HUB_GAME_RCON_PORT: String(pluginPort),
      HUB_GAME_RCON_PASSWORD: TOKEN,
    });
    const settings = {
      port: mcPort,
      version: VERSION,
      worldFolder: join(home, "world"),
      plugin: { host: "127.0.0.1", port: pluginPort, token: TOKEN },
    };
    server = spawn([node!, join(import.meta.dir, "flying-squid-server.cjs"), JSON.stringify(settings)], {
      cwd: home,
      env: { PATH: process.env.PATH ?? "", HOME: home, CI: "true" },
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
      scope: "file",
    });
    const decoder = new TextDecoder();
    const drain = async (stream: ReadableStream<Uint8Array>) => {
      for await (const chunk of stream) serverLog += decoder.decode(chunk, { stream: true });
    };
    void drain(server.stdout);
    void drain(server.stderr);
    await until(() => w.bridge.health().state === "up", "the plugin to connect and list the players", {
      ...SLOW,
      diagnostics: () => serverLog,
      abort: () => (server.exitCode !== null ? `flying-squid exited with ${server.exitCode}` : undefined),
    });
  }, 60_000);

  afterAll(async () => {
    for (const bot of bots) bot.end();
    server?.kill("SIGTERM");
    await server?.exited;
    await stopWorld(w);
  });

  test("the plugin authenticated with the token; the token appears in no log line", () => {
    expect(w.logger.lines.map((l) => l.msg)).toContainEqual(
      expect.stringMatching(/^the plugin connected from 127\.0\.0\.1:\d+ \(minecraft, flying-squid\)$/),
    );
    expect(serverLog).toContain("[hub-agent] connected to hub-agent at 127.0.0.1:");
    expect(JSON.stringify(w.logger.lines)).not.toContain(TOKEN);
  });

  let first: Awaited<ReturnType<typeof joinBot>>;
  test("a bot joins: registered with its offline-mode UUID as a MINECRAFT user, and counted", async () => {
    first = await joinBot(NAME);
    await until(() => w.agent.players.has(uuid), `${NAME} (${uuid}) let in`, { ...SLOW, diagnostics: () => serverLog });
    expect(w.agent.players.get(uuid)).toMatchObject({ id: uuid, name: NAME });
    await until(() => w.agent.users.get(uuid) !== undefined, "the service user", SLOW);
    expect(w.sb.state.findUser(uuid, "MINECRAFT")).toMatchObject({ identifier: uuid });
    expect(w.events).toContainEqual({
      type: "player_connect",
      player: { id: uuid, name: NAME, extra: { ip: "127.0.0.1" } },
    });
    const spawned = () => w.events.some((e) => e.type === "player_spawn" && e.player.id === uuid);
    await until(spawned, "the spawn event (no console prints one)", SLOW);
    await sendStatus(w.agent);
    expect(w.sb.state.servers.get(w.sb.serverId)?.users_current).toBe(1);
  }, 40_000);

  test("the bot chats `!dashboard`: the answer arrives in its chat", async () => {
    await until(() => first.bot.entity !== undefined && first.bot.entity !== null, "the bot spawned", SLOW);
    first.bot.chat("!dashboard");
    await until(() => first.seen.chat.some((m) => m.startsWith("Server dashboard: ")), "the dashboard link", SLOW);
    expect(first.seen.chat.find((m) => m.startsWith("Server dashboard: "))).toContain("http");
  }, 40_000);

  test("a reward with a game command (`give`) runs: the diamonds land in the bot's inventory", async () => {
    const user = w.sb.state.findUser(uuid, "MINECRAFT")!;
    const applied = w.sb.state.addReward({
      user_id: user.id,
      reward: { name: "Diamonds", type: "COMMAND", data: { command: "give %nick% diamond 3" }, on_event: "DIRECT" },
    });
    const diamonds = () => first.bot.inventory.items().find((i) => i.name === "diamond")?.count ?? 0;
    await until(() => diamonds() === 3, "3 diamonds in the bot's inventory", SLOW);
    await until(() => applied.executed_on.includes(w.sb.serverId), "the reward reported executed", SLOW);
  }, 40_000);

  test("a command that breaks after its effect counts as run (its error in the output); one refused before it ran is refused", async () => {
    // Answered "ok":false, the first would be taken as not done, and a `once` reward would run a second time.
    expect(await w.bridge.exec("hubtest-break")).toContain("error: broke after its effect");
    await until(() => first.seen.chat.includes("hubtest-break had its effect"), "the command's effect", SLOW);
    await expect(w.bridge.exec("no-such-command")).rejects.toThrow("Command not found");
  }, 40_000);

  test("what no console prints reaches hub-agent: a death, and an op given in the game as a group change", async () => {
    const has = (type: string, extra: (e: (typeof w.events)[number]) => boolean = () => true) =>
      w.events.filter((e) => e.type === type && "player" in e && e.player.id === uuid && extra(e)).length;
    expect(await w.bridge.exec(`kill ${NAME}`)).toBe(`Killed ${NAME}`); // what the command printed
    await until(() => has("player_death") === 1, "the death event", SLOW);
    // No respawn follows: flying-squid 1.12 expects the respawn request as 0, which 1.21.4's protocol names
    // "perform_respawn" (plugins/flying-squid/README.md). The bot stays dead, and connected.
    await w.bridge.exec(`op ${NAME}`);
    const opped = (e: (typeof w.events)[number]) => e.type === "group_change" && e.op === "add" && e.group === "op";
    await until(() => has("group_change", opped) === 1, "the op as a group change", SLOW);
  }, 40_000);

  test("`hub-agent ban Bot1` (the compiled CLI): the bot is kicked, and kicked again when it comes back", async () => {
    await binary();
    const r = await hubBinary(["ban", NAME, "10", "griefing"], { env: w.env });
    expect(r, r.stderr).toMatchObject({ code: 0 });
    await until(() => first.seen.ended, "the bot kicked", SLOW);
    expect(first.seen.kicked).toContain("griefing");
    await until(() => !w.agent.players.has(uuid), "the agent to see the bot leave", SLOW);
    const again = await joinBot(NAME);
    await until(() => again.seen.ended, "the returning bot kicked", SLOW);
    expect(again.seen.kicked).toContain("griefing");
    expect(server.exitCode).toBeNull(); // the server runs on
  }, 90_000);
});
