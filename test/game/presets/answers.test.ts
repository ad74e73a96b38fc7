/**
 * An answer to a player on a game without a private message: one public line naming the player (`<name>: <text>`
 * through the preset's broadcast), so chat commands are answered on every preset. The broadcast's escaping is the
 * one hostile.test.ts checks against each console; here every hostile name and text goes through it the same way.
 */
import { describe, expect, test } from "bun:test";
import { PRESETS, resolvePreset } from "../../../lib/game/presets/index.ts";
import { render } from "../../../lib/game/presets/template.ts";
import { HOSTILE } from "./hostile-values.ts";
import { recordingBridge } from "./recording.ts";

const withoutMessage = Object.values(PRESETS).filter((p) => p.name !== "generic" && p.commands.message === undefined);

describe("answers on games without a private message", () => {
  test("the presets without one are the ones the README and docs name", () => {
    expect(withoutMessage.map((p) => p.name).sort()).toEqual(["cs2", "ddnet", "rust", "teeworlds"]);
  });

  for (const preset of withoutMessage) {
    test(`${preset.name}: a public line naming the player, escaped as a broadcast of that line, one per line of text`, async () => {
      for (const name of ["Jack", ...HOSTILE]) {
        for (const text of ["Server dashboard: https://hub.example/x", ...HOSTILE.slice(0, 8)]) {
          const player = { id: name || "x", name, slot: "3" };
          const { bridge, transport } = recordingBridge(preset);
          await bridge.message(player, text);
          // The name is a part of one value: its own line breaks are cleaned away with the text's.
          const lines = text.split(/\r\n|\r|\n/).filter((l) => l.trim() !== "");
          const expected = lines.map((line) =>
            render(preset.commands.broadcast!, { text: `${name}: ${line}` }, preset),
          );
          expect({ name, text, sent: transport.commands }).toEqual({ name, text, sent: expected });
        }
      }
    });
  }

  test("a preset's own message command is still used where it has one (an override gives cs2 one)", async () => {
    const cs2 = resolvePreset("cs2", { commands: { message: "css_psay #{userid} {text}" } });
    const { bridge, transport } = recordingBridge(cs2);
    await bridge.message({ id: "76561197960287930", name: "Jack", slot: "7" }, "hi");
    expect(transport.commands).toEqual(['css_psay #7 "hi"']);
  });

  test("without a broadcast either, the answer fails with the reason", async () => {
    const { bridge, transport } = recordingBridge(PRESETS.generic);
    await expect(bridge.message({ id: "Jack", name: "Jack" }, "hi")).rejects.toThrow(
      "the generic preset has no broadcast command",
    );
    expect(transport.commands).toEqual([]);
  });
});
