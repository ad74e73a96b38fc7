/**
 * End-to-end against a real DarkPlaces game: Nexuiz 2.5.2 (Debian package `nexuiz-server`, engine of 2018) with
 * two bots, against the in-memory service, twice, each time with the docs' configuration and `server.cfg` lines
 * (read from docs/games/xonotic.md): over DarkPlaces rcon (the server started here, its `log_file` followed for events) and
 * wrapped (hub-agent starts the server and reads its console). Each time: the bots are
 * registered and counted, `hub-agent ban <bot>` gets the bot kicked, a reward command runs and is reported; over
 * rcon also doctor, the three rcon_secure modes, a bot's `!dashboard` and Hank, a real Nexuiz client over ::1
 * (./human-steps.ts); wrapped also the operator's typed `ban`.
 *
 * The server binds 127.0.0.1 and ::1 only (checked from /proc) and has sv_public 0: no master server hears of it.
 * `bot_number 2` keeps two bots in: a kicked bot is replaced, and one that comes back under a banned name is kicked
 * again. Skipped, with the reason, when the server is not installed (`.ci/run` installs it).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../lib/app/config.ts";
import { parseToml } from "../../lib/config/toml.ts";
import { sendStatus } from "../../lib/features/status.ts";
import { checkGame } from "../../lib/game/doctor.ts";
import { sanitize } from "../../lib/game/presets/escape.ts";
import { xonotic } from "../../lib/game/presets/xonotic.ts";
import { DpRcon } from "../../lib/game/transports/dp-rcon.ts";
import type { TransportError } from "../../lib/game/transports/transport.ts";
import { binary, hubBinary } from "../cli/binary.ts";
import { HOSTILE } from "../game/presets/hostile-values.ts";
import { spawn } from "../support/procs.ts";
import { docBlock } from "../support/docs.ts";
import { socketsOf } from "../support/sockets.ts";
import { until } from "../support/until.ts";
import { humanSteps, NEXUIZ_HUMAN } from "./human-steps.ts";
import { bansOf, freePort, online, startWorld, stopWorld, userOf, type World } from "./world.ts";

const SERVER = "/usr/games/nexuiz-server";
const installed = existsSync(SERVER);
if (!installed)
  console.warn(`SKIPPED: the Nexuiz test needs ${SERVER} (Debian package nexuiz-server; .ci/run installs it)`);

const PASSWORD = "hub-dp-secret";
const SLOW = { timeoutMs: 30_000 }; // a loaded 2-core machine takes a while to load a map

const PAGE = "docs/games/xonotic.md";

/**
 * The docs' `server.cfg` lines, word for word but for the password, after what a test adds: loopback only, no
 * master servers, a free port, two bots even with nobody else there (and rcon_secure, which goes before the password).
 */
function writeServerConfig(userdir: string, o: { port: number; secure?: 0 | 1 }): void {
  const cfg = [
    "sv_public 0",
    ...["sv_master1", "sv_master2", "sv_master3", "sv_master4"].map((m) => `set ${m} ""`),
    ...["sv_masterextra1", "sv_masterextra2", "sv_masterextra3"].map((m) => `set ${m} ""`),
    "net_address 127.0.0.1",
    "net_address_ipv6 ::1",
    `port ${o.port}`,
    "bot_join_empty 1",
    "bot_number 2",
    ...(o.secure !== undefined ? [`rcon_secure ${o.secure}`] : []),
    docBlock(PAGE, "", 0).replaceAll("<password>", PASSWORD),
  ];
  mkdirSync(join(userdir, "data"), { recursive: true });
  writeFileSync(join(userdir, "data", "server.cfg"), `${cfg.join("\n")}\n`);
}

/** The docs' configurations (0: rcon, 1: wrapped), word for word but for the password and the user directory. */
function readmeConfig(home: string, userdir: string, index: 0 | 1): string {
  const file = join(home, "hub-agent.toml");
  const toml = docBlock(PAGE, "toml", index)
    .replaceAll("<password>", PASSWORD)
    .replace("/home/xonotic/.xonotic/", `${userdir}/`);
  writeFileSync(file, toml);
  return file;
}

/** The docs' command line with the user directory a test uses (in the docs: ~/.nexuiz). */
function serverCommand(userdir: string): string[] {
  const toml = parseToml(docBlock(PAGE, "toml", 1)) as { game: { wrapper: { command: string[] } } };
  const [launcher = "", ...args] = toml.game.wrapper.command;
  expect(launcher).toBe(SERVER);
  return [launcher, "-userdir", userdir, ...args];
}

/** Waits until the server answers rcon. */
async function rconUp(port: number): Promise<void> {
  const probe = new DpRcon({ host: "127.0.0.1", port, password: PASSWORD, timeoutMs: 1000 });
  try {
    await until(
      () =>
        probe.send("echo up").then(
          () => true,
          () => false,
        ),
      "the server to answer rcon",
      SLOW,
    );
  } finally {
    await probe.close();
  }
}

/** The steps both ways of reaching the game share; each leaves the game as the next expects it. */
function sharedSteps(world: () => World, logLine: (w: World, text: string) => boolean) {
  let banned = "";

  test("the two bots are registered as users (by name) and counted in the status", async () => {
    const w = world();
    await until(() => online(w).length === 2, "both bots online", SLOW);
    for (const name of online(w)) {
      expect(name).toStartWith("[BOT]");
      await until(() => w.agent.users.get(name) !== undefined, `the service user of ${name}`, SLOW);
      expect(w.sb.state.findUser(name, "CENTRAL")).toMatchObject({ identifier: name, username: name });
    }
    await sendStatus(w.agent);
    expect(w.sb.state.servers.get(w.sb.serverId)?.users_current).toBe(2);
  }, 60_000);

  test("`hub-agent ban <bot> 10 griefing` (the compiled CLI, beside the running agent): the server kicks the bot", async () => {
    const w = world();
    banned = online(w)[0]!;
    await binary(); // compiled in the background since beforeAll
    const r = await hubBinary(["ban", banned, "10", "griefing"], { env: w.env });
    expect(r, r.stderr).toMatchObject({ code: 0 });
    expect(r.stdout).toContain(`${banned} has been banned for 10m. Reason: griefing`);
    expect(bansOf(w, banned)).toMatchObject([{ reason: "griefing", length: 600, status: "ACTIVE" }]);
    // The server says so (the engine's line, the same from rcon and console), and the agent lets the bot go.
    await until(() => logLine(w, `Client "${banned}" dropped`), "the server to kick the bot", SLOW);
    // bot_number brings a bot back in; one under the banned name is kicked again at once.
    await until(
      () => online(w).length === 2 && !online(w).includes(banned),
      "another bot in the banned one's place",
      SLOW,
    );
    await sendStatus(w.agent);
    expect(w.sb.state.servers.get(w.sb.serverId)?.users_current).toBe(2);
  }, 120_000); // the first CLI step may wait for the compile on a loaded machine

  test("a reward command for an online bot runs on the server (`say`) and is reported as executed", async () => {
    const w = world();
    const name = online(w).find((n) => n !== banned)!;
    await until(() => w.agent.users.get(name) !== undefined, `the service user of ${name}`, SLOW);
    const applied = w.sb.state.addReward({
      user_id: userOf(w, name).id,
      reward: { name: "Greeting", type: "COMMAND", data: { command: "say reward for %nick%" }, on_event: "DIRECT" },
    });
    // The nick is one quoted argument; `say` prints its arguments as typed.
    const said = `<Nexuiz 2.5.2 Server> reward for "${name}"`;
    await until(() => logLine(w, said), "the reward's say on the server", SLOW);
    await until(() => applied.executed_on.includes(w.sb.serverId), "the reward reported (PATCH executed_on)", SLOW);
    expect(w.sb.control.requests({ method: "PATCH", path: `/packet/reward/applied/${applied.id}` })).toHaveLength(1);
    expect(w.lines.filter((l) => l.includes(said))).toHaveLength(1); // once
  }, 60_000);
}

describe.skipIf(!installed)("Nexuiz 2.5.2 over DarkPlaces rcon (real server)", () => {
  let w: World;
  let port: number;
  let server: ReturnType<typeof spawn> | undefined;

  beforeAll(async () => {
    const home = mkdtempSync(join(tmpdir(), "hub-nexuiz-rcon-"));
    void binary().catch(() => {}); // compiles while the map loads
    port = await freePort("udp");
    const userdir = join(home, "nexuiz");
    writeServerConfig(userdir, { port }); // rcon_secure stays at Nexuiz's 1
    server = spawn(serverCommand(userdir), {
      env: { PATH: process.env.PATH ?? "", HOME: home },
      stdout: "ignore",
      stderr: "ignore",
      scope: "file",
    });
    await rconUp(port);
    w = await startWorld(home, {
      HUB_CONFIG: readmeConfig(home, userdir, 0),
      HUB_GAME_RCON_PORT: String(port), // the docs' is the default, 26000
    });
  }, 60_000);

  afterAll(async () => {
    server?.kill("SIGTERM");
    await server?.exited;
    await stopWorld(w);
  });

  test("the server listens on loopback only (IPv4 and IPv6); doctor checks it through the registry", async () => {
    await until(() => online(w).length === 2, "both bots online", SLOW);
    expect(socketsOf(server!.pid).sort()).toEqual([`127.0.0.1:${port}`, `[::1]:${port}`]);
    const loaded = await loadConfig({ env: w.env, cwd: w.home });
    if (!loaded.ok) throw new Error(loaded.problems.join("\n"));
    const [game, log] = await checkGame(loaded.config, { timeoutMs: 5000 });
    expect(game).toMatchObject({ status: "ok" });
    expect(game!.message).toMatch(
      new RegExp(
        `^DarkPlaces rcon 127\\.0\\.0\\.1:${port} \\(Xonotic / Nexuiz \\(DarkPlaces\\)\\): password accepted; 2 players online: \\[BOT\\]`,
      ),
    );
    expect(log).toMatchObject({ status: "ok" });
  }, 30_000);

  test("rcon_secure 1 (Nexuiz's default): time- and challenge-signed commands work, a plain one is named as refused", async () => {
    for (const secure of [1, 2] as const) {
      const rcon = new DpRcon({ host: "127.0.0.1", port, password: PASSWORD, secure, timeoutMs: 5000 });
      expect(await rcon.send("echo signed")).toBe("signed \n");
      await rcon.close();
    }
    const plain = new DpRcon({ host: "127.0.0.1", port, password: PASSWORD, secure: 0, timeoutMs: 5000 });
    const err = (await plain.send("echo plain").catch((e) => e)) as TransportError;
    await plain.close();
    expect(err.code).toBe("auth");
    expect(err.message).toContain("rcon_secure is above 0");
    const wrong = new DpRcon({ host: "127.0.0.1", port, password: "wrong", timeoutMs: 5000 });
    expect(((await wrong.send("echo x").catch((e) => e)) as TransportError).code).toBe("auth");
    await wrong.close();
  }, 30_000);

  test("every hostile value said over rcon through the preset's escaping is one line holding the cleaned value", async () => {
    const wrong: string[] = [];
    for (const value of HOSTILE) {
      const reply = await w.bridge.exec(`say ${xonotic.escape(value)}`);
      const expected = `<Nexuiz 2.5.2 Server> ${sanitize(value).replace(/"/g, "'").replace(/\\/g, "/")}\n`;
      if (reply !== expected) wrong.push(`${JSON.stringify(value)} → ${JSON.stringify(reply)}`);
    }
    expect(wrong).toEqual([]);
    expect(await w.bridge.exec("echo alive")).toBe("alive \n");
  }, 60_000);

  /** Lines of the server's log file (raw: `^7` starts each). */
  const logLine = (world: World, text: string) => world.lines.some((l) => l.includes(text));
  sharedSteps(() => w, logLine);

  test("a bot's `!dashboard` in chat is answered with a private message (tell) over rcon", async () => {
    const before = w.lines.length;
    // Nexuiz's bot scripting makes the first bot say it, as a player would.
    await w.bridge.exec('sv_cmd bot_cmd 1 cc "say !dashboard"');
    // Bots start carrying out commands once their waypoints are linked, some seconds into a fresh server.
    await until(() => w.lines.slice(before).some((l) => l.endsWith("^7: !dashboard")), "the bot's chat line", {
      timeoutMs: 60_000,
    });
    // The engine logs every rcon request it runs: the agent's answer.
    await until(
      () => w.lines.slice(before).some((l) => /server received rcon command .* tell #\d+ "Server dashboard: /.test(l)),
      "the agent's tell",
      SLOW,
    );
  }, 90_000);
  // Hank, a real Nexuiz client, joins over ::1 beside the bots: listed, answered, rewarded, kicked twice.
  humanSteps(NEXUIZ_HUMAN, { world: () => w, port: () => port, host: "::1" });
});

describe.skipIf(!installed)("Nexuiz 2.5.2 wrapped (real server)", () => {
  let w: World;
  let port: number;

  beforeAll(async () => {
    const home = mkdtempSync(join(tmpdir(), "hub-nexuiz-wrap-"));
    void binary().catch(() => {});
    port = await freePort("udp");
    const userdir = join(home, "nexuiz");
    writeServerConfig(userdir, { port, secure: 0 });
    w = await startWorld(home, {
      HUB_CONFIG: readmeConfig(home, userdir, 1),
      HUB_GAME_WRAPPER_COMMAND: JSON.stringify(serverCommand(userdir)),
    });
  }, 60_000);

  afterAll(() => stopWorld(w));

  /** The wrapped console, as the terminal shows it (colour codes became ANSI, which the wrapper removes). */
  const consoleLine = (world: World, text: string) => world.lines.some((l) => l.includes(text));
  sharedSteps(() => w, consoleLine);

  test("plain rcon (rcon_secure 0 on this server) answers too, the reply exact over several datagrams", async () => {
    const rcon = new DpRcon({ host: "127.0.0.1", port, password: PASSWORD, secure: 0, timeoutMs: 5000 });
    try {
      const reply = await rcon.send("cvarlist sv_");
      expect(reply.length).toBeGreaterThan(1400); // more than one datagram
      expect(reply).toMatch(/^sv_\w+ /);
      expect(reply.trimEnd()).toMatch(/\n\d+ cvars beginning with "sv_"$/);
    } finally {
      await rcon.close();
    }
  }, 30_000);

  test("the operator's `ban <bot> 10 griefing` typed into the wrapped console becomes a service ban; the bot is kicked", async () => {
    const name = online(w)[0]!;
    const posts = () => w.sb.control.requests({ method: "POST", path: "/ban/" });
    expect(posts()).toHaveLength(1); // the CLI's
    w.console.write(`ban ${name} 10 griefing\n`);
    w.console.write("sv_public\n"); // not intercepted: reaches the server
    await until(() => w.shown().includes('"sv_public" is "0"'), "the answer on the operator's terminal", SLOW);
    await until(() => posts().length === 2, "the console's ban sent to the service", SLOW);
    expect(bansOf(w, name)).toMatchObject([{ reason: "griefing", length: 600, status: "ACTIVE" }]);
    await until(() => consoleLine(w, `Client "${name}" dropped`), "the server to kick the bot", SLOW);
    expect(w.lines.some((l) => l.startsWith("Unknown command") && l.includes("ban"))).toBe(false);
  }, 30_000);

  test("quit stops the server cleanly", async () => {
    await w.bridge.stop();
    expect(w.exits).toMatchObject([{ requested: true, restarting: false }]);
  }, 30_000);
});
