import { describe, expect, test } from "bun:test";
import { openarena, parseQuakeStatus } from "../../../lib/game/presets/openarena.ts";
import { lineBridge, playerEvents, recordingBridge } from "./recording.ts";

/** Measured on openarena-server 0.8.8 / ioq3 1.36 (Debian): the console (stderr) when `addbot sarge 1` runs. */
const USERINFO_SARGE =
  "ClientUserinfoChanged: 0 n\\Sarge\\t\\0\\model\\sarge\\hmodel\\sarge\\c1\\4\\c2\\5\\hc\\50\\w\\0\\l\\0\\skill\\ 1.00\\tt\\0\\tl\\0\\id\\";
const USERINFO_GRUNT = "ClientUserinfoChanged: 1 n\\Grunt\\t\\0\\model\\grunt\\hmodel\\grunt\\id\\";

const STATUS_OLD = `map: oa_dm1
num score ping name            lastmsg address               qport rate
--- ----- ---- --------------- ------- --------------------- ----- -----
  0     0    0 Sarge^7               0 bot                       0 16384
  1     3   27 Grunt^7               0 127.0.0.1:27961          123 25000
`;
/** Measured on ioq3 1.36+u20221123 (Debian's openarena-server): `^7` ends the name column. */
const STATUS_NEW = `map: oa_dm1
cl score ping name            address                                 rate 
-- ----- ---- --------------- --------------------------------------- -----
 0     0    0 Sarge           ^7bot                                     16384
 1    -2 CNCT Big ^1Name X    ^7127.0.0.1:27961                         25000

`;

describe("openarena preset", () => {
  test("status in both ioq3 layouts: slot, name without colour codes (the id), map", () => {
    expect(parseQuakeStatus(STATUS_OLD)).toEqual({
      map: "oa_dm1",
      players: [
        { id: "Sarge", name: "Sarge", slot: "0", extra: { Score: 0, Ping: "0" } },
        { id: "Grunt", name: "Grunt", slot: "1", extra: { Score: 3, Ping: "27" } },
      ],
    });
    const now = parseQuakeStatus(STATUS_NEW);
    expect(now.players.map((p) => [p.slot, p.name])).toEqual([
      ["0", "Sarge"],
      ["1", "Big Name X"],
    ]);
    expect(parseQuakeStatus("print\nBad rconpassword.\n").players).toEqual([]);
  });

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
      "say: Sarge^7: !dashboard please",
      "say: Sarge^7: just chatting",
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
    const { bridge, lines, events, transport } = await lineBridge(openarena, () => STATUS_OLD, { parseReplies: true });
    transport.handler = (c) => (c === "status" ? STATUS_OLD : reply);
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
