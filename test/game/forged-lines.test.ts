/**
 * Player text never acts as the console (docs/game-consoles.md §8): on every preset's console — wrapped, and the
 * network consoles it speaks — a player says lines that mimic a list row, the list's head or last line, a reply's
 * marker, a join, a leave and an identity line, in every form the game prints chat (public, team, `/me`), and takes
 * names that make the chat line start like a console line. The bridge is built from a configuration as `run` builds
 * it (real transports against the protocol's fake server, a wrapped fake server as a real process, a real log tail),
 * and polls the list while the lines arrive around each of its commands. Nothing may change: no join, leave or
 * chat command, the same players and player count, no command to the console but the list (no kick).
 */
import { afterEach, describe, expect, test } from "bun:test";
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { systemClock } from "../../lib/clock.ts";
import { loadConfig } from "../../lib/app/config.ts";
import type { BridgeEvent, GameBridge } from "../../lib/game/bridge.ts";
import { createBridge } from "../../lib/game/index.ts";
import { PRESETS, type PresetName } from "../../lib/game/presets/index.ts";
import { memoryLogger } from "../../lib/log.ts";
import { docBlock } from "../support/docs.ts";
import { until } from "../support/until.ts";
import { FakeDpServer } from "./transports/fake-dp-server.ts";
import { FakeEconServer } from "./transports/fake-econ-server.ts";
import { FakeQ3Server } from "./transports/fake-q3-server.ts";
import { FakeSourceRconServer } from "./transports/fake-source-rcon-server.ts";
import { FakeWebRconServer } from "./transports/fake-web-rcon-server.ts";

const FAKE = new URL("../fixtures/fake-game-server.ts", import.meta.url).pathname;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

/** Markers as hub-agent's wrapped console uses them, with made-up values: a player can't know the real ones. */
const MARKERS = ["hubagent_end_0123456789ab", "hubagent_begin_0123456789ab", "hubagent_end_", "echo hubagent_end_x"];

interface Game {
  preset: PresetName;
  /** `wrapper` and the network consoles the preset speaks. */
  consoles: string[];
  /** The ready line a wrapped server prints. */
  ready?: string;
  /** The list command's answer (`wrapper`: as the console prints it; else as the network console replies). */
  list(console: string): string;
  /** The lines the game prints (console, log) when `name` says `text`: every chat form it has. */
  chat(name: string, text: string): string[];
  /** What Mallory says. */
  forged: string[];
  /** Names Mallory can take, with what she then says, so her chat line starts like the console's own lines. */
  names?: [name: string, text: string][];
  /** The lines the game prints when Mallory takes `name`, before any chat of hers under it. */
  rename?(name: string): string[];
  /** Alice saying `<prefix>sentinel`, as the preset reads chat. */
  sentinel: string;
  /** Lines that make the players known where the list alone can't (CS2's `status` has no ids). */
  joins?: string[];
  /** `[game.overrides]` (the generic preset). */
  overrides?: string;
}

const U = {
  alice: "069a79f4-44e9-4726-a5be-fca90e38aaf5",
  bob: "853c80ef-3c37-49fd-aa49-938b674adae6",
  mallory: "3f1c9e52-7b8d-4c2e-9a61-0d5e8b7c4a21",
  victim: "b2c4d6e8-1a3b-4c5d-8e7f-901a2b3c4d5e",
};
const MC = "[12:00:00] [Server thread/INFO]: ";
const HL = "L 11/21/2026 - 10:00:00: ";
/** A second later: Mallory's names copy HL's date, and a log line of that very second is dropped too (§8). */
const HL_LATER = "L 11/21/2026 - 10:00:01: ";
const S64 = {
  alice: "76561198000000001",
  bob: "76561198000000002",
  mallory: "76561198000000003",
  victim: "76561198000000009",
};

const GAMES: Game[] = [
  {
    preset: "minecraft",
    consoles: ["wrapper", "rcon"],
    ready: `${MC}Done (1.234s)! For help, type "help"`,
    sentinel: `${MC}<Alice> !sentinel`,
    list: (c) =>
      `${c === "wrapper" ? MC : ""}There are 3 of a max of 20 players online: Alice (${U.alice}), Bob (${U.bob}), Mallory (${U.mallory})`,
    chat: (name, text) => [
      `[12:00:01] [Async Chat Thread - #0/INFO]: <${name}> ${text}`,
      `[12:00:01 INFO]: [Not Secure] <${name}> ${text}`,
      `${MC}* ${name} ${text}`,
      `${MC}-> [Red] <${name}> ${text}`,
    ],
    forged: [
      `There are 1 of a max of 20 players online: Mallory (${U.mallory})`,
      "There are 0 of a max of 20 players online:",
      "There are 1/20 players online:",
      `Victim (${U.victim}), Alice (${U.alice})`,
      `${MC}There are 1 of a max of 99 players online: Victim (${U.victim})`,
      `${MC}Victim joined the game`,
      `${MC}Alice left the game`,
      `${MC}UUID of player Victim is ${U.victim}`,
    ],
  },
  {
    preset: "gmod",
    consoles: ["wrapper", "rcon"],
    ready: "VAC secure mode is activated.",
    sentinel: `${HL_LATER}"Alice<2><STEAM_0:1:1><>" say "!sentinel"`,
    list: () =>
      [
        "hostname: hub-agent test",
        "version : 2023.06.28/24 9197 secure",
        "map     : gm_construct at: 0 x, 0 y, 0 z",
        "players : 3 (16 max)",
        "",
        "# userid name                uniqueid            connected ping loss state  adr",
        '#      2 "Alice"             STEAM_0:1:1         05:12       48    0 active 1.2.3.4:27005',
        '#      3 "Bob"               STEAM_0:0:1         05:12       48    0 active 1.2.3.5:27005',
        '#      4 "Mallory"           STEAM_0:1:2         05:12       48    0 active 1.2.3.6:27005',
      ].join("\n"),
    chat: (name, text) => [
      `${name}: ${text}`,
      `(TEAM) ${name}: ${text}`,
      `*DEAD* ${name}: ${text}`,
      `${HL}"${name}<4><STEAM_0:1:2><Team>" say "${text}"`,
      `${HL}"${name}<4><STEAM_0:1:2><Team>" say_team "${text}"`,
    ],
    forged: [
      '#      9 "Victim"            STEAM_0:1:4         00:01       10    0 active 5.6.7.8:27005',
      "players : 1 (99 max)",
      "map     : gm_flatgrass",
      `${HL}"Victim<9><STEAM_0:1:4><>" connected, address "5.6.7.8:27005"`,
      `${HL}"Victim<9><STEAM_0:1:4><>" STEAM USERID validated`,
      `${HL}"Alice<2><STEAM_0:1:1><>" disconnected (reason "forged")`,
      `"Victim<9><STEAM_0:1:4><>" entered the game`,
    ],
    names: [
      ["players", "1 humans, 0 bots (99 max)"],
      ["map", "gm_flatgrass"],
      ['#      9 "Victim', 'x" STEAM_0:1:4 00:01 10 0 active 5.6.7.8:27005'],
      // The HL log's date prefix: her console chat line starts like a log line (docs/game-consoles.md §8).
      ["11/21/2026 - 10:00:00", '"Alice<2><STEAM_0:1:1><>" say "!ban Bob 1w griefing"'],
      ["L 11/21/2026 - 10:00:00", '"Alice<2><STEAM_0:1:1><>" disconnected (reason "x")'],
      ["11/21/2026 - 10:00:00", '"Victim<3><STEAM_0:1:4><>" connected, address "5.6.7.8:27005"'],
    ],
    rename: (name) => [`${HL}"Mallory<4><STEAM_0:1:2><Team>" changed name to "${name}"`],
  },
  {
    preset: "cs2",
    consoles: ["wrapper", "rcon"],
    sentinel: `${HL_LATER}"Alice<2><[U:1:1]><>" say "!sentinel"`,
    list: () =>
      [
        "Server:  Running [0.0.0.0:27015]",
        "players  : 3 humans, 0 bots (16/0 max) (not hibernating) (unreserved)",
        "loaded spawngroup(  1)  : SV:  [1: de_dust2 | main lump | mapload]",
        "---------players--------",
        "  id     time ping loss      state   rate adr name",
        "    2    00:12   24    0     active 786432 127.0.0.1:27005 'Alice'",
        "    3    00:12   24    0     active 786432 127.0.0.1:27006 'Bob'",
        "    4    00:12   24    0     active 786432 127.0.0.1:27007 'Mallory'",
        "#end",
      ].join("\n"),
    joins: [
      `${HL}"Alice<2><[U:1:1]><>" connected, address "127.0.0.1:27005"`,
      `${HL}"Bob<3><[U:1:2]><>" connected, address "127.0.0.1:27006"`,
      `${HL}"Mallory<4><[U:1:3]><>" connected, address "127.0.0.1:27007"`,
    ],
    chat: (name, text) => [
      `${name}: ${text}`,
      `${HL}"${name}<4><[U:1:3]><CT>" say "${text}"`,
      `${HL}"${name}<4><[U:1:3]><CT>" say_team "${text}"`,
    ],
    forged: [
      "    9    00:01   10    0     active 786432 5.6.7.8:27005 'Victim'",
      "players  : 1 humans, 0 bots (99/0 max)",
      `${HL}"Victim<9><[U:1:9]><>" connected, address "5.6.7.8:27005"`,
      `${HL}"Alice<2><[U:1:1]><>" disconnected (reason "forged")`,
    ],
    names: [
      ["players", "1 humans, 0 bots (99/0 max)"],
      ["9 00:01 10 0 active 0", "'Victim'"],
      ["11/21/2026 - 10:00:00", '"Alice<2><[U:1:1]><>" say "!ban Bob 1w griefing"'],
      ["L 11/21/2026 - 10:00:00", '"Bob<3><[U:1:2]><>" disconnected (reason "x")'],
    ],
    rename: (name) => [`${HL}"Mallory<4><[U:1:3]><CT>" changed name to "${name}"`],
  },
  {
    preset: "rust",
    consoles: ["wrapper", "rcon", "webrcon"],
    ready: "Server startup complete",
    sentinel: `[CHAT] Alice[${S64.alice}] : !sentinel`,
    list: () =>
      JSON.stringify(
        [
          { SteamID: S64.alice, DisplayName: "Alice", Ping: 20 },
          { SteamID: S64.bob, DisplayName: "Bob", Ping: 20 },
          { SteamID: S64.mallory, DisplayName: "Mallory", Ping: 20 },
        ],
        null,
        2,
      ),
    chat: (name, text) => [`[CHAT] ${name}[${S64.mallory}] : ${text}`, `[TEAM CHAT] ${name}[${S64.mallory}] : ${text}`],
    forged: [
      `[{"SteamID": "${S64.victim}", "DisplayName": "Victim"}]`,
      "[",
      "]",
      `1.2.3.4:5/${S64.victim}/Victim joined [windows/${S64.victim}]`,
      `1.2.3.4:5/${S64.alice}/Alice disconnecting: forged`,
      "Server startup complete",
      `x[${S64.alice}] : !warns`,
    ],
    names: [[`Alice[${S64.alice}] : !ban Victim`, "x"]],
  },
  {
    preset: "openarena",
    consoles: ["wrapper", "q3rcon"],
    ready: "AAS initialized.",
    // OpenArena's chat prefix is `.` (its own admin system answers `!`).
    sentinel: "say: Alice: .sentinel",
    list: () =>
      [
        "map: oa_dm1",
        "num score ping name            lastmsg address               qport rate",
        "--- ----- ---- --------------- ------- --------------------- ----- -----",
        "  0     0   20 Alice^7               0 127.0.0.1:27961       1234 25000",
        "  1     0   20 Bob^7                 0 127.0.0.1:27962       1235 25000",
        "  2     0   20 Mallory^7             0 127.0.0.1:27963       1236 25000",
      ].join("\n"),
    chat: (name, text) => [`say: ${name}: ${text}`, `sayteam: ${name}: ${text}`, `  0:12 say: ${name}: ${text}`],
    forged: [
      "  9     0   20 Victim^7              0 5.6.7.8:27960         1237 25000",
      "map: oa_forged",
      "ClientConnect: 9",
      "ClientUserinfoChanged: 9 n\\Victim\\t\\0\\model\\sarge",
      "ClientDisconnect: 0",
      "Kill: 2 0 20: Mallory killed Alice by MOD_RAILGUN",
      "AAS initialized.",
    ],
    names: [
      ["  9     0   20 Victim", "0 5.6.7.8:27960 1237 25000"],
      ["Alice: .ban Victim", "x"],
    ],
  },
  {
    // Teeworlds 0.7.5 as it printed a real client (test/fixtures/econ/teeworlds-0.7.5.txt).
    preset: "teeworlds",
    consoles: ["econ"],
    sentinel: "[chat]: 1:0:Alice: /sentinel",
    list: () =>
      [
        "[server]: id=0 addr=127.0.0.1:50001 client=705 name='Alice' score=0 ",
        "[server]: id=1 addr=127.0.0.1:50002 client=705 name='Bob' score=0 ",
        "[server]: id=2 addr=127.0.0.1:50003 client=705 name='Mallory' score=0 ",
      ].join("\n"),
    chat: (name, text) => [`[chat]: 1:2:${name}: ${text}`, `[teamchat]: 2:2:0:${name}: ${text}`],
    forged: [
      "id=9 addr=5.6.7.8:8303 client=705 name='Victim' score=0",
      "[server]: id=9 addr=5.6.7.8:8303 client=705 name='Victim' score=0",
      "[game]: team_join player='9:Victim' team=0",
      "[game]: leave player='0:Alice'",
      "[Console]: hub-agent-00000000-0000-0000-0000-000000000000",
    ],
    names: [
      ["id=9 addr=x client=705", "name='Victim' score=0"],
      ["Alice: /ban x", "y"],
      ["0:Alice", "/ban Bob"],
    ],
  },
  {
    // DDNet 16.4 as it printed a real client (test/fixtures/econ/ddnet-16.4.txt), after the econ transport turned
    // its `yyyy-mm-dd hh:mm:ss I category: text` lines into `[category]: text`.
    preset: "ddnet",
    consoles: ["econ"],
    sentinel: "[chat]: 0:-2:Alice: !sentinel",
    list: () =>
      [
        "[server]: id=0 addr=<{127.0.0.1:50001}> name='Alice' client=16040 secure=yes flags=1",
        "[server]: id=1 addr=<{127.0.0.1:50002}> name='Bob' client=16040 secure=yes flags=1",
        "[server]: id=2 addr=<{127.0.0.1:50003}> name='Mallory' client=16040 secure=yes flags=1",
      ].join("\n"),
    chat: (name, text) => [`[chat]: 2:-2:${name}: ${text}`, `[teamchat]: 2:0:${name}: ${text}`],
    forged: [
      "id=9 addr=<{5.6.7.8:8303}> name='Victim' client=16040 secure=yes flags=1",
      "[server]: id=9 addr=<{5.6.7.8:8303}> name='Victim' client=16040 secure=yes flags=1",
      "[server]: player has entered the game. ClientID=9 addr=<{5.6.7.8:8303}> sixup=0",
      "[game]: leave player='0:Alice'",
      "2026-11-26 15:06:20 I game: leave player='1:Bob'",
    ],
    names: [
      ["id=9 addr=<{x}>", "name='Victim' client=16040 secure=yes flags=1"],
      ["Alice: !ban x", "y"],
      ["-2:Alice", "!ban Bob"],
    ],
  },
  {
    preset: "xonotic",
    consoles: ["wrapper", "dprcon"],
    ready: "Server listening on address 127.0.0.1:26000",
    sentinel: "^3Alice^7: !sentinel",
    list: () =>
      [
        "host:     hub-agent test",
        "map:      dance",
        "players:  3 active (16 max)",
        "",
        "^2IP                                             %pl ping  time   frags  no   name",
        "^7127.0.0.1:26001                                    0   20  0:01:00     0  #1 ^7Alice",
        "^3127.0.0.1:26002                                    0   20  0:01:00     0  #2 ^7Bob",
        "^7127.0.0.1:26003                                    0   20  0:01:00     0  #3 ^7Mallory",
      ].join("\n"),
    chat: (name, text) => [`${name}: ${text}`, `^3${name}^7: ${text}`, `\x01${name}^7: ${text}`],
    forged: [
      "127.0.0.1:26009                                    0   20  0:01:00     0  #9 ^7Victim",
      "players:  1 active (99 max)",
      "map:      forged",
      ":join:9:9:5.6.7.8:26000:Victim",
      'Client "Alice" dropped',
      "Server listening on address 5.6.7.8:26000",
    ],
    names: [
      ["5.6.7.8:26000 0 20 0:01:00 0 #9 Victim", "x"],
      ["players", "1 active (99 max)"],
      ["map", "forged"],
      ["Alice^7: !ban Victim", "x"],
      [":join:9:2:bot:Victim", "x"],
    ],
  },
  {
    // The docs' OpenTTD configuration: the generic preset as operators use it.
    preset: "generic",
    consoles: ["wrapper"],
    ready: "dbg: [net] Map generated, starting game",
    sentinel: "\u200e[All] Alice: !sentinel",
    overrides: docBlock("docs/games/openttd.md", "toml").slice(
      docBlock("docs/games/openttd.md", "toml").indexOf("[game.overrides]"),
    ),
    list: () =>
      [
        "Client #1  name: 'Server'  company: 255  IP: server",
        "Client #2  name: 'Alice'  company: 1  IP: 127.0.0.1",
        "Client #3  name: 'Bob'  company: 1  IP: 127.0.0.1",
        "Client #4  name: 'Mallory'  company: 1  IP: 127.0.0.1",
      ].join("\n"),
    chat: (name, text) => [`\u200e[All] ${name}: ${text}`, `\u200e[Team] ${name}: ${text}`],
    forged: [
      "Client #9  name: 'Victim'  company: 1  IP: 5.6.7.8",
      "\u200e*** Victim has joined the game (Client #9)",
      "dbg: [net] [server] Client #2 closed connection",
      "dbg: [net] Map generated, starting game",
    ],
    names: [["Alice: !ban Victim", "x"]],
  },
];

/** The players as the first poll finds them: the baseline nothing may change. */
interface World {
  bridge: GameBridge;
  events: BridgeEvent[];
  /** Lines the game prints from now on (at the console's next input, or in the log or stream at once). */
  say(lines: string[]): void;
  /** Every command the console received. */
  commands(): string[];
}

async function world(game: Game, kind: string): Promise<World> {
  const dir = mkdtempSync(join(tmpdir(), "hub-forged-"));
  const preset = PRESETS[game.preset];
  const listCommand = game.preset === "generic" ? "clients" : preset.list.command;
  const log = join(dir, "game.log");
  writeFileSync(log, "");
  let toml = `[intervals]\nplayer_poll = 3600\n[game]\nbridge = "${kind}"\npreset = "${game.preset}"\n`;
  let say: (lines: string[]) => void = (lines) => appendFileSync(log, `${lines.join("\n")}\n`);
  let commands: () => string[];
  /** Lines the game prints when the list command arrives, before its answer (network consoles with a stream). */
  let pending: string[] = [];
  if (kind === "wrapper") {
    const status = join(dir, "status");
    const said = join(dir, "said");
    const input = join(dir, "input");
    writeFileSync(status, game.list("wrapper"));
    const flags = [
      "--console=stdout",
      `--status-file=${status}`,
      `--list=${listCommand}`,
      `--said=${said}`,
      `--input=${input}`,
      `--stop=${preset.commands.stop ?? "quit"}`,
      ...(game.ready ? [`--ready-line=${game.ready}`] : []),
    ];
    toml += `[game.wrapper]\ncommand = ${JSON.stringify([process.execPath, FAKE, ...flags])}\n`;
    say = (lines) => appendFileSync(said, `${lines.join("\n")}\n`);
    commands = () =>
      readFileSync(input, "utf8")
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l) as string);
  } else {
    const answer = (c: string) => (c === listCommand ? game.list(kind) : "");
    let fake: { port: number; commands: string[]; close(): Promise<void> };
    if (kind === "rcon") {
      fake = await FakeSourceRconServer.start({
        dialect: game.preset === "minecraft" ? "minecraft" : "source",
        handler: answer,
      });
    } else if (kind === "q3rcon") fake = await FakeQ3Server.start({ handler: answer });
    else if (kind === "dprcon") fake = await FakeDpServer.start({ handler: answer, secure: 1 });
    else if (kind === "webrcon") {
      const web: FakeWebRconServer = await FakeWebRconServer.start({
        handler: (c) => {
          for (const line of pending.splice(0)) webLine(web, line);
          return answer(c);
        },
      });
      say = (lines) => {
        pending = [...lines];
        for (const line of lines) webLine(web, line);
      };
      fake = web;
    } else {
      const econ: FakeEconServer = await FakeEconServer.start({
        handler: (c) => {
          for (const line of pending.splice(0)) econ.broadcast(...econLine(line));
          return c === listCommand ? game.list(kind).split("\n").map(econLine) : [];
        },
      });
      say = (lines) => {
        pending = [...lines];
        for (const line of lines) econ.broadcast(...econLine(line));
      };
      fake = econ;
    }
    cleanups.push(() => fake.close());
    toml += `log_file = ${JSON.stringify(log)}\n[game.rcon]\nport = ${fake.port}\npassword = "secret"\n`;
    commands = () => fake.commands;
  }
  if (game.overrides) toml += `${game.overrides}\n`;
  writeFileSync(join(dir, "hub-agent.toml"), toml);
  const env = {
    HUB_API_URL: "https://api.example/x/v1",
    HUB_API_KEY: "k-0123456789",
    HUB_API_SERVER_ID: "541d1c41-1b58-40fc-8780-70c400ea5686",
  };
  const loaded = await loadConfig({ env, cwd: dir, timePatterns: true });
  if (!loaded.ok) throw new Error(loaded.problems.join("\n"));
  const bridge = await createBridge(loaded.config, {
    clock: systemClock,
    logger: memoryLogger(),
    input: new PassThrough(),
    output: null,
  });
  cleanups.push(() => bridge.stop());
  const events: BridgeEvent[] = [];
  bridge.on((e) => events.push(e));
  await bridge.start();
  if (game.joins) say(game.joins);
  return { bridge, events, say, commands };
}

/**
 * A Rust console line as WebRCON sends it: chat as a Chat message with the speaker's id (Mallory's, or Alice's for
 * the sentinel) whatever the name and text hold, the rest as a Generic line.
 */
function webLine(web: FakeWebRconServer, line: string): void {
  for (const id of [S64.mallory, S64.alice]) {
    const at = line.indexOf(`[${id}] : `);
    if (!line.startsWith("[CHAT] ") || at < 0) continue;
    return web.chat(id, line.slice("[CHAT] ".length, at), line.slice(at + `[${id}] : `.length));
  }
  web.broadcast(line);
}

/** A Teeworlds console line as econ streams it: `[category]: text`. */
function econLine(line: string): [string, string] {
  const m = /^\[(\w+)\]: (.*)$/.exec(line);
  return m ? [m[1]!, m[2]!] : ["server", line];
}

const playerEvents = (events: BridgeEvent[]) =>
  events.filter((e) => e.type !== "ready" && e.type !== "down" && e.type !== "operator_input");
const who = (e: BridgeEvent) => `${e.type}${"player" in e ? ` ${e.player.name}` : ""}`;

describe("a player's lines never act as the console", () => {
  for (const game of GAMES) {
    for (const kind of game.consoles) {
      test(`${game.preset}, ${kind}: forged rows, list heads and ends, markers, joins, leaves and ids change nothing`, async () => {
        const w = await world(game, kind);
        const names = ["Alice", "Bob", "Mallory"];
        const online = async () => (await w.bridge.status()).players.map((p) => p.name).sort();
        await until(async () => (await online()).join() === names.join(), `${names.join(", ")} online`, {
          timeoutMs: 20_000,
        });
        const before = await w.bridge.status();
        const seen = w.events.length;
        const lines = [
          ...[...game.forged, ...MARKERS].flatMap((text) => game.chat("Mallory", text)),
          ...(game.names ?? []).flatMap(([name, text]) => [...(game.rename?.(name) ?? []), ...game.chat(name, text)]),
        ];
        // Before each of several polls, so the lines land around the list command as it is written and answered.
        for (let round = 0; round < 3; round++) {
          w.say(lines);
          expect(await w.bridge.status()).toEqual(before);
        }
        // Alice's own chat command after them: once it arrived, everything said before it was read.
        w.say([game.sentinel]);
        await until(
          async () => {
            if (kind === "wrapper") await w.bridge.status(); // the wrapped console prints it at its next input
            return w.events.some((e) => e.type === "chat_command" && e.command === "sentinel");
          },
          "Alice's chat command",
          { timeoutMs: 20_000 },
        );
        expect(playerEvents(w.events.slice(seen)).map(who)).toEqual(["chat_command Alice"]);
        expect(await w.bridge.status()).toEqual(before);
        expect(before.players.length).toBe(3);
        const sent = w.commands().filter((c) => !c.startsWith("echo "));
        expect([...new Set(sent)]).toEqual([game.preset === "generic" ? "clients" : PRESETS[game.preset].list.command]);
      }, 60_000);
    }
  }
});

describe("a list that is one long line", () => {
  test("a wrapped Minecraft server's `list uuids` of 5,000 players (one line of 275 KB) is read whole", async () => {
    const uuid = (n: number) => `${n.toString(16).padStart(8, "0")}-0000-4000-8000-000000000000`;
    const rows = Array.from({ length: 5000 }, (_, i) => `Player${i} (${uuid(i)})`).join(", ");
    const minecraft = GAMES.find((g) => g.preset === "minecraft")!;
    const w = await world(
      { ...minecraft, list: () => `${MC}There are 5000 of a max of 9000 players online: ${rows}` },
      "wrapper",
    );
    let status = await w.bridge.status();
    await until(async () => (status = await w.bridge.status()).players.length > 0, "the list", { timeoutMs: 20_000 });
    expect(status.players.length).toBe(5000);
    expect(status.maxPlayers).toBe(9000);
    expect(status.players.at(-1)).toEqual({ id: uuid(4999), name: "Player4999" });
  }, 60_000);
});
