/**
 * The teeworlds and ddnet presets on lines captured from the real servers with a real client on them
 * (test/fixtures/econ/), as the econ transport hands them on; forged lines that must change nothing; and every
 * pattern's time on a 64 KiB line.
 */
import { describe, expect, test } from "bun:test";
import type { BridgeEvent } from "../../../lib/game/bridge.ts";
import { ddnet, parseDdnetStatus } from "../../../lib/game/presets/ddnet.ts";
import { parseTeeworldsStatus, teeworlds } from "../../../lib/game/presets/teeworlds.ts";
import type { Preset } from "../../../lib/game/presets/types.ts";
import { parseEconLine } from "../../../lib/game/transports/econ.ts";
import { until } from "../../support/until.ts";
import { econFixture, matchMs } from "./econ-fixtures.ts";
import { lineBridge, playerEvents } from "./recording.ts";

const tw = econFixture("teeworlds-0.7.5.txt");
const dd = econFixture("ddnet-16.4.txt");

const names = (list: { players: { name: string; slot?: string }[] }) => list.players.map((p) => `${p.slot}:${p.name}`);

/** What a bridge reports for chat commands and joins, in short. */
const said = (events: BridgeEvent[]) =>
  playerEvents(events).map((e) =>
    e.type === "chat_command"
      ? `${e.player.name} ${e.command} ${e.args.join(" ")}`.trim()
      : `${e.type} ${"player" in e ? `${e.player.slot}:${e.player.name}` : ""}`,
  );

describe("teeworlds preset (Teeworlds 0.7.5, real server and client)", () => {
  test("status rows: a human (IPv4, IPv6, logged in to rcon, spectating) is listed with slot and name; a client still connecting is not", () => {
    expect(names(parseTeeworldsStatus(tw("status connecting").join("\n")))).toEqual([]);
    for (const section of ["status human", "status admin", "status spectator"])
      expect(names(parseTeeworldsStatus(tw(section).join("\n")))).toEqual(["0:Jack"]);
    expect(names(parseTeeworldsStatus(tw("status ipv6").join("\n")))).toEqual(["0:Ivy"]);
    const all = ["status connecting", "status human", "status ipv6"].flatMap(tw);
    expect(parseTeeworldsStatus(all.join("\n")).players).toEqual([
      { id: "Jack", name: "Jack", slot: "0" },
      { id: "Ivy", name: "Ivy", slot: "0" },
    ]);
  });

  test("a human joins, spectates and comes back, says /dashboard (and team chat, and `x: y`), and is kicked", async () => {
    const { lines, events } = await lineBridge(teeworlds);
    lines.push(...tw("join"), ...tw("team change"), ...tw("chat"), ...tw("leave"));
    expect(said(events)).toEqual(["player_connect 0:Jack", "Jack dashboard", "player_disconnect 0:Jack"]);
  });

  test("forged lines change nothing: rows in chat or without the console's prefix, a name holding ': '", async () => {
    const row = tw("status human")[0]!; // `[server]: id=0 … name='Jack' …`
    const bare = row.replace("[server]: ", "");
    expect(
      parseTeeworldsStatus([bare, `[chat]: 1:1:Eve: ${row}`, `[chat]: 1:1:Eve: ${bare}`].join("\n")).players,
    ).toEqual([]);
    // A name with a quote and the row's own words in it is still one player, named in full.
    const quoted = row.replace("name='Jack'", "name='x' score=0 ' client=1 name='Eve'");
    expect(names(parseTeeworldsStatus(quoted))).toEqual(["0:x' score=0 ' client=1 name='Eve"]);

    const { lines, events } = await lineBridge(teeworlds);
    lines.push(
      "[game]: team_join player='0:Bob' team=0",
      "[game]: team_join player='1:Bob: /ban Eve 1 x' team=0",
      "[chat]: 1:1:Bob: /ban Eve 1 x: hello", // the second Bob's chat: not the first Bob's command
      "[chat]: 1:1:Eve: [game]: team_join player='2:Mal' team=0",
      "[chat]: *** 'Mal' entered and joined the game",
      "[teamchat]: 2:0:0:Bob: /dashboard",
      "[chat]: 1:7:Bob: /dashboard", // a slot nobody is in
    );
    expect(said(events)).toEqual(["player_connect 0:Bob", "player_connect 1:Bob: /ban Eve 1 x"]);
  });
});

describe("ddnet preset (DDNet 16.4, real server and client)", () => {
  test("status rows: a human (IPv4, IPv6, logged in to rcon, spectating) is listed with slot and name; a client still connecting is not", () => {
    expect(names(parseDdnetStatus(dd("status connecting").join("\n")))).toEqual([]);
    expect(names(parseDdnetStatus(dd("status human").join("\n")))).toEqual(["0:Dora", "0:Dora"]);
    for (const section of ["status admin", "status spectator", "status ipv6"])
      expect(names(parseDdnetStatus(dd(section).join("\n")))).toEqual(["0:Dora"]);
    // Neither server's rows pass for the other's.
    expect(parseDdnetStatus(tw("status human").join("\n")).players).toEqual([]);
    expect(parseTeeworldsStatus(dd("status human").join("\n")).players).toEqual([]);
  });

  test("a human joins (the list names them), says !dashboard (and team chat, and `x: y`), and is kicked", async () => {
    let list = "";
    const { lines, events, transport } = await lineBridge(ddnet, () => list);
    const polls = transport.commands.length;
    list = dd("status human")[1]!;
    lines.push(...dd("login"), ...dd("join"));
    // The join line names a slot only: the bridge asks the list who it is.
    await until(() => said(events).length === 1, "the list to name the player");
    expect(transport.commands.slice(polls)).toEqual(["status"]);
    lines.push(...dd("chat"), ...dd("leave"));
    expect(said(events)).toEqual(["player_connect 0:Dora", "Dora dashboard", "player_disconnect 0:Dora"]);
  });

  test("forged lines change nothing: a join or a row said in chat, a name holding ': '", async () => {
    const row = dd("status human")[1]!;
    expect(parseDdnetStatus(`[chat]: 1:-2:Eve: ${row}`).players).toEqual([]);
    let list = "";
    const { lines, events } = await lineBridge(ddnet, () => list);
    list = [row, row.replace("id=0", "id=1").replace("'Dora'", "'Dora: !ban Eve 1 x'")].join("\n");
    lines.push("[server]: player has entered the game. ClientID=0 addr=<{127.0.0.1:56887}> sixup=0");
    await until(() => said(events).length === 2, "the list to answer: both online");
    lines.push(
      "[chat]: *** 'Mal' entered and joined the game", // what a `say` could print: not a join
      "[chat]: 1:-2:Dora: !ban Eve 1 x: hi",
      "[chat]: 3:-2:Eve: [server]: player has entered the game. ClientID=5 addr=<{1.2.3.4:5}> sixup=0",
      "[chat]: 3:-2:Eve: [game]: leave player='0:Dora'",
    );
    expect(said(events)).toEqual(["player_connect 0:Dora", "player_connect 1:Dora: !ban Eve 1 x"]);
  });
});

/** 64 KiB lines built to make a backtracking pattern work hardest: its own prefix, then one fragment repeated. */
function hostileLines(): string[] {
  const fill = (head: string, piece: string) =>
    head + piece.repeat(Math.ceil((64 * 1024 - head.length) / piece.length));
  return [
    fill("[chat]: 1:0:", "a"),
    fill("[chat]: 1:0:", "a:"),
    fill("[chat]: 0:-2:", ": "),
    fill("[game]: team_join player='0:", "' team=1"),
    fill("[game]: team_join player='0:", "' team=-1->"),
    fill("[game]: leave player='0:", "''"),
    fill("[server]: id=0 addr=x client=1 name='", "' score=1 "),
    fill("[server]: id=0 addr=x client=1 name='", "' score=1 (Adm"),
    fill("[server]: id=0 addr=<{x}> name='", "' client=1 secure=yes flags=1"),
    fill("[server]: id=0 addr=<{x}> name='", "' client=0.7:1 secure=no flags="),
    fill("[server]: id=0 addr=", "<{"),
    fill("[server]: player has entered the game. ClientID=", "0"),
    fill("[", "["),
    fill("[00:00:00][", "x"),
    fill("2026-11-26 12:25:55 I ", "x"),
  ];
}

describe("every teeworlds and ddnet pattern is linear", () => {
  for (const preset of [teeworlds, ddnet] as Preset[]) {
    test(`${preset.name}: each line pattern, the status row and econ's line forms take < 10 ms on a 64 KiB line`, () => {
      const patterns = Object.values(preset.lines).flat();
      const parse = (line: string) => preset.list.parse(line);
      for (const line of hostileLines()) {
        for (const re of [
          ...patterns,
          { source: "list.parse", exec: parse },
          { source: "econ", exec: parseEconLine },
        ]) {
          const ms = matchMs(re, line);
          if (ms >= 10) throw new Error(`${re.source} took ${ms.toFixed(1)} ms on ${line.slice(0, 40)}…`);
        }
      }
    });
  }
});
