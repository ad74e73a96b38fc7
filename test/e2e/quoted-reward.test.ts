/**
 * End to end, a reward command as VyHub's official addons write it, the placeholder in quotes
 * (`say thanks "%nick%" for your support`), for a player whose nick is `Mal;quit;…`, on a real console: hub-agent wraps a Nexuiz 2.5.2
 * dedicated server (DarkPlaces, Debian package `nexuiz-server`) with the xonotic preset, against the in-memory
 * service. DarkPlaces ends a command at `;` outside quotes; had the value brought quotes of its own
 * (`say thanks ""Mal;quit;…"" …`), they would cancel the template's and the server would run `quit`. It must say the
 * line with the nick whole, stay up, and report the reward once.
 *
 * The nick comes from a bot: `bot_prefix` puts `Mal;quit;` in front of its name. Loopback only (IPv4 and IPv6), no
 * master servers. Skipped, with the reason, when the server is not installed (`.ci/run` installs it).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { until } from "../support/until.ts";
import { freePort, online, startWorld, stopWorld, userOf, type World } from "./world.ts";

const SERVER = "/usr/games/nexuiz-server";
const installed = existsSync(SERVER);
if (!installed)
  console.warn(`SKIPPED: the quoted reward test needs ${SERVER} (Debian package nexuiz-server; .ci/run installs it)`);

const SLOW = { timeoutMs: 30_000 }; // a loaded 2-core machine takes a while to load a map
const PREFIX = "Mal;quit;";

describe.skipIf(!installed)("a quoted %nick% on a real wrapped DarkPlaces console (Nexuiz 2.5.2)", () => {
  let w: World;

  beforeAll(async () => {
    const home = mkdtempSync(join(tmpdir(), "hub-quoted-reward-"));
    const userdir = join(home, "nexuiz");
    mkdirSync(join(userdir, "data"), { recursive: true });
    const cfg = [
      "sv_public 0",
      ...["sv_master1", "sv_master2", "sv_master3", "sv_master4"].map((m) => `set ${m} ""`),
      ...["sv_masterextra1", "sv_masterextra2", "sv_masterextra3"].map((m) => `set ${m} ""`),
      "net_address 127.0.0.1",
      "net_address_ipv6 ::1",
      `port ${await freePort("udp")}`,
      "bot_join_empty 1",
      "bot_number 1",
      `set bot_prefix "${PREFIX}"`, // in quotes: the config's own `;` stays text
      "sv_eventlog 1",
    ];
    writeFileSync(join(userdir, "data", "server.cfg"), `${cfg.join("\n")}\n`);
    w = await startWorld(home, {
      HUB_GAME_BRIDGE: "wrapper",
      HUB_GAME_PRESET: "xonotic",
      HUB_GAME_WRAPPER_COMMAND: JSON.stringify([
        SERVER,
        "-userdir",
        userdir,
        "+exec",
        "server.cfg",
        "+map",
        "aggressor",
      ]),
    });
  }, 60_000);

  afterAll(() => stopWorld(w));

  test('`say thanks "%nick%" for your support` for the bot `Mal;quit;…`: said with the nick whole, no `quit`, reported once', async () => {
    await until(() => online(w).some((n) => n.startsWith(PREFIX)), "the bot online", SLOW);
    const nick = online(w).find((n) => n.startsWith(PREFIX))!;
    await until(() => w.agent.users.get(nick) !== undefined, `the service user of ${nick}`, SLOW);
    const applied = w.sb.state.addReward({
      user_id: userOf(w, nick).id,
      reward: {
        name: "Thanks",
        type: "COMMAND",
        data: { command: 'say thanks "%nick%" for your support' },
        on_event: "DIRECT",
      },
    });
    // `say` prints its arguments as typed, the template's quotes around the whole nick.
    const said = `<Nexuiz 2.5.2 Server> thanks "${nick}" for your support`;
    await until(() => w.lines.some((l) => l.includes(said)), "the reward's say on the server", {
      ...SLOW,
      abort: () => (w.exits.length ? `the server exited (${w.exits[0]!.reason})` : undefined),
      diagnostics: () => [...w.exchanges.map((e) => `> ${e.command}`), ...w.lines.slice(-15)].join("\n"),
    });
    await until(() => applied.executed_on.includes(w.sb.serverId), "the reward reported (PATCH executed_on)", SLOW);
    // The server is still there: it answers, did not exit, and never saw a `quit`.
    expect((await w.bridge.exec("echo still up")).trim()).toBe("still up");
    expect(w.exits).toEqual([]);
    expect(w.lines.some((l) => /dropped|disconnected/.test(l))).toBe(false);
    expect(w.exchanges.map((e) => e.command)).toContain(`say thanks "${nick}" for your support`);
    expect(w.lines.filter((l) => l.includes(said))).toHaveLength(1); // once
  }, 60_000);
});
