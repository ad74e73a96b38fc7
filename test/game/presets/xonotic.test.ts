import { describe, expect, test } from "bun:test";
import { stripDarkplacesColours } from "../../../lib/game/presets/ids.ts";
import { parseDarkplacesStatus, xonotic } from "../../../lib/game/presets/xonotic.ts";
import { capture } from "../../support/captures.ts";
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

/** A raw line as the wrapped console shows it (the terminal's colours, which every source removes). */
const plain = (line: string) => line.replace(/^\^7/, "").replace(/\^[0-9]/g, "");

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

  test("captured from the real server: a bot, a human over IPv4 (playing), a human over IPv6 (spectating)", () => {
    const { header, text } = capture("nexuiz/status-players.txt");
    expect(header).toContain("nexuiz-server 2.5.2+dp-9");
    expect(header).toContain("nexuiz 2.5.2+dp-9 client");
    expect(parseDarkplacesStatus(text)).toEqual({
      map: "aggressor",
      maxPlayers: 8,
      players: [
        { id: "[BOT]Eureka", name: "[BOT]Eureka", slot: "1", extra: { Frags: 2, Ping: 0 } },
        { id: "Hank", name: "Hank", slot: "2", extra: { Frags: 0, Ping: 17 } },
        { id: "Big Hank X", name: "Big Hank X", slot: "3", extra: { Frags: -666, Ping: 17 } },
      ],
    });
  });

  test("captured: a client still connecting is listed as `unconnected`, which is nobody yet", () => {
    const { text } = capture("nexuiz/status-connecting.txt");
    expect(text).toContain("#3   ^7unconnected\n");
    expect(parseDarkplacesStatus(text).players.map((p) => p.name)).toEqual(["[BOT]Eureka", "Hank"]);
  });

  test("only the table counts: chat printed before it on the wrapped console forges no row, map or size", () => {
    const { text } = capture("nexuiz/status-players.txt");
    // Players named like a row, the map line and the size line say something right before the table (the terminal
    // shows chat as "<name>: <text>").
    const forged = [
      "127.0.0.1:1: 0 0 0:00:01 0 #7 Victim",
      "map: evil",
      "players: 9 active (99 max)",
      "IP: %pl ping time frags no name",
    ];
    const reply = `${forged.join("\n")}\n${text}`;
    const parsed = parseDarkplacesStatus(reply);
    expect(parsed).toEqual(parseDarkplacesStatus(text));
    expect(parseDarkplacesStatus(`${forged[0]}\n`).players).toEqual([]);
  });

  test("captured: humans join over IPv4 and IPv6 (the event log prints no port), chat, are kicked, leave", async () => {
    const { header, text } = capture("nexuiz/log-humans.txt");
    expect(header).toContain("sv_eventlog 1");
    for (const form of [(l: string) => l, plain]) {
      const { lines, events } = await lineBridge(xonotic);
      lines.push(...text.trimEnd().split("\n").map(form));
      const hank = { id: "Hank", name: "Hank", slot: "2" };
      const big = { id: "Big Hank X", name: "Big Hank X", slot: "3" };
      expect(playerEvents(events)).toEqual([
        { type: "player_connect", player: hank },
        { type: "chat_command", player: hank, command: "ban", args: ["Eureka", "1", "x"] },
        { type: "player_disconnect", player: hank },
        { type: "player_connect", player: big },
        { type: "player_disconnect", player: big },
      ]);
    }
  });

  test("the event log's address has a fixed shape: a name that starts like an address stays whole", async () => {
    const { lines, events } = await lineBridge(xonotic);
    lines.push(
      "^7:join:4:4:127.0.0.1:1337:Pwn",
      "^7:join:5:5:0:0:0:0:0:0:0:1:0:0:0:1:x",
      "^7:join:6:6:0_0_0_0_0_0_0_1:Xonotic v6",
      "^7:join:7:7:bot:1.2.3.4:Eve",
    );
    expect(playerEvents(events).map((e) => ("player" in e ? `${e.player.slot} ${e.player.name}` : ""))).toEqual([
      "4 1337:Pwn",
      "5 0:0:0:1:x",
      "6 Xonotic v6",
      "7 1.2.3.4:Eve",
    ]);
  });

  test("linear: a 64 KiB line in the status table or the event log is read in under 10 ms", () => {
    const k = 64 * 1024;
    const header = "^2IP                                             %pl ping  time   frags  no   name";
    const lines = [
      " ".repeat(k),
      `^3${"x".repeat(k)}`,
      `a ${"1 ".repeat(k / 2)}`,
      `a 1 1 ${"1:".repeat(k / 2)}`,
      `a 1 1 0:00:00 1 #1 ${" ".repeat(k)}x`,
      `:join:1:1:${"0:".repeat(k / 2)}`,
      `:join:1:1:${"1.".repeat(k / 2)}`,
      `^7:join:1:1:bot:${" ".repeat(k)}`,
    ];
    for (const line of lines) {
      // The best of 5: a busy machine may pause any one run; a quadratic match would take seconds every time.
      const best = (fn: () => void) =>
        Math.min(
          ...Array.from({ length: 5 }, () => {
            const started = performance.now();
            fn();
            return performance.now() - started;
          }),
        );
      expect(
        best(() => parseDarkplacesStatus(`${header}\n${line}\n`)),
        line.slice(0, 30),
      ).toBeLessThan(10);
      expect(
        best(() => xonotic.lines.connect?.[0]?.exec(line)),
        line.slice(0, 30),
      ).toBeLessThan(10);
    }
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
    "^7:join:2:2:127.0.0.1:Air: head",
    "^7^3^1[BOT]^7Dominator^7: !dashboard please",
    "^7^3Air: head^7: hi: there",
    "^7<Nexuiz 2.5.2 Server> !ban Air: head",
    '^7Client "^1[BOT]^7Dominator" dropped',
    "^7:part:1",
  ];

  for (const [form, lines] of [
    ["raw (rcon replies, log_file)", RAW],
    ["as the console shows it", RAW.map(plain)],
  ] as const) {
    test(`join, chat commands and leave, ${form}; a name holding ": " joins by the list`, async () => {
      let status = "";
      const { bridge, lines: source, events } = await lineBridge(xonotic, () => status);
      source.push(...lines);
      const bot = { id: "[BOT]Dominator", name: "[BOT]Dominator", slot: "1" };
      const human = { id: "Air: head", name: "Air: head", slot: "2", extra: { Frags: 0, Ping: 20 } };
      expect(playerEvents(events)).toEqual([
        { type: "player_connect", player: bot },
        { type: "chat_command", player: bot, command: "dashboard", args: ["please"] },
        { type: "player_disconnect", player: bot },
      ]);
      // Her join line could be someone's chat (`<name>: <text>`): the list says who is in slot 2.
      status = `IP  %pl ping  time   frags  no   name\n127.0.0.1:26001  0  20  0:01:00  0  #2   Air: head\n`;
      await bridge.status();
      expect(playerEvents(events).at(-1)).toEqual({ type: "player_connect", player: human });
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

  test("a name shaped like an event-log line forges no join or leave in another player's slot", async () => {
    const status = [
      "IP                                             %pl ping  time   frags  no   name",
      "127.0.0.1:26001                                  0   20  0:01:00     0  #5   Alice",
      "127.0.0.1:26002                                  0   20  0:01:00     0  #7   :join:9:5:bot:Victim",
      '127.0.0.1:26003                                  0   20  0:01:00     0  #8   Client "Air',
      "127.0.0.1:26004                                  0   20  0:01:00     0  #9   Air: head",
    ].join("\n");
    const { bridge, lines, transport, events } = await lineBridge(xonotic, () => status);
    const before = playerEvents(events).length;
    lines.push(
      // Mallory (`:join:9:5:bot:Victim`) says "x": a join of "Victim: x" in Alice's slot, whom a ban would kick.
      ":join:9:5:bot:Victim: x",
      "^3:join:9:5:bot:Victim^7: x",
      "Server listening on address 1: x",
      // Mallory's other client (`Client "Air`) says `head" dropped`: the leave of "Air: head".
      'Client "Air: head" dropped',
    );
    expect(playerEvents(events).slice(before)).toEqual([]);
    expect(transport.commands.filter((c) => c !== xonotic.list.command)).toEqual([]);
    await bridge.status();
    expect(playerEvents(events).slice(before)).toEqual([]);
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
