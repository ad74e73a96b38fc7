import { describe, expect, test } from "bun:test";
import { cs2, parseCs2Status } from "../../../lib/game/presets/cs2.ts";
import { resolvePreset } from "../../../lib/game/presets/index.ts";
import { lineBridge, playerEvents, recordingBridge } from "./recording.ts";

const ALICE = "76561197960287930"; // [U:1:22202]
const EVE = "76561197960269970"; // [U:1:4242]

const STATUS = `Server:  Running [0.0.0.0:27015]
players  : 2 humans, 1 bots (16/0 max) (not hibernating) (unreserved)
loaded spawngroup(  1)  : SV:  [1: de_dust2 | main lump | mapload]
---------players--------
  id     time ping loss      state   rate adr name
65535 [NoChan]    0    0 challenging      0unknown ''
    2    00:12   24    0     active 786432 1.2.3.4:27005 'Alice'
    3      BOT    0    0     active      0 'Bot Joe'
    4    03:40   31    0     active 786432 5.6.7.8:27005 'Eve'
#end
`;

const T = "L 11/21/2026 - 10:00:00: ";

describe("cs2 preset", () => {
  test("status has no SteamIDs: slots, names, map and max only", () => {
    expect(parseCs2Status(STATUS)).toEqual({
      map: "de_dust2",
      maxPlayers: 16,
      players: [
        { name: "Alice", slot: "2" },
        { name: "Bot Joe", slot: "3" },
        { name: "Eve", slot: "4" },
      ],
    });
    const quoted = parseCs2Status(`    5    00:01   10    0     active 786432 9.9.9.9:27005 'It's "me"'`);
    expect(quoted.players).toEqual([{ name: `It's "me"`, slot: "5" }]);
  });

  test("status_json, when an operator sets it as the list command, gives SteamID64s", () => {
    const json = JSON.stringify({
      server: { max_players: 12, map: "de_inferno", clients: [{ steamid64: ALICE, name: "Alice", userid: 2 }] },
    });
    expect(parseCs2Status(json)).toEqual({
      maxPlayers: 12,
      map: "de_inferno",
      players: [{ id: ALICE, name: "Alice", slot: "2" }],
    });
  });

  test("log lines with [U:1:N]; polling keeps log-introduced players by slot and notices them leaving", async () => {
    let status = STATUS;
    const { bridge, lines, events } = await lineBridge(cs2, () => status);
    expect(playerEvents(events)).toEqual([]); // status alone identifies nobody
    lines.push(
      `${T}"Alice<2><[U:1:22202]><>" connected, address "1.2.3.4:27005"`,
      `${T}"Alice<2><[U:1:22202]><>" entered the game`,
      `${T}"Bot Joe<3><BOT><>" connected, address ""`,
      `${T}"Eve<4><[U:1:4242]><>" connected, address "5.6.7.8:27005"`,
      `${T}"Alice<2><[U:1:22202]><CT>" [100 200 30] killed "Eve<4><[U:1:4242]><TERRORIST>" [1 2 3] with "ak47" (headshot)`,
      `${T}"Alice<2><[U:1:22202]><CT>" say_team "!warns Eve"`,
    );
    const alice = { id: ALICE, name: "Alice", slot: "2" };
    const eve = { id: EVE, name: "Eve", slot: "4" };
    expect(playerEvents(events)).toEqual([
      { type: "player_connect", player: alice },
      { type: "player_spawn", player: alice },
      { type: "player_connect", player: eve },
      { type: "player_death", player: eve, killer: alice },
      { type: "chat_command", player: alice, command: "warns", args: ["Eve"] },
    ]);
    expect((await bridge.status()).players.map((p) => p.id)).toEqual([ALICE, EVE]);
    status = STATUS.replace(/^ {4}4 .*\n/m, ""); // Eve left without a line
    const s = await bridge.status();
    expect(s.players.map((p) => p.id)).toEqual([ALICE]);
    expect(playerEvents(events).at(-1)).toEqual({ type: "player_disconnect", player: eve });
    lines.push(`${T}"Alice<2><[U:1:22202]><CT>" disconnected (reason "Disconnect")`);
    expect(playerEvents(events).at(-1)).toEqual({ type: "player_disconnect", player: alice, reason: "Disconnect" });
  });

  test("a player named like the HL log prefix: her console chat line is no event, though status gives her no id", async () => {
    const MALLORY = "11/21/2026 - 10:00:00";
    const { lines, events } = await lineBridge(cs2, () =>
      [
        "  id     time ping loss      state   rate adr name",
        "    2    00:12   24    0     active 786432 127.0.0.1:27005 'Alice'",
        `    4    00:12   24    0     active 786432 127.0.0.1:27007 '${MALLORY}'`,
        "#end",
      ].join("\n"),
    );
    lines.push(`${T}"Alice<2><[U:1:22202]><>" connected, address "127.0.0.1:27005"`);
    const before = playerEvents(events).length;
    lines.push(
      `${MALLORY}: "Alice<2><[U:1:22202]><CT>" say "!ban Bob 1w griefing"`,
      `${MALLORY}: "Alice<2><[U:1:22202]><CT>" disconnected (reason "x")`,
    );
    expect(playerEvents(events).slice(before)).toEqual([]);
  });

  test("commands: kickid, say (answers too, naming the player); no private message or groups unless an operator adds templates", async () => {
    const { bridge, transport } = recordingBridge(cs2);
    const alice = { id: ALICE, name: "Alice", slot: "2" };
    await bridge.kick(alice, "Breaking rules");
    await bridge.message(null, "round restarts");
    expect(transport.commands).toEqual(['kickid 2 "Breaking rules"', 'say "round restarts"']);
    expect(bridge.caps.privateMessage).toBe(false);
    // An answer is a public line naming her (docs/game-consoles.md §5.6).
    await bridge.message(alice, "hi");
    expect(transport.commands.at(-1)).toBe('say "Alice: hi"');
    await expect(bridge.setGroup(alice, "vip", "add")).rejects.toThrow("game.overrides.commands.group_add");

    const custom = recordingBridge(
      resolvePreset("cs2", {
        commands: { group_add: "css_addadmin {steam64} {group}", message: "css_psay #{userid} {text}" },
      }),
    );
    await custom.bridge.setGroup(alice, "vip", "add");
    await custom.bridge.message(alice, "hi");
    expect(custom.transport.commands).toEqual([`css_addadmin ${ALICE} "vip"`, 'css_psay #2 "hi"']);
  });
});
