import { describe, expect, test } from "bun:test";
import { parseTeeworldsStatus, teeworlds } from "../../../lib/game/presets/teeworlds.ts";
import { lineBridge, playerEvents } from "./recording.ts";

describe("teeworlds preset", () => {
  test("status rows (0.7 and 0.6 columns): slot and name, which is the id; clients still connecting are not players", () => {
    const reply = [
      "[server]: id=0 addr=127.0.0.1:54321 name='nameless tee' client=1796 secure=yes flags=0",
      "[server]: id=1 addr=127.0.0.1:54322 connecting",
      "id=2 addr=10.0.0.2:8303 name='it's me' score=3",
    ].join("\n");
    expect(parseTeeworldsStatus(reply).players).toEqual([
      { id: "nameless tee", name: "nameless tee", slot: "0" },
      { id: "it's me", name: "it's me", slot: "2" },
    ]);
    expect(parseTeeworldsStatus("").players).toEqual([]);
  });

  test("join, chat, the server's own say and leave, as econ streams them", async () => {
    const { lines, events } = await lineBridge(teeworlds);
    const tee = { id: "tee one", name: "tee one", slot: "0" };
    lines.push(
      "[game]: team_join player='0:tee one' team=0",
      "[chat]: 0:0:tee one: /dashboard now",
      "[chat]: *** /ban everyone",
      "[game]: leave player='0:tee one'",
    );
    expect(playerEvents(events)).toEqual([
      { type: "player_connect", player: tee },
      { type: "chat_command", player: tee, command: "dashboard", args: ["now"] },
      { type: "player_disconnect", player: tee },
    ]);
  });
});
