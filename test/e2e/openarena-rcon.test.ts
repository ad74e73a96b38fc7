/**
 * End-to-end against a real OpenArena server over Quake 3 rcon (beside the wrapped test, ./openarena.test.ts): the
 * server is started here, from the docs' command line, and hub-agent reaches it with the docs' configuration
 * (rcon, and `games.log` followed for events), against the in-memory service. Only what a test must add is added:
 * loopback addresses (IPv4 and IPv6, checked from /proc), blank master servers, a free port, a home directory.
 *
 * The steps share one server and run in order, each leaving the game as the next expects it: two bots join and are
 * counted; `hub-agent ban Sarge …` (the compiled CLI) gets him kicked, and kicked again when he comes back; a reward
 * runs for Grunt; Hank, a real OpenArena client over ::1, does what a player does (./human-steps.ts); the
 * server restarts and the agent resyncs. Skipped, with the reason, when the server is missing.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sendStatus } from "../../lib/features/status.ts";
import { Q3Rcon } from "../../lib/game/transports/q3-rcon.ts";
import { binary, hubBinary } from "../cli/binary.ts";
import { forTest, OPENARENA_SKIP_REASON, openarenaInstalled, rconAnswers } from "../support/openarena.ts";
import { spawn } from "../support/procs.ts";
import { docBlock, shellWords } from "../support/docs.ts";
import { socketsOf } from "../support/sockets.ts";
import { until } from "../support/until.ts";
import { humanSteps, OPENARENA_HUMAN } from "./human-steps.ts";
import { bansOf, freePort, online as onlineIn, startWorld, stopWorld, userOf as userIn, type World } from "./world.ts";

if (!openarenaInstalled) console.warn(`SKIPPED: the OpenArena rcon test ${OPENARENA_SKIP_REASON}`);

const PAGE = "docs/games/openarena.md";
const PASSWORD = "hub-q3-secret";
const SLOW = { timeoutMs: 30_000 }; // a loaded 2-core machine takes a while to load a map

describe.skipIf(!openarenaInstalled)(
  "OpenArena over Quake 3 rcon (real ioquake3 server, the docs' configuration)",
  () => {
    let w: World;
    let home: string;
    let port: number;
    let server: ReturnType<typeof spawn> | undefined;

    /** The docs' server command line, as the operator would type it. */
    const command = () => forTest(shellWords(docBlock(PAGE, "sh").replaceAll("<password>", PASSWORD)), port, home);

    /** Starts the server and waits until it answers rcon. */
    async function startServer(): Promise<void> {
      server = spawn(command(), {
        env: { PATH: process.env.PATH ?? "", HOME: home },
        stdout: "ignore",
        stderr: "ignore",
        scope: "file",
      });
      await rconAnswers(port, PASSWORD, {
        ...SLOW,
        abort: () => (server?.exitCode != null ? `the server exited with ${server.exitCode}` : undefined),
      });
    }

    beforeAll(async () => {
      home = mkdtempSync(join(tmpdir(), "hub-oa-rcon-"));
      void binary().catch(() => {}); // compiles while the map loads; the CLI step awaits it (and its error)
      port = await freePort("udp");
      await startServer();
      // The docs' configuration, word for word but for the password and where the server's home is.
      const toml = docBlock(PAGE, "toml", 0)
        .replaceAll("<password>", PASSWORD)
        .replace("/home/oa/.openarena/", `${home}/`);
      writeFileSync(join(home, "hub-agent.toml"), toml);
      w = await startWorld(home, {
        HUB_CONFIG: join(home, "hub-agent.toml"),
        HUB_GAME_RCON_PORT: String(port), // the docs' is the default, 27960
        HUB_INTERVALS_PLAYER_POLL: "2", // the docs' default is 10: a restart is noticed sooner here
      });
    }, 60_000);

    afterAll(async () => {
      server?.kill("SIGTERM");
      await server?.exited;
      await stopWorld(w);
    });

    const online = () => onlineIn(w);
    const userOf = (name: string) => userIn(w, name);
    /** The rcon reply to the agent's kick of a slot: ioq3 prints the broadcast while the command runs. */
    const kicks = (name: string) => w.exchanges.filter((x) => x.reply?.includes(`${name}^7 was kicked`)).length;

    test("the server listens on 127.0.0.1 and ::1 only, with no master server", async () => {
      expect(socketsOf(server!.pid).sort()).toEqual([`127.0.0.1:${port}`, `[::1]:${port}`]);
      const rcon = new Q3Rcon({ host: "::1", port, password: PASSWORD, timeoutMs: 5000 });
      try {
        for (const n of [1, 2, 3, 4, 5])
          expect(await rcon.send(`sv_master${n}`)).toStartWith(`"sv_master${n}" is:"^7"`);
        expect(await rcon.send("dedicated")).toStartWith('"dedicated" is:"1^7"');
      } finally {
        await rcon.close();
      }
    }, 30_000);

    test("bots added over rcon are registered as users (from games.log) and counted in the status", async () => {
      await w.bridge.exec("addbot sarge 1");
      await w.bridge.exec("addbot grunt 1");
      await until(() => online().length === 2, "both bots online", SLOW);
      expect(online()).toEqual(["Grunt", "Sarge"]);
      expect(w.lines.some((l) => /^\s*\d+:\d\d ClientConnect: \d+$/.test(l))).toBe(true); // games.log, as it happens
      for (const name of ["Sarge", "Grunt"]) {
        await until(() => w.agent.users.get(name) !== undefined, `the service user of ${name}`, SLOW);
        expect(w.sb.state.findUser(name, "CENTRAL")).toMatchObject({ identifier: name, username: name });
      }
      await sendStatus(w.agent);
      expect(w.sb.state.servers.get(w.sb.serverId)?.users_current).toBe(2);
    }, 60_000);

    test("`hub-agent ban Sarge 10 griefing` (the compiled CLI): the server kicks him, and again when he comes back", async () => {
      await binary(); // compiled in the background since beforeAll
      const r = await hubBinary(["ban", "Sarge", "10", "griefing"], { env: w.env });
      expect(r, r.stderr).toMatchObject({ code: 0 });
      expect(r.stdout).toContain("Sarge has been banned for 10m. Reason: griefing");
      expect(bansOf(w, "Sarge")).toMatchObject([{ reason: "griefing", length: 600, status: "ACTIVE" }]);
      await until(() => kicks("Sarge") === 1, "the server to kick Sarge", SLOW);
      await until(() => !online().includes("Sarge"), "Sarge to leave the agent's players", SLOW);
      expect(online()).toEqual(["Grunt"]);
      // Back under the banned name: kicked at once.
      await w.bridge.exec("addbot sarge 1");
      await until(() => kicks("Sarge") === 2, "the server to kick Sarge again", SLOW);
      await until(() => !online().includes("Sarge"), "Sarge to leave again", SLOW);
      await sendStatus(w.agent);
      expect(w.sb.state.servers.get(w.sb.serverId)?.users_current).toBe(1);
    }, 120_000); // the first CLI step may wait for the compile on a loaded machine

    test("a reward command for the online bot runs on the server (`say`) and is reported as executed", async () => {
      const applied = w.sb.state.addReward({
        user_id: userOf("Grunt").id,
        reward: { name: "Greeting", type: "COMMAND", data: { command: "say reward for %nick%" }, on_event: "DIRECT" },
      });
      // ioq3 answers an rcon `say` with the line it sent every player.
      const said = (x: { reply?: string }) => x.reply === "console: reward for Grunt\n";
      await until(() => w.exchanges.some(said), "the server's answer to the reward's say", {
        ...SLOW,
        diagnostics: () => JSON.stringify(w.exchanges.filter((x) => x.command.startsWith("say"))),
      });
      await until(() => applied.executed_on.includes(w.sb.serverId), "the reward reported (PATCH executed_on)", SLOW);
      expect(w.sb.control.requests({ method: "PATCH", path: `/packet/reward/applied/${applied.id}` })).toHaveLength(1);
      expect(w.exchanges.filter(said)).toHaveLength(1); // once
    }, 60_000);

    // Hank, a real client, joins beside Grunt: listed, answered, rewarded, kicked twice. Over ::1: from 127.0.0.1, the
    // agent's own address, his client's connection requests would draw on ioq3's rcon limit for that address.
    humanSteps(OPENARENA_HUMAN, { world: () => w, port: () => port, host: "::1" });

    test("the server restarts: the agent notices, lets Grunt go, and registers who is there now", async () => {
      const before = w.events.length;
      server!.kill("SIGTERM");
      await server!.exited;
      await until(
        () => w.events.slice(before).some((e) => e.type === "down"),
        "the agent to see the server down",
        SLOW,
      );
      await startServer();
      await w.bridge.exec("addbot major 1");
      await until(() => online().join() === "Major", "the agent's players to be the new server's", SLOW);
      const since = w.events.slice(before);
      expect(since.filter((e) => e.type === "player_disconnect").map((e) => e.player.name)).toEqual(["Grunt"]);
      expect(since.some((e) => e.type === "ready")).toBe(true);
      await until(() => w.agent.users.get("Major") !== undefined, "the service user of Major", SLOW);
      await sendStatus(w.agent);
      expect(w.sb.state.servers.get(w.sb.serverId)?.users_current).toBe(1);
    }, 60_000);
  },
);
