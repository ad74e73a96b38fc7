/**
 * Where a placeholder sits in a template (lib/game/presets/quoting.ts), per console: backslashes as each engine reads
 * them, unclosed quotes, placeholders right after a backslash, and what is refused when a configuration loads. Each
 * rendering is checked with the console's model (./consoles.ts), and each refusal is shown to be needed: rendered
 * anyway, the value would have made a second command.
 */
import { describe, expect, test } from "bun:test";
import { ESCAPE_MODE_NAMES } from "../../../lib/game/presets/escape.ts";
import { PRESET_NAMES, PRESETS, type Preset, resolvePreset } from "../../../lib/game/presets/index.ts";
import { render, SAMPLE_VALUES } from "../../../lib/game/presets/template.ts";
import { parseDarkplacesConsole, parseQuakeConsole, parseSourceConsole, parseTeeworldsConsole } from "./consoles.ts";

const NICK = "Mal;quit;";
const renderName = (preset: Preset, template: string) => render(template, { name: NICK }, preset);
/** The rendering had the value been escaped as a standalone argument wherever it sits (the code before quoting.ts). */
const standalone = (preset: Preset, template: string) => template.replace("{name}", preset.escape(NICK));
const generic = (escape: "quote" | "line" | "strip", kick: string) =>
  resolvePreset("generic", { list_command: "clients", list_row: "^(?<name>.*)$", escape, commands: { kick } });

describe("backslashes, as each engine reads them", () => {
  test('Teeworlds: the splitter steps over \\" outside quotes too, so it opens nothing', () => {
    const { teeworlds } = PRESETS;
    // Outside quotes: the value is standalone, quoted by the escaping; one command.
    expect(parseTeeworldsConsole(renderName(teeworlds, 'say \\"{name}'))).toHaveLength(1);
    // Inside quotes, after an escaped quote: still inside.
    const inside = renderName(teeworlds, 'say "a\\" {name}"');
    expect(inside).toBe('say "a\\" Mal;quit;"');
    expect(parseTeeworldsConsole(inside)).toEqual([["say", 'a" Mal;quit;']]);
  });

  test("a placeholder right after a backslash that escapes is refused: it would take the value's opening quote", () => {
    for (const [preset, template] of [
      [PRESETS.teeworlds, "say \\{name}"],
      [PRESETS.xonotic, 'say "\\{name}"'],
      [PRESETS.minecraft, 'say "\\{name}"'],
      [generic("quote", "kick {name}"), "say \\{name}"],
    ] as const) {
      expect(() => renderName(preset, template)).toThrow("{name} comes right after a backslash");
    }
    // Why: on Teeworlds the value's own opening quote would be escaped, and its `;` would end the command.
    expect(parseTeeworldsConsole(standalone(PRESETS.teeworlds, "say \\{name}")).length).toBeGreaterThan(1);
    // Where a backslash is a character like any other, it stays: one command.
    expect(parseSourceConsole(renderName(PRESETS.gmod, "say \\{name}"))).toEqual([["say", "\\", NICK]]);
  });

  test('DarkPlaces: inside quotes only \\" and \\\\ are escapes; another backslash is refused (engines disagree)', () => {
    const { xonotic } = PRESETS;
    expect(parseDarkplacesConsole(renderName(xonotic, 'say "a\\\\ {name}"'))).toEqual([["say", "a\\ Mal;quit;"]]);
    expect(parseDarkplacesConsole(renderName(xonotic, 'say "a\\" {name}"'))).toEqual([["say", 'a" Mal;quit;']]);
    expect(() => renderName(xonotic, 'say "a\\x" {name}')).toThrow(
      "{name} comes after the backslash at column 7, which this console's engines read differently",
    );
  });

  test("generic `quote`: a backslash before a quote is refused (Source reads two characters, Teeworlds an escape)", () => {
    const preset = generic("quote", "kick {name}");
    expect(() => renderName(preset, 'say "a\\" {name}"')).toThrow("comes after the backslash at column 7");
    // Why: the two readings put the value on different sides of the quote, and on one of them its `;` ends the command.
    const template = 'say "a\\" {name}"';
    const asSource = render(template, { name: NICK }, { ...preset, quoting: PRESETS.gmod.quoting });
    const asTeeworlds = render(template, { name: NICK }, { ...preset, quoting: PRESETS.teeworlds.quoting });
    expect(parseTeeworldsConsole(asSource).length).toBeGreaterThan(1);
    expect(parseQuakeConsole(asTeeworlds).length).toBeGreaterThan(1);
  });
});

describe("comments: ioquake3 ends a command where a /* comment closes", () => {
  test("a value after a /* outside quotes is refused on Quake 3 and with `quote`; inside quotes it is text", () => {
    for (const [preset, template] of [
      [PRESETS.openarena, "say thanks /* VIP */ {name}"],
      [PRESETS.openarena, "kick /* {name}"],
      [generic("quote", "kick {name}"), 'say "vip" /* x */ "{name}"'],
    ] as const) {
      expect(() => renderName(preset, template)).toThrow("{name} comes after the /* at column");
    }
    // Why: the standalone value, after the comment, is a command of its own.
    expect(parseQuakeConsole(standalone(PRESETS.openarena, "say thanks /* VIP */ {name}"))).toEqual([
      ["say", "thanks"],
      [NICK],
    ]);
    expect(renderName(PRESETS.openarena, 'say "/* VIP */ {name}"')).toBe('say "/* VIP */ Mal;quit;"');
    expect(() => resolvePreset("openarena", { commands: { kick: "clientkick {slot} /* bye */ {reason}" } })).toThrow(
      "game.overrides.commands.kick: {reason} comes after the /* at column 19",
    );
  });
});

describe("unclosed quotes and line breaks", () => {
  test("a quote left open runs to the end of the line, where every console reads the value as quoted", () => {
    expect(parseSourceConsole(renderName(PRESETS.gmod, 'say "hi {name}'))).toEqual([["say", "hi Mal;quit;"]]);
    expect(parseTeeworldsConsole(renderName(PRESETS.teeworlds, 'say "hi {name}'))).toEqual([["say", "hi Mal;quit;"]]);
  });

  test("a line break ends the command and any quote: the next line starts outside", () => {
    expect(renderName(PRESETS.gmod, 'say "a\nsay {name}')).toBe('say "a\nsay "Mal;quit;"');
  });

  test("several placeholders in one template: each where it sits", () => {
    const command = render('say {name} "[{name}]" {reason} "{reason}"', { name: NICK, reason: 'r"x' }, PRESETS.cs2);
    expect(command).toBe(`say "Mal;quit;" "[Mal;quit;]" "r'x" "r'x"`);
    expect(parseSourceConsole(command)).toEqual([["say", NICK, `[${NICK}]`, "r'x", "r'x"]]);
  });
});

describe("templates in the configuration, checked when it loads", () => {
  test("a JSON string inside quotes is refused with the key and the fix", () => {
    expect(() =>
      resolvePreset("minecraft", { commands: { message: 'tellraw {uuid} "{"text":{text:json}}"' } }),
    ).toThrow(
      "game.overrides.commands.message: {text:json} sits inside quotes, but a JSON string brings its own: remove the quotes around it",
    );
  });

  test("a backslash the console's engines read differently is refused with the key", () => {
    expect(() => generic("quote", 'kick "a\\" {name}"')).toThrow(
      "game.overrides.commands.kick: {name} comes after the backslash at column 8",
    );
    expect(() => resolvePreset("teeworlds", { commands: { kick: "kick {slot} \\{reason}" } })).toThrow(
      "game.overrides.commands.kick: {reason} comes right after a backslash",
    );
  });

  test("quoted placeholders load and render on every preset and escaping", () => {
    for (const name of PRESET_NAMES) {
      for (const escape of [undefined, ...ESCAPE_MODE_NAMES]) {
        const preset = resolvePreset(name, {
          ...(name === "generic" ? { list_command: "clients", list_row: "^(?<name>.*)$" } : {}),
          ...(escape ? { escape } : {}),
          commands: { kick: 'kick "{name}" "bye, {reason}!"', broadcast: 'say "({text})"' },
        });
        // The preset's own templates, too, with every escaping an operator may pick.
        for (const template of Object.values(preset.commands))
          expect(() => render(template, SAMPLE_VALUES, preset)).not.toThrow();
      }
    }
  });
});
