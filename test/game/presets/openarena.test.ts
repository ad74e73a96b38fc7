import { describe, expect, test } from "bun:test";
import { openarena, parseQuakeStatus } from "../../../lib/game/presets/openarena.ts";
import { capture } from "../../support/captures.ts";
import { ioq3Status } from "../../support/ioq3-status.ts";

const ioq3Capture = (file: string) => capture(`openarena/${file}`);
import { lineBridge, playerEvents, recordingBridge } from "./recording.ts";

/** Measured on openarena-server 0.8.8 / ioq3 1.36 (Debian): the console (stderr) when `addbot sarge 1` runs. */
const USERINFO_SARGE =
  "ClientUserinfoChanged: 0 n\\Sarge\\t\\0\\model\\sarge\\hmodel\\sarge\\c1\\4\\c2\\5\\hc\\50\\w\\0\\l\\0\\skill\\ 1.00\\tt\\0\\tl\\0\\id\\";
const USERINFO_GRUNT = "ClientUserinfoChanged: 1 n\\Grunt\\t\\0\\model\\grunt\\hmodel\\grunt\\id\\";

/**
 * ioq3 1.35's layout (from its SV_Status_f; no such server runs here): `^7` after the name, lastmsg, the
 * address with its port, the qport 5 wide (touching an address longer than 22), CNCT and ZMBI in the ping column.
 */
const STATUS_OLD = `map: oa_dm1
num score ping name            lastmsg address               qport rate
--- ----- ---- --------------- ------- --------------------- ----- -----
  0     0    0 Sarge^7               0 bot                       0 16384
  1     3   27 Grunt^7               0 127.0.0.1:27961          123 25000
  2     0 CNCT Big ^1Name X^7          0 [::1]:27962              4567 25000
  3     0 ZMBI Gone^7                0 127.0.0.1:27963          124 25000
  4     7   40 A Sixteen Chars^7 1234567 [2001:db8:0:0:0:0:0:77]:2796065535 25000

`;

/** Every row the real server printed (test/fixtures/openarena/), as the parser reads it. */
const parsedRows = (file: string) =>
  parseQuakeStatus(ioq3Capture(file).text).players.map((p) => `${p.slot} ${p.name} ${p.extra?.Ping}`);

describe("openarena preset: the player list", () => {
  test("captured from the real server: a human over IPv4 (a spectator), a bot, a human over IPv6 with colour codes", () => {
    const { header, text } = ioq3Capture("status-players.txt");
    expect(header).toContain("openarena-server 0.8.8+dfsg-6 (ioq3 1.36+u20221123");
    expect(header).toContain("openarena 0.8.8+dfsg-6 client");
    expect(text).toContain(" Hank            ^7127.0.0.1   "); // a human: no port, `^7` before the address
    expect(parseQuakeStatus(text)).toEqual({
      map: "oa_dm1",
      players: [
        { id: "Hank", name: "Hank", slot: "0", extra: { Score: 0, Ping: "0" } },
        { id: "Sarge", name: "Sarge", slot: "1", extra: { Score: 1, Ping: "0" } },
        { id: "Big Hank X", name: "Big Hank X", slot: "2", extra: { Score: 0, Ping: "0" } },
      ],
    });
  });

  test("captured: a player still connecting (CON) and one loading the map (ping 999) are listed", () => {
    expect(parsedRows("status-connecting.txt")).toEqual(["0 Hank 999", "1 Sarge 0", "2 Big Hank X CON"]);
  });

  test("captured: a player who just left (ZMB, blank name) is not listed", () => {
    expect(ioq3Capture("status-zombie.txt").text).toContain(" 0     0 ZMB     ");
    expect(parsedRows("status-zombie.txt")).toEqual(["1 Sarge 0", "2 Big Hank X 0"]);
  });

  test("the fakes' status is the real server's, byte for byte", () => {
    const hank = { slot: 0, name: "Hank", address: "127.0.0.1" };
    const sarge = { slot: 1, name: "Sarge", address: "bot", rate: 16384 };
    const big = { slot: 2, name: "^1Big ^2Hank X", address: "::1" };
    expect(ioq3Status("oa_dm1", [hank, { ...sarge, score: 1 }, big])).toBe(ioq3Capture("status-players.txt").text);
    expect(ioq3Status("oa_dm1", [{ ...hank, name: "", ping: "ZMB" }, sarge, big])).toBe(
      ioq3Capture("status-zombie.txt").text,
    );
    expect(ioq3Status("oa_dm1", [{ ...hank, ping: 999 }, sarge, { ...big, ping: "CON" }])).toBe(
      ioq3Capture("status-connecting.txt").text,
    );
  });

  test("ioq3 1.35's layout: ports, CNCT listed, ZMBI not, a long address touching its qport, a name touching lastmsg", () => {
    expect(parseQuakeStatus(STATUS_OLD)).toEqual({
      map: "oa_dm1",
      players: [
        { id: "Sarge", name: "Sarge", slot: "0", extra: { Score: 0, Ping: "0" } },
        { id: "Grunt", name: "Grunt", slot: "1", extra: { Score: 3, Ping: "27" } },
        { id: "Big Name X", name: "Big Name X", slot: "2", extra: { Score: 0, Ping: "CNCT" } },
        { id: "A Sixteen Chars", name: "A Sixteen Chars", slot: "4", extra: { Score: 7, Ping: "40" } },
      ],
    });
    expect(parseQuakeStatus("print\nBad rconpassword.\n").players).toEqual([]);
    expect(parseQuakeStatus("Server is not running.\n")).toEqual({ players: [] });
  });

  test("names that look like an address, a row or the table's end stay names", () => {
    const tricky = ["^7bot 1", "Bob ^7::1", "0 0 0 Eve", "x^7", "  spaced  out  "];
    const status = ioq3Status(
      "oa_dm1",
      tricky.map((name, slot) => ({ slot, name, address: slot % 2 ? "::1" : "127.0.0.1" })),
    );
    expect(parseQuakeStatus(status).players.map((p) => p.name)).toEqual([
      "bot 1",
      "Bob ::1",
      "0 0 0 Eve",
      "x",
      "spaced  out",
    ]);
  });

  test("only the table counts: chat printed around it in a wrapped console's reply forges no row and no map", () => {
    const hank = { slot: 0, name: "Hank", address: "127.0.0.1" };
    // A player named like a row (or like the map line) says something right before and right after the table.
    const forged = " 3     0    0 Victim          ^7127.0.0.1                               99999";
    const reply =
      `say: ${forged}: x\n${forged}^7: x\nmap: evil^7: hi\n` +
      ioq3Status("oa_dm1", [hank]) +
      `${forged}\n say: 4 0 0 Victim ^7::1 99999\n`;
    expect(parseQuakeStatus(reply)).toEqual({
      map: "oa_dm1",
      players: [{ id: "Hank", name: "Hank", slot: "0", extra: { Score: 0, Ping: "0" } }],
    });
    // Without the table there are no rows at all.
    expect(parseQuakeStatus(`${forged}\n${forged}\n`).players).toEqual([]);
  });

  test("linear: a 64 KiB line in the table, whatever it holds, is read in under 10 ms", () => {
    const k = 64 * 1024;
    const lines = [
      " ".repeat(k),
      "^7".repeat(k / 2),
      ` 0     0    0 ${"^7 ".repeat(k / 3)}`,
      ` 0     0    0 ${"a".repeat(k)} ^7${"1".repeat(k)} ${"1 ".repeat(k / 2)}`,
      ` 0     0    0 Hank ^7${":".repeat(k)} 99999`,
      ` 0     0    0 Hank ^7[${":".repeat(k)}]:1 99999`,
      ` 0 ${"0 ".repeat(k / 2)}`,
      `${" ".repeat(k)}1`,
      `cl score ping name${" ".repeat(k)}x`,
    ];
    const top = ioq3Status("oa_dm1", []).trimEnd();
    for (const line of lines) {
      for (const reply of [`${top}\n${line}\n\n`, `${line}\n`]) {
        // The best of 5: a busy machine may pause any one run; a quadratic match would take seconds every time.
        const times = Array.from({ length: 5 }, () => {
          const started = performance.now();
          parseQuakeStatus(reply);
          return performance.now() - started;
        });
        expect(Math.min(...times), JSON.stringify(line.slice(0, 40))).toBeLessThan(10);
      }
    }
  });
});

describe("openarena preset", () => {
  test("a bot joining, chatting, dying and leaving, as the console prints it", async () => {
    const { lines, events } = await lineBridge(openarena);
    const sarge = { id: "Sarge", name: "Sarge", slot: "0" };
    lines.push(
      USERINFO_SARGE,
      "ClientConnect: 0",
      'broadcast: print "Sarge^7 connected\\n"',
      'broadcast: print "Sarge^7 entered the game\\n"',
      "ClientBegin: 0",
      "console: hello there",
      "say: Sarge^7: .dashboard please",
      "say: Sarge^7: just chatting",
      "say: Sarge^7: !ban Grunt 1 x", // OpenArena's own admin command: not ours
      "Kill: 1022 0 20: <world> killed Sarge by MOD_SUICIDE",
      "Sarge was kicked",
      "ClientDisconnect: 0",
    );
    expect(playerEvents(events)).toEqual([
      { type: "player_connect", player: sarge },
      { type: "player_spawn", player: sarge },
      { type: "chat_command", player: sarge, command: "dashboard", args: ["please"] },
      { type: "player_death", player: sarge },
      { type: "player_disconnect", player: sarge },
    ]);
  });

  test("captured: a human joins, types chat commands, goes to the spectators; another joins over IPv6; he leaves", async () => {
    const { lines, events } = await lineBridge(openarena);
    const { header, text } = ioq3Capture("console-human.txt");
    expect(header).toContain("openarena 0.8.8+dfsg-6 client");
    lines.push(...text.trimEnd().split("\n"));
    const hank = { id: "Hank", name: "Hank", slot: "0" };
    const big = { id: "Big Hank X", name: "Big Hank X", slot: "2" };
    const dashboard = { type: "chat_command" as const, player: hank, command: "dashboard", args: [] };
    expect(playerEvents(events)).toEqual([
      { type: "player_connect", player: hank },
      { type: "player_spawn", player: hank },
      // `!ban Hank 1 test` and `!dashboard` are OpenArena's own (g_admin); each `.dashboard` is ours.
      dashboard,
      dashboard,
      dashboard,
      dashboard,
      { type: "player_death", player: hank, killer: hank },
      { type: "player_spawn", player: hank }, // as a spectator
      { type: "player_connect", player: big },
      { type: "player_spawn", player: big },
      { type: "player_spawn", player: hank },
      { type: "player_spawn", player: big },
      { type: "player_disconnect", player: hank },
    ]);
  });

  test("games.log lines (match time prefix), connect before userinfo, and a kill between two players", async () => {
    const { lines, events } = await lineBridge(openarena);
    lines.push(
      "  0:05 ClientConnect: 1",
      `  0:05 ${USERINFO_GRUNT}`,
      "  0:06 ClientBegin: 1",
      `  0:07 ${USERINFO_SARGE}`,
      "  0:07 ClientConnect: 0",
      "  0:30 Kill: 0 1 7: Sarge killed Grunt by MOD_ROCKET_SPLASH",
    );
    const grunt = { id: "Grunt", name: "Grunt", slot: "1" };
    const sarge = { id: "Sarge", name: "Sarge", slot: "0" };
    expect(playerEvents(events)).toEqual([
      { type: "player_connect", player: grunt },
      { type: "player_spawn", player: grunt },
      { type: "player_connect", player: sarge },
      { type: "player_death", player: grunt, killer: sarge },
    ]);
  });

  test("a renamed player is a new identity: the old name leaves, the new one joins", async () => {
    const { lines, events } = await lineBridge(openarena);
    lines.push(USERINFO_GRUNT, "ClientConnect: 1", USERINFO_GRUNT, "ClientUserinfoChanged: 1 n\\Grunty\\t\\0\\id\\");
    expect(playerEvents(events).map((e) => `${e.type} ${"player" in e ? e.player.id : ""}`)).toEqual([
      "player_connect Grunt",
      "player_disconnect Grunt",
      "player_connect Grunty",
    ]);
  });

  test("rcon replies are parsed too: a kick's ClientDisconnect only appears in the reply", async () => {
    let reply = "";
    const status = ioq3Status("oa_dm1", [
      { slot: 0, name: "Sarge", address: "bot" },
      { slot: 1, name: "Grunt", address: "127.0.0.1" },
    ]);
    const { bridge, lines, events, transport } = await lineBridge(openarena, () => status, { parseReplies: true });
    transport.handler = (c) => (c === "status" ? status : reply);
    await bridge.status();
    expect(playerEvents(events).map((e) => e.type)).toEqual(["player_connect", "player_connect"]);
    reply = "Grunt was kicked\nKill: 1022 1 20: <world> killed Grunt by MOD_SUICIDE\nClientDisconnect: 1\n";
    await bridge.kick({ id: "Grunt", name: "Grunt" }, "bye");
    expect(transport.commands.at(-1)).toBe("clientkick 1");
    expect(
      playerEvents(events)
        .slice(2)
        .map((e) => e.type),
    ).toEqual(["player_death", "player_disconnect"]);
    lines.push("ClientDisconnect: 1"); // the same leave again: already gone
    expect(playerEvents(events)).toHaveLength(4);
  });

  test("commands: kick by slot (no reason on this console), tell, say; no groups", async () => {
    const { bridge, transport } = recordingBridge(openarena);
    const sarge = { id: "Sarge", name: "Sarge", slot: "0" };
    await bridge.kick(sarge, "griefing");
    await bridge.message(sarge, "private hello");
    await bridge.message(null, "hello from the agent\nsecond line");
    expect(transport.commands).toEqual([
      "clientkick 0",
      'tell 0 "private hello"',
      'say "hello from the agent"',
      'say "second line"',
    ]);
    await expect(bridge.setGroup(sarge, "vip", "add")).rejects.toThrow("openarena preset has no group_add command");
    await expect(bridge.kick({ id: "Nobody", name: "Nobody" }, "x")).rejects.toThrow("{slot} is not known");
    expect(bridge.userType).toBe("CENTRAL");
    expect(bridge.caps).toMatchObject({ multiGroup: false, privateMessage: true });
  });
});
