import { describe, expect, test } from "bun:test";
import { parseRustPlayerlist, rust } from "../../../lib/game/presets/rust.ts";
import { lineBridge, playerEvents, recordingBridge } from "./recording.ts";

const ALICE = "76561198021481871";
const BOB = "76561198035925898";

const PLAYERLIST = JSON.stringify(
  [
    {
      SteamID: ALICE,
      OwnerSteamID: "0",
      DisplayName: "Alice",
      Ping: 31,
      Address: "1.2.3.4:61234",
      ConnectedSeconds: 90,
    },
    { SteamID: "1234", DisplayName: "not a steam id" },
  ],
  null,
  2,
);

describe("rust preset", () => {
  test("playerlist JSON; anything that isn't a SteamID64 has no id", () => {
    expect(parseRustPlayerlist(PLAYERLIST)).toEqual({
      players: [{ id: ALICE, name: "Alice", extra: { Ping: 31 } }, { name: "not a steam id" }],
    });
    expect(parseRustPlayerlist("[]")).toEqual({ players: [] });
    expect(parseRustPlayerlist("garbage [")).toEqual({ players: [] });
  });

  test("join and leave lines (Takaro's recorded formats), chat, the ready line", async () => {
    const { lines, events, transport } = await lineBridge(rust, () => "[]");
    lines.push(
      "Server startup complete",
      `1.2.3.4:61234/${ALICE}/Alice joined [windows/${ALICE}]`,
      `[CHAT] Alice[${ALICE}] : !dashboard`,
      `5.6.7.8:52210/${BOB}/Bob disconnecting: not online`,
      `1.2.3.4:61234/${ALICE}/Alice disconnecting: disconnect`,
    );
    const alice = { id: ALICE, name: "Alice" };
    expect(playerEvents(events)).toEqual([
      { type: "player_connect", player: alice },
      { type: "chat_command", player: alice, command: "dashboard", args: [] },
      { type: "player_disconnect", player: alice, reason: "disconnect" },
    ]);
    expect(transport.commands.filter((c) => c === "playerlist").length).toBeGreaterThanOrEqual(2); // ready → resync
  });

  test("commands: kick by SteamID64, say, Oxide groups; no private message in vanilla Rust", async () => {
    const { bridge, transport } = recordingBridge(rust);
    const alice = { id: ALICE, name: "Alice" };
    await bridge.kick(alice, "Breaking; rules");
    await bridge.message(null, "wipe on thursday");
    await bridge.setGroup(alice, "vip", "add");
    await bridge.setGroup(alice, "vip", "remove");
    expect(transport.commands).toEqual([
      `kick ${ALICE} "Breaking, rules"`,
      'say "wipe on thursday"',
      `oxide.usergroup add ${ALICE} "vip"`,
      `oxide.usergroup remove ${ALICE} "vip"`,
    ]);
    expect(bridge.caps).toMatchObject({ multiGroup: true, privateMessage: false });
  });
});
