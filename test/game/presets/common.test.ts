import { describe, expect, test } from "bun:test";
import {
  anySteamTo64,
  minecraftUuid,
  steam2To64,
  steam3To64,
  steam64,
  steam64To2,
  steam64To3,
  stripQuakeColours,
} from "../../../lib/game/presets/ids.ts";
import { PRESET_NAMES, PRESETS, resolvePreset } from "../../../lib/game/presets/index.ts";
import { NO_QUOTES } from "../../../lib/game/presets/quoting.ts";
import { placeholdersOf, render } from "../../../lib/game/presets/template.ts";

/** An escaping for a console without quotes. */
const unquoted = (escape: (v: string) => string) => ({ escape, quoting: NO_QUOTES });

describe("ids", () => {
  test("SteamID2, SteamID3 and SteamID64 convert exactly, both ways", () => {
    const cases: [string, string, string][] = [
      ["STEAM_0:0:11101", "[U:1:22202]", "76561197960287930"],
      ["STEAM_0:1:12345678", "[U:1:24691357]", "76561197984957085"],
      ["STEAM_0:1:2147483647", "[U:1:4294967295]", "76561202255233023"],
    ];
    for (const [two, three, sixtyFour] of cases) {
      expect(steam2To64(two)).toBe(sixtyFour);
      expect(steam2To64(two.replace("STEAM_0", "STEAM_1"))).toBe(sixtyFour); // newer engines print universe 1
      expect(steam3To64(three)).toBe(sixtyFour);
      expect(steam3To64(three.slice(1, -1))).toBe(sixtyFour);
      expect(steam64To2(sixtyFour)).toBe(two);
      expect(steam64To3(sixtyFour)).toBe(three);
      expect(anySteamTo64(sixtyFour)).toBe(sixtyFour);
    }
  });

  test("bots, pending and malformed ids are not ids", () => {
    for (const bad of [
      "BOT",
      "STEAM_ID_PENDING",
      "STEAM_ID_LAN",
      "STEAM_0:2:1",
      "[U:2:1]",
      "123",
      "76561197960265728",
    ]) {
      expect(anySteamTo64(bad)).toBeUndefined();
    }
    expect(steam64("7656119796028793")).toBeUndefined();
    expect(steam2To64("STEAM_0:1:99999999999")).toBeUndefined();
  });

  test("Minecraft UUIDs: lower case with dashes, with or without them given", () => {
    expect(minecraftUuid("069A79F444E94726A5BEFCA90E38AAF5")).toBe("069a79f4-44e9-4726-a5be-fca90e38aaf5");
    expect(minecraftUuid("069a79f4-44e9-4726-a5be-fca90e38aaf5")).toBe("069a79f4-44e9-4726-a5be-fca90e38aaf5");
    expect(minecraftUuid("not-a-uuid")).toBeUndefined();
  });

  test("Quake colour codes", () => {
    expect(stripQuakeColours("^1Red^7Sarge^^7")).toBe("RedSarge^");
  });
});

describe("templates", () => {
  test("ids go in as they are, text through the console's escaping, :json as a JSON string", () => {
    const esc = unquoted((v) => `<${v}>`);
    expect(render("kick {steam64} {reason}", { steam64: "76561197960287930", reason: "a b" }, esc)).toBe(
      "kick 76561197960287930 <a b>",
    );
    expect(render('tellraw @a {"text":{text:json}}', { text: 'say "hi"' }, esc)).toBe(
      'tellraw @a {"text":"say \\"hi\\""}',
    );
  });

  test("a missing value, an id that isn't a plain token, or an unknown placeholder is an error", () => {
    expect(() =>
      render(
        "clientkick {slot}",
        {},
        unquoted((v) => v),
      ),
    ).toThrow("{slot} is not known");
    expect(() =>
      render(
        "kick {id}",
        { id: "a;b" },
        unquoted((v) => v),
      ),
    ).toThrow('{id} = "a;b" is not a plain id');
    expect(() => placeholdersOf("kick {steamid}")).toThrow("unknown placeholder {steamid}");
    expect(() => placeholdersOf("kick {slot:json}")).toThrow("only text placeholders take a filter");
  });
});

describe("presets and overrides", () => {
  test("every preset is registered under its name", () => {
    expect(Object.keys(PRESETS).sort()).toEqual([...PRESET_NAMES].sort());
    for (const name of PRESET_NAMES) expect(PRESETS[name].name).toBe(name);
  });

  test("operators override data fields; an empty template removes a command", () => {
    const p = resolvePreset("gmod", {
      user_type: "STEAM",
      command_prefix: "/",
      multi_group: true,
      colours: "quake",
      max_players: 32,
      list_command: "status_json",
      lines: { chat: String.raw`^CHAT (?<id>\S+) (?<text>.*)$` },
      commands: { broadcast: "say {text}", stop: "" },
    });
    expect(p.commandPrefix).toBe("/");
    expect(p.multiGroup).toBe(true);
    expect(p.colours).toBe("quake");
    expect(p.maxPlayers).toBe(32);
    expect(p.list.command).toBe("status_json");
    expect(p.lines.chat?.[0]?.exec("CHAT STEAM_0:0:1 hi")?.groups?.text).toBe("hi");
    expect(p.commands.broadcast).toBe("say {text}");
    expect(p.commands.stop).toBeUndefined();
    expect(PRESETS.gmod.commands.stop).toBe("quit"); // the preset itself is untouched
  });

  test("bad overrides are one clear line naming the key", () => {
    expect(() => resolvePreset("quake")).toThrow(
      `game.preset = "quake" is not a preset: use one of ${PRESET_NAMES.join(", ")}`,
    );
    expect(() => resolvePreset("gmod", { lines: { chat: "(" } })).toThrow(
      "game.overrides.lines.chat is not a valid regular expression",
    );
    expect(() => resolvePreset("gmod", { lines: { connect: "joined" } })).toThrow(
      "game.overrides.lines.connect needs a named group (?<id>…) or (?<name>…) or (?<slot>…)",
    );
    expect(() => resolvePreset("gmod", { commands: { kick: "kick {player}" } })).toThrow(
      "game.overrides.commands.kick: unknown placeholder {player}",
    );
    expect(() => resolvePreset("gmod", { commands: { broadcast: "say hello" } })).toThrow(
      "game.overrides.commands.broadcast must use {text}",
    );
    expect(() => resolvePreset("gmod", { command_prefix: "! " })).toThrow("must not contain spaces");
  });
});
