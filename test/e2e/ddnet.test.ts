/**
 * Against a real DDNet 16.4 server (Debian package `ddnet-server`) with a real human player on it: Debian's `DDNet`
 * 16.4 client under Xvfb (software GL), chatting through key binds pressed with xdotool. The server runs in a network
 * namespace of its own (loopback its only interface), with the docs' config lines and its `sysctl` line, and
 * hub-agent the docs' configuration (only the password and ports filled in), against the in-memory service; the
 * agent reaches the namespace's loopback through a relay (test/support/netns.ts), the client runs in the namespace.
 *
 * The steps share one server and run in order: econ listens on loopback only; Dora joins and is listed and counted;
 * her `!dashboard` is answered where she can read it; a reward runs for her; `hub-agent ban Dora` (the compiled CLI)
 * kicks her while she plays, and again when she comes back. Then `doctor` (the compiled CLI, in the namespace) on
 * the two ways DDNet's econ goes wrong: without the sysctl it doesn't open, and the fix says so; with
 * `ec_bindaddr ::1` it opens on every interface, and doctor says where. Skipped, with the reason, when a program is
 * missing or namespaces can't be made (root).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sendStatus } from "../../lib/features/status.ts";
import { answersOn } from "../../lib/game/kinds/econ.ts";
import { binary, hubBinary } from "../cli/binary.ts";
import { type GameClient, startDisplay } from "../support/game-client.ts";
import { createNetns, type Netns, netnsMissing } from "../support/netns.ts";
import { spawn } from "../support/procs.ts";
import { docBlock, shellWords } from "../support/docs.ts";
import { socketsOf } from "../support/sockets.ts";
import { DDNET_CLIENT, ddnetClient, pressUntil, teeClientMissing } from "../support/tee-clients.ts";
import { until } from "../support/until.ts";
import { bansOf, online as onlineIn, startWorld, stopWorld, userOf as userIn, type World } from "./world.ts";

const SERVER = "/usr/games/DDNet-Server";
const PAGE = "docs/games/teeworlds.md";
const missing =
  (existsSync(SERVER) ? undefined : `needs ${SERVER} (Debian package ddnet-server; .ci/run installs it)`) ??
  teeClientMissing(DDNET_CLIENT, "ddnet") ??
  netnsMissing();
if (missing) console.warn(`SKIPPED: the DDNet test ${missing}`);

const PASSWORD = "hub-econ-secret";
const ECON_PORT = 8303; // the docs'; the namespace has ports of its own
const GAME_PORT = 8304;
/** A software-GL client on a loaded 2-core machine takes its time to start; an empty DDNet answers once a second. */
const SLOW = { timeoutMs: 150_000 };

describe.skipIf(!!missing)("DDNet 16.4 over econ (real server and client, in a network namespace)", () => {
  let dir: string;
  let ns: Netns;
  let server: ReturnType<typeof spawn> | undefined;
  let relay: Awaited<ReturnType<Netns["relay"]>>;
  let w: World;
  let display: Awaited<ReturnType<typeof startDisplay>>;
  let dora: GameClient | undefined;
  let stopped = false;

  /** Each start's console output has a file of its own. */
  let starts = 0;
  const log = () => readFileSync(join(dir, `server-${starts}.log`), "utf8");

  /** The docs' config lines with `ec_bindaddr` as given, then what a test adds (a later line wins). */
  async function startServer(bindaddr?: string): Promise<void> {
    const lines = docBlock(PAGE, "", 0).replaceAll("<password>", PASSWORD);
    writeFileSync(
      join(dir, "server.cfg"),
      [
        bindaddr ? lines.replace(/^ec_bindaddr .*$/m, `ec_bindaddr ${bindaddr}`) : lines,
        'sv_name "hub-agent test"',
        "sv_register 0",
        "sv_inactivekick_time 0", // a test's player stands still for minutes
        `sv_port ${GAME_PORT}`,
      ].join("\n"),
    );
    // `-f` takes a path in the server's data directories, the working directory among them.
    server = spawn(ns.exec([SERVER, "-f", "server.cfg"]), {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "", HOME: dir },
      stdout: Bun.file(join(dir, `server-${++starts}.log`)),
      stderr: "ignore",
      scope: "file",
    });
    await until(
      () => existsSync(join(dir, `server-${starts}.log`)) && log().includes("I server: version 16."),
      "DDNet",
      {
        timeoutMs: 30_000,
        everyMs: 50,
        abort: () => (server?.exitCode != null ? `the server exited with ${server.exitCode}` : undefined),
      },
    );
  }

  async function stopServer(): Promise<void> {
    server?.kill("SIGTERM");
    await server?.exited;
    server = undefined;
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "hub-ddnet-"));
    void binary().catch(() => {}); // compiles while the server and the client start; the CLI steps await it
    ns = await createNetns("hub-ddnet");
    // The docs' line for DDNet 16.4, in the namespace (whose net.* sysctls are its own).
    const [cmd, ...args] = shellWords(docBlock(PAGE, "sh", 0).trim());
    const sysctl = spawn(ns.exec([cmd!, ...args]), { stdout: "ignore", stderr: "pipe" });
    expect(await sysctl.exited).toBe(0);
    await startServer();
    relay = await ns.relay(ECON_PORT, dir);
    await until(async () => (await answersOn(relay.port, ["127.0.0.1"], 2000)).length > 0, "econ", SLOW);
    writeFileSync(join(dir, "hub-agent.toml"), docBlock(PAGE, "toml", 1).replaceAll("<password>", PASSWORD));
    w = await startWorld(mkdtempSync(join(tmpdir(), "hub-ddnet-agent-")), {
      HUB_CONFIG: join(dir, "hub-agent.toml"),
      HUB_GAME_RCON_PORT: String(relay.port), // the namespace's 8303, the docs' default
    });
    display = await startDisplay();
  }, 200_000);

  afterAll(async () => {
    await dora?.stop();
    await display?.stop();
    if (!stopped) await stopWorld(w);
    await relay?.close();
    await stopServer();
    await ns?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const join_ = () => {
    const home = join(dir, "dora");
    mkdirSync(home, { recursive: true });
    return ddnetClient({
      display: display.display,
      home,
      name: "Dora",
      server: `127.0.0.1:${GAME_PORT}`,
      binds: { F5: "say !dashboard" },
      prefix: ns.exec([]),
    });
  };
  const online = () => onlineIn(w);
  const kicks = () => w.exchanges.filter((x) => /^kick \d+ "You are banned/.test(x.command)).length;

  test("econ listens on the namespace's 127.0.0.1 only (IPv6 on 7f00:1::, an address no interface has)", () => {
    // The listening sockets (the relay's connection to econ is there too, on the same local address).
    const econ = [...new Set(socketsOf(server!.pid).filter((s) => s.endsWith(`:${ECON_PORT}`)))];
    // /proc writes IPv6 addresses as four host-order words: 7f00:1:: is 0100007F 00000000 …
    expect(econ.sort()).toEqual([`127.0.0.1:${ECON_PORT}`, `[0100007F000000000000000000000000]:${ECON_PORT}`]);
    expect(log()).toContain("I econ: bound to 127.0.0.1:8303");
  });

  test("Dora joins: the agent lists her (the join line names her slot, the list her name), registers and counts her", async () => {
    dora = join_();
    await until(() => online().includes("Dora"), "Dora online", {
      ...SLOW,
      diagnostics: () => `client:\n${dora!.lines.slice(-10).join("\n")}\nlines:\n${w.lines.slice(-10).join("\n")}`,
    });
    expect(w.lines.some((l) => l.startsWith("[server]: player has entered the game. ClientID=0 "))).toBe(true);
    await until(() => w.agent.users.get("Dora") !== undefined, "the service user of Dora", SLOW);
    expect(w.sb.state.findUser("Dora", "CENTRAL")).toMatchObject({ identifier: "Dora", username: "Dora" });
    await sendStatus(w.agent);
    expect(w.sb.state.servers.get(w.sb.serverId)?.users_current).toBe(1);
  }, 200_000);

  test("Dora says !dashboard (a key bind): the answer is a public line naming her, and her client shows it", async () => {
    await pressUntil(display.display, "F5", () => dora!.count("I chat: Dora: !dashboard") > 0);
    await dora!.sees(
      "I chat: *** Dora: Server dashboard: https://community.example.org/server-dashboard/",
      "the answer",
      SLOW,
    );
    expect(dora!.count("I chat: Dora: !dashboard")).toBeGreaterThanOrEqual(1); // she said it, in public
  }, 200_000);

  test("a reward command for Dora runs on the server and her client shows it; it is reported once", async () => {
    const applied = w.sb.state.addReward({
      user_id: userIn(w, "Dora").id,
      reward: { name: "Greeting", type: "COMMAND", data: { command: "say reward for %nick%" }, on_event: "DIRECT" },
    });
    await dora!.sees("I chat: *** reward for ", "the reward's say", SLOW);
    expect(dora!.lines.find((l) => l.includes("*** reward for "))).toContain("Dora");
    await until(() => applied.executed_on.includes(w.sb.serverId), "the reward reported (PATCH executed_on)", SLOW);
    expect(w.sb.control.requests({ method: "PATCH", path: `/packet/reward/applied/${applied.id}` })).toHaveLength(1);
    expect(dora!.count("*** reward for ")).toBe(1);
  }, 200_000);

  test("`hub-agent ban Dora 10 griefing` (the compiled CLI): she is kicked while she plays, and again when she comes back", async () => {
    await binary();
    const r = await hubBinary(["ban", "Dora", "10", "griefing"], { env: w.env });
    expect(r, r.stderr).toMatchObject({ code: 0 });
    expect(r.stdout).toContain("Dora has been banned for 10m. Reason: griefing");
    expect(bansOf(w, "Dora")).toMatchObject([{ reason: "griefing", length: 600, status: "ACTIVE" }]);
    await dora!.sees("Kicked (You are banned from this server. Reason: griefing", "Dora's client: kicked", SLOW);
    await until(() => !online().includes("Dora"), "Dora to leave the agent's players", SLOW);
    expect(kicks()).toBe(1);
    await dora!.stop();
    dora = join_(); // she starts her client again: kicked as she joins
    await dora.sees("Kicked (You are banned from this server. Reason: griefing", "Dora's client: kicked again", SLOW);
    await until(() => kicks() === 2, "the second kick", SLOW);
    await until(() => !online().includes("Dora"), "Dora to leave again", SLOW);
    await sendStatus(w.agent);
    expect(w.sb.state.servers.get(w.sb.serverId)?.users_current).toBe(0);
  }, 400_000);

  /** `hub-agent doctor --json` in the namespace, with the docs' configuration: its game check. */
  async function doctorInside(): Promise<{ status: string; message: string; fix?: string }> {
    const p = spawn(ns.exec([await binary(), "doctor", "--json"]), {
      cwd: dir,
      env: {
        PATH: process.env.PATH ?? "",
        HUB_CONFIG: join(dir, "hub-agent.toml"),
        HUB_API_URL: "http://127.0.0.1:9/v1", // no service in the namespace: only the game check matters here
        HUB_API_KEY: "k-0123456789",
        HUB_API_SERVER_ID: w.sb.serverId,
        HUB_STORAGE_DIR: join(dir, "doctor-data"),
      },
      stdout: "pipe",
      stderr: "pipe",
    });
    const out = await new Response(p.stdout).text();
    await p.exited;
    const game = (JSON.parse(out) as { name: string; status: string; message: string; fix?: string }[]).find(
      (c) => c.name === "game",
    );
    if (!game) throw new Error(`doctor printed no game check: ${out}`);
    return game;
  }

  test("doctor tells the truth: econ closed without the sysctl (the fix names it), open everywhere with ::1 (it says where)", async () => {
    await dora?.stop();
    dora = undefined;
    await stopWorld(w); // the agent is done; doctor runs alone
    stopped = true;
    await stopServer();
    // Without the docs' sysctl: DDNet can't bind IPv6 to 7f00:1:: and opens no econ at all.
    await ns.sysctl("net.ipv6.ip_nonlocal_bind", "0");
    await startServer();
    await until(() => log().includes("econ: couldn't open socket"), "DDNet's econ to give up", SLOW);
    const closed = await doctorInside();
    expect(closed.status).toBe("fail");
    expect(closed.fix).toContain("ec_bindaddr 127.0.0.1 and sysctl net.ipv6.ip_nonlocal_bind=1");
    await stopServer();
    // `ec_bindaddr ::1`: IPv4 takes the first 4 bytes of ::1, 0.0.0.0, and listens on every interface.
    // An interface besides loopback, as a host has (a veth pair inside the namespace: it leads nowhere else).
    await ns.ip("link", "add", "hub0", "type", "veth", "peer", "name", "hub1");
    await ns.ip("addr", "add", "10.77.0.1/24", "dev", "hub0");
    for (const dev of ["hub0", "hub1"]) await ns.ip("link", "set", dev, "up");
    await startServer('"::1"');
    const open = await doctorInside();
    expect(open, JSON.stringify(open)).toMatchObject({ status: "warn" });
    expect(open.message).toContain(`econ answers on 10.77.0.1:${ECON_PORT} too`);
    expect(open.fix).toContain("sysctl net.ipv6.ip_nonlocal_bind=1");
  }, 180_000);
});
