/**
 * Against a real Teeworlds 0.7.5 server (Debian package `teeworlds-server`) with a real human player on it: Debian's
 * `teeworlds` 0.7.5 client under Xvfb (software GL), who chats through key binds pressed with xdotool. The server
 * runs the docs' config lines, hub-agent the docs' configuration (only the password and ports filled in),
 * against the in-memory service. The server binds loopback only and does not register with the master servers.
 *
 * Besides the console itself (doctor through the bridge kind registry, a wrong password named, every hostile nick said
 * through the preset's escaping arriving as exactly one chat line: the real console is the judge of the escaping),
 * the steps share one server and run in order, each leaving the game as the next expects it: Jack joins and is
 * listed and counted; his `/dashboard` is answered where he can read it; a reward runs for him; `hub-agent ban Jack`
 * (the compiled CLI) kicks him while he plays, and again when he comes back. Skipped, with the reason, when the
 * server or the client's programs are missing.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import * as net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../lib/app/config.ts";
import { sendStatus } from "../../lib/features/status.ts";
import { checkGame } from "../../lib/game/doctor.ts";
import { sanitize } from "../../lib/game/presets/escape.ts";
import { teeworlds } from "../../lib/game/presets/teeworlds.ts";
import { Econ, MAX_COMMAND_BYTES } from "../../lib/game/transports/econ.ts";
import type { TransportError } from "../../lib/game/transports/transport.ts";
import { binary, hubBinary } from "../cli/binary.ts";
import { HOSTILE } from "../game/presets/hostile-values.ts";
import { type GameClient, startDisplay } from "../support/game-client.ts";
import { spawn } from "../support/procs.ts";
import { docBlock } from "../support/docs.ts";
import { socketsOf } from "../support/sockets.ts";
import { pressUntil, TEEWORLDS_CLIENT, teeClientMissing, teeworldsClient } from "../support/tee-clients.ts";
import { until } from "../support/until.ts";
import { bansOf, freePort, online as onlineIn, startWorld, stopWorld, userOf as userIn, type World } from "./world.ts";

const SERVER = "/usr/games/teeworlds-server";
const PAGE = "docs/games/teeworlds.md";
const installed = existsSync(SERVER);
if (!installed)
  console.warn(`SKIPPED: the Teeworlds test needs ${SERVER} (Debian package teeworlds-server; .ci/run installs it)`);
const clientMissing = teeClientMissing(TEEWORLDS_CLIENT, "teeworlds");
if (installed && clientMissing) console.warn(`SKIPPED: the Teeworlds human-player steps ${clientMissing}`);

/** A software-GL client on a loaded 2-core machine takes its time to start and draw. */
const SLOW = { timeoutMs: 150_000 };

const canConnect = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.connect({ host: "127.0.0.1", port }, () => (s.destroy(), resolve(true)));
    s.on("error", () => resolve(false));
  });

describe.skipIf(!installed)("Teeworlds 0.7.5 over econ (real server)", () => {
  let dir: string;
  let econPort: number;
  let gamePort: number;
  let server: ReturnType<typeof spawn>;
  const PASSWORD = "hub-econ-secret";

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "hub-teeworlds-"));
    econPort = await freePort("tcp");
    gamePort = await freePort("udp");
    // `-f` takes a path in the server's data directories (the working directory is one; an absolute path is not
    // found, and the server starts on its defaults: every interface, master registration). The docs' lines, then
    // what a test adds: loopback, no master servers, free ports (a later line wins).
    writeFileSync(
      join(dir, "server.cfg"),
      [
        docBlock(PAGE, "", 0).replaceAll("<password>", PASSWORD),
        'sv_name "hub-agent test"',
        "sv_register 0",
        "sv_inactivekick_time 0", // a test's player stands still for minutes
        "bindaddr 127.0.0.1",
        `sv_port ${gamePort}`,
        `ec_port ${econPort}`,
      ].join("\n"),
    );
    server = spawn([SERVER, "-f", "server.cfg"], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "", HOME: dir },
      stdout: "ignore",
      stderr: "ignore",
      scope: "file",
    });
    // The docs' configuration, word for word but for the password (the port comes from the environment).
    writeFileSync(join(dir, "hub-agent.toml"), docBlock(PAGE, "toml", 0).replaceAll("<password>", PASSWORD));
    await until(() => canConnect(econPort), "the econ port", { timeoutMs: 20_000, everyMs: 50 });
  }, 30_000);

  afterAll(async () => {
    server?.kill("SIGTERM");
    await server?.exited;
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("the server listens on 127.0.0.1 only: the game's UDP port and econ", () => {
    expect(socketsOf(server.pid).sort()).toEqual([`127.0.0.1:${econPort}`, `127.0.0.1:${gamePort}`].sort());
  });

  test("doctor's check through the registry: password accepted, the player list answers", async () => {
    const loaded = await loadConfig({
      env: {
        HUB_API_URL: "http://127.0.0.1:1/v1",
        HUB_API_KEY: "k",
        HUB_API_SERVER_ID: "541d1c41-1b58-40fc-8780-70c400ea5686",
        HUB_CONFIG: join(dir, "hub-agent.toml"),
        HUB_GAME_RCON_PORT: String(econPort), // the docs' is the default, 8303
      },
      cwd: dir,
    });
    if (!loaded.ok) throw new Error(loaded.problems.join("\n"));
    const [check] = await checkGame(loaded.config, { timeoutMs: 5000 });
    expect(check).toMatchObject({
      status: "ok",
      message: `econ 127.0.0.1:${econPort} (Teeworlds): password accepted; 0 players online`,
    });
  });

  test("a wrong password is an auth error (tried once: three would ban this address)", async () => {
    const econ = new Econ({ host: "127.0.0.1", port: econPort, password: "wrong", timeoutMs: 5000 });
    const err = (await econ.send("echo x").catch((e) => e)) as TransportError;
    await econ.close();
    expect(err.code).toBe("auth");
    expect(err.message).toContain("Wrong password 1/3");
  });

  test("econ's line: a command of 1,398 bytes runs, a longer one is refused unsent, and the connection stays", async () => {
    // What the server does with a longer line, on a connection of its own: it drops it.
    const raw = net.connect({ host: "127.0.0.1", port: econPort });
    let seen = "";
    raw.on("data", (d: Buffer) => {
      seen += d.toString("latin1");
      if (seen.endsWith("Enter password:\n\0\0")) raw.write(`${PASSWORD}\n`);
      else if (seen.includes("Authentication successful")) raw.write(`echo ${"y".repeat(MAX_COMMAND_BYTES - 4)}\n`);
    });
    await new Promise<void>((resolve) => raw.on("close", () => resolve()).on("error", () => {}));
    expect(seen).toContain("Authentication successful");
    expect(seen).not.toContain("[Console]: yyy");

    const econ = new Econ({ host: "127.0.0.1", port: econPort, password: PASSWORD, timeoutMs: 5000 });
    const states: string[] = [];
    econ.on("state", (state) => states.push(state));
    try {
      const longest = `echo ${"y".repeat(MAX_COMMAND_BYTES - 5)}`;
      expect(await econ.send(longest)).toStartWith("[Console]: yyy"); // the console prints about 1,000 of them
      expect(await econ.send(`${longest}y`).catch((e: TransportError) => e.code)).toBe("invalid");
      expect(await econ.send("echo alive")).toBe("[Console]: alive");
      expect(states.filter((s) => s === "connecting")).toHaveLength(1);
    } finally {
      await econ.close();
    }
  });

  test("every hostile value said through the preset's escaping is one chat line holding the cleaned value", async () => {
    const econ = new Econ({ host: "127.0.0.1", port: econPort, password: PASSWORD, timeoutMs: 5000 });
    const said: string[] = [];
    await econ.start((line) => {
      if (line.startsWith("[chat]: *** ")) said.push(line.slice("[chat]: *** ".length));
    });
    try {
      for (const value of HOSTILE) {
        const expected = sanitize(value).replace(/"/g, "'").replace(/\\/g, "/");
        if (!expected.trim()) continue; // nothing to say
        said.length = 0;
        expect(await econ.send("echo before")).toBe("[Console]: before");
        await econ.send(`say ${teeworlds.escape(value)}`);
        // The echo after it comes back after every line `say` printed (the console runs commands in order).
        expect(await econ.send("echo after")).toBe("[Console]: after");
        // One line, holding the value (the server cuts a long chat line, possibly inside a character).
        expect({ value, lines: said.length }).toEqual({ value, lines: 1 });
        const got = said[0]!.replace(/\uFFFD$/, "");
        expect(got.length).toBeGreaterThan(0);
        expect({ value, prefix: expected.startsWith(got) }).toEqual({ value, prefix: true });
      }
      // Still the same server: nothing a value smuggled in stopped it.
      expect(await econ.send("echo alive")).toBe("[Console]: alive");
    } finally {
      await econ.close();
    }
  }, 60_000);

  describe.skipIf(!!clientMissing)("a human player: Debian's teeworlds 0.7.5 client", () => {
    let w: World;
    let display: Awaited<ReturnType<typeof startDisplay>>;
    let jack: GameClient;
    const home = () => join(dir, "jack");
    const join_ = () =>
      teeworldsClient({
        display: display.display,
        home: home(),
        name: "Jack",
        server: `127.0.0.1:${gamePort}`,
        binds: { F5: "say /dashboard" },
      });
    const online = () => onlineIn(w);
    /** The kicks the agent sent. */
    const kicks = () => w.exchanges.filter((x) => /^kick \d+ "You are banned/.test(x.command)).length;

    beforeAll(async () => {
      void binary().catch(() => {}); // compiles while the client starts; the CLI step awaits it (and its error)
      mkdirSync(home(), { recursive: true });
      w = await startWorld(mkdtempSync(join(tmpdir(), "hub-teeworlds-agent-")), {
        HUB_CONFIG: join(dir, "hub-agent.toml"),
        HUB_GAME_RCON_PORT: String(econPort), // the docs' is the default, 8303
      });
      display = await startDisplay();
    }, 60_000);

    afterAll(async () => {
      await jack?.stop();
      await display?.stop();
      await stopWorld(w);
    });

    test("Jack joins: the agent lists him (from the console's join line), registers him and counts him", async () => {
      jack = join_();
      await until(() => online().includes("Jack"), "Jack online", {
        ...SLOW,
        diagnostics: () => `client:\n${jack.lines.slice(-10).join("\n")}\nlines:\n${w.lines.slice(-10).join("\n")}`,
      });
      expect(w.lines).toContain("[game]: team_join player='0:Jack' team=0");
      await until(() => w.agent.users.get("Jack") !== undefined, "the service user of Jack", SLOW);
      expect(w.sb.state.findUser("Jack", "CENTRAL")).toMatchObject({ identifier: "Jack", username: "Jack" });
      await sendStatus(w.agent); // reads the player list: the status row of a real client
      expect(w.sb.state.servers.get(w.sb.serverId)?.users_current).toBe(1);
    }, 200_000);

    test("Jack says /dashboard (a key bind): the answer is a public line naming him, and his client shows it", async () => {
      await pressUntil(display.display, "F5", () => jack.count("[chat]:  0: Jack: /dashboard") > 0);
      await jack.sees(
        "*** Jack: Server dashboard: https://community.example.org/server-dashboard/",
        "the answer",
        SLOW,
      );
      expect(jack.count("[chat]:  0: Jack: /dashboard")).toBeGreaterThanOrEqual(1); // he said it, in public
    }, 200_000);

    test("a reward command for Jack runs on the server and his client shows it; it is reported once", async () => {
      const applied = w.sb.state.addReward({
        user_id: userIn(w, "Jack").id,
        reward: { name: "Greeting", type: "COMMAND", data: { command: "say reward for %nick%" }, on_event: "DIRECT" },
      });
      await jack.sees("*** reward for ", "the reward's say", SLOW);
      expect(jack.lines.find((l) => l.includes("*** reward for "))).toContain("Jack"); // as the nick is quoted
      await until(() => applied.executed_on.includes(w.sb.serverId), "the reward reported (PATCH executed_on)", SLOW);
      expect(w.sb.control.requests({ method: "PATCH", path: `/packet/reward/applied/${applied.id}` })).toHaveLength(1);
      expect(jack.count("*** reward for ")).toBe(1);
    }, 200_000);

    test("`hub-agent ban Jack 10 griefing` (the compiled CLI): he is kicked while he plays, and again when he comes back", async () => {
      await binary(); // compiled in the background since beforeAll
      const r = await hubBinary(["ban", "Jack", "10", "griefing"], { env: w.env });
      expect(r, r.stderr).toMatchObject({ code: 0 });
      expect(r.stdout).toContain("Jack has been banned for 10m. Reason: griefing");
      expect(bansOf(w, "Jack")).toMatchObject([{ reason: "griefing", length: 600, status: "ACTIVE" }]);
      await jack.sees("Kicked (You are banned from this server. Reason: griefing", "Jack's client: kicked", SLOW);
      await until(() => !online().includes("Jack"), "Jack to leave the agent's players", SLOW);
      expect(kicks()).toBe(1);
      await jack.stop();
      // He starts his client again: kicked as he joins.
      jack = join_();
      await jack.sees("Kicked (You are banned from this server. Reason: griefing", "Jack's client: kicked again", SLOW);
      await until(() => kicks() === 2, "the second kick", SLOW);
      await until(() => !online().includes("Jack"), "Jack to leave again", SLOW);
      await sendStatus(w.agent);
      expect(w.sb.state.servers.get(w.sb.serverId)?.users_current).toBe(0);
    }, 400_000);
  });
});
