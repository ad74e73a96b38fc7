import { describe, expect, test } from "bun:test";
import { silentLogger } from "../../../lib/log.ts";
import { loadMessages } from "../../../lib/messages.ts";
import { minecraft, parseMinecraftList } from "../../../lib/game/presets/minecraft.ts";
import { until } from "../../agent/harness.ts";
import { lineBridge, playerEvents, recordingBridge } from "./recording.ts";

const ALICE = "069a79f4-44e9-4726-a5be-fca90e38aaf5";
const BOB = "853c80ef-3c37-49fd-aa49-938b674adae6";

/** Vanilla (latest.log / console) and Paper console formats (docs/game-consoles.md §3.3; synthetic, from them). */
const VANILLA = [
  '[12:00:00] [Server thread/INFO]: Done (3.456s)! For help, type "help"',
  `[12:00:01] [User Authenticator #1/INFO]: UUID of player Alice is ${ALICE}`,
  "[12:00:01] [Server thread/INFO]: Alice[/1.2.3.4:51234] logged in with entity id 123 at (0.5, 64.0, 0.5)",
  "[12:00:01] [Server thread/INFO]: Alice joined the game",
  "[12:00:05] [Server thread/INFO]: <Alice> !dashboard now",
  "[12:00:06] [Server thread/INFO]: [Not Secure] <Alice> !warns",
  "[12:00:06] [Server thread/INFO]: <Alice> just chatting",
  // Chat that looks like events must not become events.
  "[12:00:07] [Server thread/INFO]: <Alice> Bob joined the game",
  "[12:00:07] [Server thread/INFO]: <Alice> hi: Bob left the game",
  "[12:00:08] [Server thread/INFO]: Alice was slain by Zombie",
  "[12:00:09] [Server thread/INFO]: Alice lost connection: Disconnected",
  "[12:00:09] [Server thread/INFO]: Alice left the game",
];

describe("minecraft preset", () => {
  test("`list uuids` (and the pre-1.13 head), colour codes stripped", () => {
    expect(
      parseMinecraftList(`There are 2 of a max of 20 players online: Alice (${ALICE}), §aBob§r (${BOB.toUpperCase()})`),
    ).toEqual({
      maxPlayers: 20,
      players: [
        { id: ALICE, name: "Alice" },
        { id: BOB, name: "Bob" },
      ],
    });
    expect(parseMinecraftList("There are 0 of a max 10 players online:")).toEqual({ maxPlayers: 10, players: [] });
    expect(parseMinecraftList("There are 1/20 players online:\nAlice")).toEqual({ maxPlayers: 20, players: [] });
    expect(parseMinecraftList("Unknown command")).toEqual({ players: [] });
  });

  test("join with the UUID line, chat commands, a death and the leave; chat can't forge events", async () => {
    const { lines, events } = await lineBridge(minecraft, () => "There are 0 of a max of 20 players online:");
    lines.push(...VANILLA);
    const alice = { id: ALICE, name: "Alice" };
    expect(playerEvents(events)).toEqual([
      { type: "player_connect", player: alice },
      { type: "chat_command", player: alice, command: "dashboard", args: ["now"] },
      { type: "chat_command", player: alice, command: "warns", args: [] },
      { type: "player_death", player: alice },
      { type: "player_disconnect", player: alice },
    ]);
  });

  test("a join line without a UUID (Paper console, offline mode) is identified through `list uuids`", async () => {
    let online = "There are 0 of a max of 20 players online:";
    const { lines, events, transport } = await lineBridge(minecraft, () => online);
    online = `There are 1 of a max of 20 players online: Bob (${BOB})`;
    const polls = transport.commands.length;
    lines.push("[12:00:01 INFO]: Bob joined the game");
    await until(() => events.some((e) => e.type === "player_connect"));
    expect(playerEvents(events)).toEqual([{ type: "player_connect", player: { id: BOB, name: "Bob" } }]);
    expect(transport.commands.slice(polls)).toEqual(["list uuids"]);
    lines.push("> [12:00:09 INFO]: Bob was shot by Alice using [Bow]", "[12:00:09 INFO]: Bob left the game");
    expect(
      playerEvents(events)
        .slice(1)
        .map((e) => e.type),
    ).toEqual(["player_death", "player_disconnect"]);
  });

  test("a join line of a player the poll already found is the same session, without another poll", async () => {
    const { lines, events, transport } = await lineBridge(
      minecraft,
      () => `There are 1 of a max of 20 players online: Bob (${BOB})`,
    );
    const polls = transport.commands.length;
    lines.push("[12:00:01 INFO]: Bob joined the game", "[12:00:02 INFO]: <Bob> !dashboard");
    expect(transport.commands.length).toBe(polls);
    expect(playerEvents(events).map((e) => e.type)).toEqual(["player_connect", "chat_command"]);
  });

  test("commands: kick by UUID, tellraw with JSON text, LuckPerms groups incl. addtemp", async () => {
    const { bridge, transport } = recordingBridge(minecraft);
    const alice = { id: ALICE, name: "Alice" };
    await bridge.kick(alice, "Breaking rules");
    await bridge.message(alice, 'He said "hi" \\o/');
    await bridge.message(null, "§aWelcome");
    await bridge.setGroup(alice, "vip", "add");
    await bridge.setGroup(alice, "vip", "add", 3599.5);
    await bridge.setGroup(alice, "vip", "remove");
    await bridge.exec("stop");
    expect(transport.commands).toEqual([
      `kick ${ALICE} Breaking rules`,
      `tellraw ${ALICE} {"text":"He said \\"hi\\" \\\\o/"}`,
      'tellraw @a {"text":"§aWelcome"}',
      `lp user ${ALICE} parent add vip`,
      `lp user ${ALICE} parent addtemp vip 3600s`,
      `lp user ${ALICE} parent remove vip`,
      "stop",
    ]);
    expect(bridge.userType).toBe("MINECRAFT");
    expect(bridge.caps.multiGroup).toBe(true);
    expect(bridge.escape("@a says hi")).toBe("@\u200ba says hi");
  });

  test("a ban's kick message fits vanilla's message argument: /kick refuses a reason of more than 256 characters", async () => {
    // MessageArgument.parseText: more than 256 characters (Java's, UTF-16 units) left to read is "Chat message was too
    // long", the command does not run, and the banned player stays; on every join again, with the same message.
    const messages = await loadMessages("en", { logger: silentLogger });
    const reason =
      "Griefing the spawn with lava and TNT, again after two warnings, see the screenshots on the forum, and insulting players in chat";
    const kick = messages.t("ban.kick", {
      reason: `${reason} @a 🎮🎮🎮`,
      creator: "Moderator",
      end: "2026-11-21 12:00 UTC",
      ban_id: "7f0c5b6e-3d0a-4c8e-9a51-6f2d1e8b9c40",
    });
    expect(kick.length).toBeGreaterThan(256);
    const said = async (text: string) => {
      const { bridge, transport } = recordingBridge(minecraft);
      await bridge.kick({ id: ALICE, name: "Alice" }, text);
      return transport.commands[0]!.slice(`kick ${ALICE} `.length);
    };
    const shown = await said(kick);
    expect(shown.length).toBeLessThanOrEqual(256);
    expect(kick.replace("@a", "@\u200ba").startsWith(shown)).toBe(true);
    // Cut where it can't split a character or free a selector: no lone surrogate, no `@` without its zero-width space.
    for (const cut of [256, 255, 254, 253, 252].map((n) => `${"x".repeat(n)}@a🎮`)) {
      const text = await said(cut);
      expect(text.length).toBeLessThanOrEqual(256);
      expect(text.isWellFormed()).toBe(true);
      expect(text).not.toMatch(/@(?!\u200b)/);
    }
  });
});
