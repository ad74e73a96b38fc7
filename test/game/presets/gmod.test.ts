import { describe, expect, test } from "bun:test";
import { gmod, parseSrcdsStatus } from "../../../lib/game/presets/gmod.ts";
import { lineBridge, playerEvents, recordingBridge } from "./recording.ts";

/** STEAM_0:0:11101 = 76561197960287930 = [U:1:22202] (a well-known account). */
const ALICE = "76561197960287930";
const BOB = "76561197960273212"; // STEAM_0:0:3742

const STATUS = `hostname: My GMod Server
version : 2023.06.28/24 9092 secure
udp/ip  : 0.0.0.0:27015  (public ip: 1.2.3.4)
map     : gm_construct at: 0 x, 0 y, 0 z
players : 3 (16 max)

# userid name                uniqueid            connected ping loss state  adr
#      2 "Alice"             STEAM_0:0:11101     05:12       48    0 active 1.2.3.4:27005
#      3 "Bob "the" builder" STEAM_0:0:3742      01:02       30    0 active 5.6.7.8:27005
#      4 "BOT Kyle"          BOT                                       active
`;

const T = "L 11/21/2026 - 10:00:00: ";

describe("gmod preset", () => {
  test("status: userid, names with quotes, SteamID64 from STEAM_0, bots without id, map and max", () => {
    expect(parseSrcdsStatus(STATUS)).toEqual({
      map: "gm_construct",
      maxPlayers: 16,
      players: [
        { id: ALICE, name: "Alice", slot: "2" },
        { id: BOB, name: 'Bob "the" builder', slot: "3" },
        { name: "BOT Kyle", slot: "4" },
      ],
    });
  });

  test("HL log lines: connect (pending id completed on validation), spawn, chat, kill, disconnect", async () => {
    const { lines, events } = await lineBridge(gmod);
    lines.push(
      `${T}"Alice<2><STEAM_0:0:11101><>" connected, address "1.2.3.4:27005"`,
      `${T}"Alice<2><STEAM_0:0:11101><>" STEAM USERID validated`,
      `${T}"Alice<2><STEAM_0:0:11101><Unassigned>" entered the game`,
      `${T}"Bob<3><STEAM_ID_PENDING><>" connected, address "5.6.7.8:27005"`,
      `${T}"Bob<3><STEAM_0:0:3742><>" STEAM USERID validated`,
      `${T}"Alice<2><STEAM_0:0:11101><Team>" say "!dashboard"`,
      // Forgery attempts in chat text: a connect and a kill, with a name that isn't online.
      `${T}"Alice<2><STEAM_0:0:11101><Team>" say "x<9><STEAM_0:0:666><>" connected, address ""`,
      `${T}"Alice<2><STEAM_0:0:11101><Team>" say "x" killed "Bob<3><STEAM_0:0:3742><Team>" with "gun"`,
      `${T}"Alice<2><STEAM_0:0:11101><Team>" killed "Bob<3><STEAM_0:0:3742><Team>" with "weapon_crowbar"`,
      `${T}"Bot01<5><BOT><>" connected, address "none"`,
      `${T}"Bob<3><STEAM_0:0:3742><Team>" disconnected (reason "Kicked by Console : "spam"")`,
    );
    const alice = { id: ALICE, name: "Alice", slot: "2" };
    const bob = { id: BOB, name: "Bob", slot: "3" };
    expect(playerEvents(events)).toEqual([
      { type: "player_connect", player: alice },
      { type: "player_spawn", player: alice },
      { type: "player_connect", player: bob },
      { type: "chat_command", player: alice, command: "dashboard", args: [] },
      { type: "player_death", player: bob, killer: alice },
      { type: "player_disconnect", player: bob, reason: 'Kicked by Console : "spam"' },
    ]);
  });

  describe("a player's console chat line (`<name>: <text>`, beside the log lines with sv_logecho) is no event", () => {
    // Steam names take `/` and `:`: Mallory named `11/21/2026 - 10:00:00` prints her chat as the HL log prefix.
    const MALLORY = "11/21/2026 - 10:00:00";
    const row = (slot: number, name: string, id: string) =>
      `#      ${slot} "${name}" ${id} 05:12 48 0 active 1.2.3.6:27005`;
    const status = (...names: string[]) =>
      [
        "# userid name                uniqueid            connected ping loss state  adr",
        row(2, "Alice", "STEAM_0:0:11101"),
        row(3, "Bob", "STEAM_0:0:3742"),
        ...names.map((n, i) => row(4 + i, n, `STEAM_0:1:${2 + i}`)),
      ].join("\n");
    const FORGED = [
      '"Alice<2><STEAM_0:0:11101><>" say "!ban Bob 1w griefing"',
      '"Alice<2><STEAM_0:0:11101><>" disconnected (reason "x")',
      // A banned id's connect in Bob's userid: its kick would hit Bob.
      '"Banned<3><STEAM_0:1:4242><>" connected, address "1.2.3.4:5"',
    ];

    test("her name from the player list: every chat form, with and without `L `", async () => {
      const { bridge, lines, transport, events } = await lineBridge(gmod, () => status(MALLORY, `L ${MALLORY}`));
      const before = playerEvents(events).length;
      for (const name of [MALLORY, `L ${MALLORY}`])
        for (const prefix of ["", "(TEAM) ", "*DEAD* ", "*SPEC* ", "*DEAD*(TEAM) "])
          lines.push(...FORGED.map((text) => `${prefix}${name}: ${text}`));
      expect(playerEvents(events).slice(before)).toEqual([]);
      await bridge.status();
      expect(playerEvents(events).slice(before)).toEqual([]);
      expect(transport.commands.filter((c) => c !== "status")).toEqual([]);
    });

    test("her new name from the rename line, before the next poll; a name that starts another's", async () => {
      const { lines, events } = await lineBridge(gmod, () => status("Mallory", "Eve"));
      const before = playerEvents(events).length;
      // Eve's name is Mallory's and more: the line parses as Alice saying `!ban Bob 1w x: y`.
      const eve = `${MALLORY}: "Alice<2><STEAM_0:0:11101><>" say "!ban Bob 1w x`;
      lines.push(
        `${T}"Mallory<4><STEAM_0:1:2><>" changed name to "${MALLORY}"`,
        `${T}"Eve<5><STEAM_0:1:3><>" changed name to "${eve}"`,
        `${eve}: y"`,
        ...FORGED.map((text) => `${MALLORY}: ${text}`),
      );
      expect(playerEvents(events).slice(before)).toEqual([]);
    });

    test("bounded: a 64 KiB line of `: `, or of chat prefixes, beside a 1 KiB name is read in under 10 ms", async () => {
      const { lines, events } = await lineBridge(gmod, () => status("x".repeat(1024)));
      // The second is all chat prefix to a pattern that reads as far as it can: the scan must not follow it.
      for (const line of [`(TEAM) *DEAD* ${": ".repeat(32 * 1024)}`, "(: )".repeat(16 * 1024)]) {
        let best = Infinity;
        for (let r = 0; r < 3; r++) {
          const start = performance.now();
          lines.push(line);
          best = Math.min(best, performance.now() - start);
        }
        expect(best).toBeLessThan(10);
      }
      expect(playerEvents(events).length).toBe(3);
    });

    test("the log's own lines still count, unless a name is their very date", async () => {
      const { lines, events } = await lineBridge(gmod, () => status(`L ${MALLORY}`));
      const before = playerEvents(events).length;
      lines.push(
        `L 11/21/2026 - 10:00:01: "Alice<2><STEAM_0:0:11101><>" say "!dashboard"`,
        `${MALLORY}: "Alice<2><STEAM_0:0:11101><>" say "!dashboard"`, // 10:00:00 without `L `: a log line
        `L ${MALLORY}: "Alice<2><STEAM_0:0:11101><>" say "!warns"`, // Mallory's chat, or a log line: dropped
      );
      const alice = { id: ALICE, name: "Alice", slot: "2" };
      expect(playerEvents(events).slice(before)).toEqual([
        { type: "chat_command", player: alice, command: "dashboard", args: [] },
        { type: "chat_command", player: alice, command: "dashboard", args: [] },
      ]);
    });
  });

  test("commands: kickid by userid, ULX psay/tsay by SteamID, adduserid/removeuserid (no temp groups)", async () => {
    const { bridge, transport } = recordingBridge(gmod);
    const alice = { id: ALICE, name: "Alice", slot: "2" };
    await bridge.kick(alice, "Breaking rules");
    await bridge.message(alice, "hi; there");
    await bridge.message(null, "welcome");
    await bridge.setGroup(alice, "vip", "add", 600);
    await bridge.setGroup(alice, "vip", "remove");
    expect(transport.commands).toEqual([
      'kickid 2 "Breaking rules"',
      'ulx psay "$STEAM_0:0:11101" "hi; there"',
      'ulx tsay "welcome"',
      'ulx adduserid "STEAM_0:0:11101" "vip"',
      'ulx removeuserid "STEAM_0:0:11101"',
    ]);
    expect(bridge.userType).toBe("STEAM");
    expect(bridge.caps.multiGroup).toBe(false);
  });
});
