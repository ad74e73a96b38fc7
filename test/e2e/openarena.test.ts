/**
 * End-to-end against a real game server: hub-agent wraps an OpenArena dedicated server (Debian package
 * `openarena-server`, ioquake3) with the docs' configuration, against the in-memory service. The test adds only
 * loopback addresses (IPv4 and IPv6, checked from /proc), blank master servers, a port and a home directory to the
 * docs' command line; the server reads its console from the piped stdin (docs/game-consoles.md §7). Over rcon:
 * ./openarena-rcon.test.ts.
 *
 * Runs when the server is installed (`.ci/run` installs it as root with apt); otherwise it is reported as skipped,
 * with the reason. HUB_OPENARENA_SERVER points at another launcher.
 *
 * The steps share one server (it takes a few seconds to load a map) and run in order; each leaves the game as
 * the next expects it: two bots join; `hub-agent ban Sarge …` (the compiled CLI, same storage and config) gets
 * Sarge kicked; a reward command runs for Grunt; the operator types `ban Grunt …` into the wrapped console; Hank, a
 * real OpenArena client over 127.0.0.1, does what a player does (./human-steps.ts); `quit`.
 * To add a step, add a test before the final `quit`. Intervals are short (queue and reward rounds every 2 s); the
 * ban-list refresh is an hour away, so the kick after the CLI's ban is its "sanctions changed" marker's doing.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseToml } from "../../lib/config/toml.ts";
import { sendStatus } from "../../lib/features/status.ts";
import { QUAKE_VALUE_BYTES, sanitize } from "../../lib/game/presets/escape.ts";
import { openarena } from "../../lib/game/presets/openarena.ts";
import { until } from "../agent/harness.ts";
import { binary, hubBinary } from "../cli/binary.ts";
import { HOSTILE } from "../game/presets/hostile-values.ts";
import { forTest, OPENARENA_SKIP_REASON, openarenaInstalled } from "../support/openarena.ts";
import { docBlock } from "../support/docs.ts";
import { socketsOf } from "../support/sockets.ts";
import { humanSteps, OPENARENA_HUMAN } from "./human-steps.ts";
import { bansOf, freePort, online as onlineIn, startWorld, stopWorld, userOf as userIn, type World } from "./world.ts";

if (!openarenaInstalled) console.warn(`SKIPPED: the OpenArena end-to-end test ${OPENARENA_SKIP_REASON}`);

describe.skipIf(!openarenaInstalled)("OpenArena end to end (real ioquake3 server)", () => {
  let w: World;
  let port: number;
  const SLOW = 30_000; // a loaded 2-core machine may take a while to load the map

  beforeAll(async () => {
    const home = mkdtempSync(join(tmpdir(), "hub-oa-"));
    void binary().catch(() => {}); // compiles while the map loads; the CLI step awaits it (and its error)
    // The docs' configuration, word for word; the test's additions go into the command line.
    const toml = docBlock("docs/games/openarena.md", "toml", 1);
    writeFileSync(join(home, "hub-agent.toml"), toml);
    const readmeCommand = (parseToml(toml) as { game: { wrapper: { command: string[] } } }).game.wrapper.command;
    port = await freePort("udp");
    w = await startWorld(home, {
      HUB_CONFIG: join(home, "hub-agent.toml"),
      HUB_GAME_WRAPPER_COMMAND: JSON.stringify(forTest(readmeCommand, port, home)),
    });
  }, 60_000);

  afterAll(() => stopWorld(w));

  const online = () => onlineIn(w);

  test(
    "bots added with addbot are registered as users and reported in the status",
    async () => {
      await w.bridge.exec("addbot sarge 1");
      await w.bridge.exec("addbot grunt 1");
      await until(() => online().length === 2, "both bots online", SLOW);
      expect(online()).toEqual(["Grunt", "Sarge"]);
      expect(w.events.filter((e) => e.type === "player_spawn").map((e) => e.player.name)).toEqual(["Sarge", "Grunt"]);
      for (const name of ["Sarge", "Grunt"]) {
        await until(() => w.agent.users.get(name) !== undefined, `the service user of ${name}`, SLOW);
        // Bots have no platform id: the preset identifies them by name, as CENTRAL users.
        expect(w.sb.state.findUser(name, "CENTRAL")).toMatchObject({ identifier: name, username: name });
      }
      await sendStatus(w.agent);
      expect(w.sb.state.servers.get(w.sb.serverId)?.users_current).toBe(2);
      // The operator sees the server's console, but not the replies to the agent's own commands (`status`).
      expect(w.shown()).toContain("AAS initialized.");
      expect(w.lines).toContain("map: oa_dm1");
      expect(w.shown()).not.toContain("map: oa_dm1");
      // The wrapper starts the launcher, which execs the engine: the server's sockets, loopback only.
      expect(socketsOf(w.wrapped!.supervisor.pid!).sort()).toEqual([`127.0.0.1:${port}`, `[::1]:${port}`]);
    },
    SLOW,
  );

  const userOf = (name: string) => userIn(w, name);
  /** ioq3 announces a kick to everyone; the dedicated console prints the broadcast. */
  const kicked = (name: string) => w.lines.some((l) => l.includes(`${name}^7 was kicked`));

  test("`hub-agent ban Sarge 10 griefing` (the compiled CLI, beside the running agent): delivered, and the real server kicks him", async () => {
    await binary(); // compiled in the background since beforeAll
    const r = await hubBinary(["ban", "Sarge", "10", "griefing"], { env: w.env });
    expect(r, r.stderr).toMatchObject({ code: 0 });
    expect(r.stdout).toContain("Sarge has been banned for 10m. Reason: griefing");
    expect(bansOf(w, "Sarge")).toMatchObject([{ reason: "griefing", length: 600, status: "ACTIVE" }]);
    // The agent took it from the CLI on its desk line, at once (its own list refresh is an hour away).
    await until(() => kicked("Sarge"), "the server to kick Sarge", SLOW);
    await until(() => !online().includes("Sarge"), "Sarge to leave the agent's players", SLOW);
    expect(online()).toEqual(["Grunt"]);
    expect(w.logger.lines.some((l) => l.msg.startsWith("ban of Sarge from another hub-agent process"))).toBe(true);
  }, 120_000); // the first CLI step may wait for the compile on a loaded machine

  test(
    "a reward command for the online bot runs on the server (`say`) and is reported as executed",
    async () => {
      const applied = w.sb.state.addReward({
        user_id: userOf("Grunt").id,
        reward: { name: "Greeting", type: "COMMAND", data: { command: "say reward for %nick%" }, on_event: "DIRECT" },
      });
      await until(() => w.lines.some((l) => l.includes("reward for Grunt")), "the reward's say on the server", SLOW);
      await until(() => applied.executed_on.includes(w.sb.serverId), "the reward reported (PATCH executed_on)", SLOW);
      const patches = w.sb.control.requests({ method: "PATCH", path: `/packet/reward/applied/${applied.id}` });
      expect(patches).toHaveLength(1);
      expect(w.lines.filter((l) => l.includes("reward for Grunt"))).toHaveLength(1); // once
    },
    SLOW,
  );

  test(
    "the operator's `ban Grunt 10 griefing` typed into the wrapped console becomes a service ban, and Grunt is kicked",
    async () => {
      const posts = () => w.sb.control.requests({ method: "POST", path: "/ban/" });
      expect(posts()).toHaveLength(1); // the CLI's
      w.console.write("ban Grunt 10 griefing\n");
      w.console.write("g_speed\n"); // not intercepted: reaches the server
      await until(() => w.shown().includes('"g_speed" is:'), "the answer on the operator's terminal", SLOW);
      await until(() => posts().length === 2, "the console's ban sent to the service", SLOW);
      expect(posts()[1]?.query).toEqual([]); // the console acts as the server: no morph_user_id
      expect(bansOf(w, "Grunt")).toMatchObject([{ reason: "griefing", length: 600, status: "ACTIVE" }]);
      await until(() => kicked("Grunt"), "the server to kick Grunt", SLOW);
      await until(() => online().length === 0, "Grunt to leave the agent's players", SLOW);
      expect(w.lines).not.toContain("unknown command: ban"); // what ioq3 answers when the line reaches it
      // The console's answer says it is queued; the round's report says VyHub's answer once it has it (after the POST).
      await until(
        () => w.logger.lines.some((l) => l.msg.includes("Grunt has been banned for 10m. Reason: griefing")),
        "the round's report of VyHub's answer",
        SLOW,
      );
    },
    SLOW,
  );

  // Hank, a real client, joins over 127.0.0.1 on the emptied server: listed, answered, rewarded, kicked twice.
  humanSteps(OPENARENA_HUMAN, { world: () => w, port: () => port, host: "127.0.0.1" });

  test(
    "every hostile value said through the preset's escaping is one console line holding the cleaned value",
    async () => {
      const wrong: string[] = [];
      for (const value of [...HOSTILE, "quit;".repeat(80)]) {
        const reply = await w.bridge.exec(`say ${openarena.escape(value)}`);
        const expected = `console: ${sanitize(value, QUAKE_VALUE_BYTES).replace(/"/g, "'")}`;
        if (reply !== expected) wrong.push(`${JSON.stringify(value)} → ${JSON.stringify(reply)}`);
      }
      expect(wrong).toEqual([]);
      expect(await w.bridge.exec("echo alive")).toBe("alive");
    },
    SLOW,
  );

  test(
    "ioq3 reads its console 256 bytes at a time: a longer command is refused, lines written at once are never cut",
    async () => {
      const err = (await w.bridge.exec(`say "${"y".repeat(300)}"`).catch((e) => e)) as Error;
      expect(err.message).toContain("this console reads 256 at a time");
      // The operator types a long line while the agent's command holds the console (a map loading): together they
      // are more than ioq3 reads at once. Had a read cut the typed line, its rest (`quit"`, after the `;`) would
      // have run as a command and stopped the server; the line waits for the map's marker instead.
      const loading = w.bridge.exec("map oa_dm1");
      await Bun.sleep(0);
      w.console.write(`say "${"t".repeat(200)};quit"\n`);
      await loading;
      await until(() => w.lines.includes(`console: ${"t".repeat(200)};quit`), "the typed line's answer", SLOW);
      expect(await w.bridge.exec("echo alive")).toBe("alive");
    },
    SLOW,
  );

  test(
    "quit stops the server cleanly",
    async () => {
      await w.bridge.stop();
      expect(w.exits).toEqual([
        {
          code: 0,
          signal: null,
          reason: "stopped by hub-agent (exited with code 0)",
          requested: true,
          restarting: false,
        },
      ]);
      expect(w.lines).toContain("----- Server Shutdown (Server quit) -----");
    },
    SLOW,
  );
});
