import { describe, expect, test } from "bun:test";
import { stripDarkplacesColours } from "../../../lib/game/presets/ids.ts";
import { parseDarkplacesStatus, xonotic } from "../../../lib/game/presets/xonotic.ts";
import { lineBridge, playerEvents, recordingBridge } from "./recording.ts";

/** Measured on Debian's nexuiz-server 2.5.2 (DarkPlaces 2018): `status 1` over rcon (raw colour codes). */
const STATUS_RAW = `host:     Nexuiz 2.5.2 Server
version:  Nexuiz build 0~20180908~beta1-5 Debian (gamename Nexuiz)
protocol: 3504 (DP7)
map:      aggressor
timing:   2.7% CPU, 0.00% lost, offset avg 3.1ms, max 61.3ms, sdev 7.7ms
players:  2 active (8 max)

^2IP                                             %pl ping  time   frags  no   name
^3botclient                                        0    0  0:02:06    0  #1   ^7[BOT]Scorcher
^7botclient                                        0    0  0:05:27    5  #2   ^7[BOT]Airhead
`;

/** The same on the wrapped console, whose colours became ANSI codes the line sources remove; a human added. */
const STATUS_PLAIN = `map:      aggressor
players:  3 active (8 max)

IP                                             %pl ping  time   frags  no   name
botclient                                        0    0  0:00:01   -3  #1   [BOT]Necrotic
127.0.0.1:42000                                  2   48  1:03:09   12  #4   Big Name: x
[::1]:42001                                      0   12  0:00:09    0  #5   Ünï ^
`;

describe("xonotic preset", () => {
  test("status 1, raw and as the console shows it: slot, the whole name without colour codes (the id), map and size", () => {
    expect(parseDarkplacesStatus(STATUS_RAW)).toEqual({
      map: "aggressor",
      maxPlayers: 8,
      players: [
        { id: "[BOT]Scorcher", name: "[BOT]Scorcher", slot: "1", extra: { Frags: 0, Ping: 0 } },
        { id: "[BOT]Airhead", name: "[BOT]Airhead", slot: "2", extra: { Frags: 5, Ping: 0 } },
      ],
    });
    expect(parseDarkplacesStatus(STATUS_PLAIN).players.map((p) => [p.slot, p.name, p.extra])).toEqual([
      ["1", "[BOT]Necrotic", { Frags: -3, Ping: 0 }],
      ["4", "Big Name: x", { Frags: 12, Ping: 48 }],
      ["5", "Ünï ^", { Frags: 0, Ping: 12 }],
    ]);
    expect(parseDarkplacesStatus("").players).toEqual([]);
  });

  test("colour codes: digits and ^xRGB go, ^^ is a caret", () => {
    expect(stripDarkplacesColours("^1Red^7 ^x0F0green^^3 ^a^")).toBe("Red green^3 ^a^");
  });

  /** The console lines of two bots joining, one chatting and being kicked (sv_eventlog 1), in both forms. */
  const RAW = [
    "^7Server listening on address 127.0.0.1:26123",
    "^7:join:1:1:bot:^1[BOT]^7Dominator",
    "^7:team:1:10",
    "^7^4[BOT]Dominator^4 connected",
    "^7:join:2:2:127.0.0.1:42000:Air: head",
    "^7^3^1[BOT]^7Dominator^7: !dashboard please",
    "^7^3Air: head^7: hi: there",
    "^7<Nexuiz 2.5.2 Server> !ban Air: head",
    '^7Client "^1[BOT]^7Dominator" dropped',
    "^7:part:1",
  ];
  const plain = (line: string) => line.replace(/^\^7/, "").replace(/\^[0-9]/g, "");

  for (const [form, lines] of [
    ["raw (rcon replies, log_file)", RAW],
    ["as the console shows it", RAW.map(plain)],
  ] as const) {
    test(`join, chat commands and leave, ${form}`, async () => {
      const { lines: source, events } = await lineBridge(xonotic);
      source.push(...lines);
      const bot = { id: "[BOT]Dominator", name: "[BOT]Dominator", slot: "1" };
      const human = { id: "Air: head", name: "Air: head", slot: "2" };
      expect(playerEvents(events)).toEqual([
        { type: "player_connect", player: bot },
        { type: "player_connect", player: human },
        { type: "chat_command", player: bot, command: "dashboard", args: ["please"] },
        { type: "player_disconnect", player: bot },
      ]);
    });
  }

  test("chat can't forge a join, a leave or another player's command", async () => {
    const { lines, events } = await lineBridge(xonotic, () => "#1   Alice\n");
    lines.push(":join:1:1:bot:Alice");
    const before = events.length;
    lines.push(
      // Players named ":join:7:7:bot" and 'Client "Alice" dropped (x' saying something, as the console shows it.
      ":join:7:7:bot: Mallory",
      'Client "Alice" dropped (x: y)',
      // Someone named "Alice: !ban Bob" saying "now" is not Alice saying "!ban Bob: now".
      "Alice: !ban Bob: now",
    );
    expect(events.slice(before)).toEqual([]);
  });

  test("commands: kick and tell by slot, say; values quoted with $ doubled", async () => {
    const { bridge, transport } = recordingBridge(xonotic);
    const bob = { id: "Bob", name: "Bob", slot: "4" };
    await bridge.kick(bob, 'rule "3"; $cheating');
    await bridge.message(bob, "hi ${sv_adminnick}");
    await bridge.message(null, "^1Welcome\\");
    expect(transport.commands).toEqual([
      `kick # 4 "rule '3'; $$cheating"`,
      `tell #4 "hi $\${sv_adminnick}"`,
      `say "^1Welcome/"`,
    ]);
  });
});
