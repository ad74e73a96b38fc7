/**
 * Hostile nicks, reasons and messages (docs/game-consoles.md §4): for every preset and every command that takes
 * text, the rendered command is parsed the way the target console parses it, and must be exactly one command
 * whose arguments are those of a benign rendering, the value's own argument holding the cleaned value. The same
 * holds where the template itself quotes the placeholder (`ulx psay "%nick%" thanks`, `kick "{name}"`).
 */
import { describe, expect, test } from "bun:test";
import type { GamePlayer } from "../../../lib/game/bridge.ts";
import {
  ESCAPE_MODE_NAMES,
  type EscapeMode,
  escapeForMinecraftConsole,
  MAX_VALUE_BYTES,
  QUAKE_VALUE_BYTES,
  sanitize,
  stripForAnyConsole,
} from "../../../lib/game/presets/escape.ts";
import { PRESETS, type Preset, type PresetName, resolvePreset } from "../../../lib/game/presets/index.ts";
import { fillTemplate } from "../../../lib/rewards/replace.ts";
import {
  parseBrigadier,
  parseDarkplacesConsole,
  parseMinecraftConsole,
  parseOpenttdConsole,
  parseQuakeConsole,
  parseRustConsole,
  parseSourceConsole,
  parseTeeworldsConsole,
} from "./consoles.ts";
import { HOSTILE } from "./hostile-values.ts";
import { recordingBridge } from "./recording.ts";

const BENIGN = "BENIGN";

type Named = Exclude<PresetName, "generic">;

const PLAYERS: Record<PresetName, (name: string) => GamePlayer> = {
  generic: (name) => ({ id: name, name, slot: "3" }),
  minecraft: (name) => ({ id: "069a79f4-44e9-4726-a5be-fca90e38aaf5", name }),
  gmod: (name) => ({ id: "76561197960287930", name, slot: "7" }),
  cs2: (name) => ({ id: "76561197960287930", name, slot: "7" }),
  rust: (name) => ({ id: "76561197960287930", name }),
  openarena: (name) => ({ id: name, name, slot: "3" }),
  teeworlds: (name) => ({ id: name, name, slot: "3" }),
  ddnet: (name) => ({ id: name, name, slot: "3" }),
  xonotic: (name) => ({ id: name, name, slot: "3" }),
};

/** The argument a value becomes on each console once it went through the preset's escaping. */
const EXPECTED: Record<Named, (value: string) => string> = {
  minecraft: escapeForMinecraftConsole,
  gmod: (v) => sanitize(v).replace(/"/g, "'"),
  cs2: (v) => sanitize(v).replace(/"/g, "'"),
  openarena: (v) => sanitize(v, QUAKE_VALUE_BYTES).replace(/"/g, "'"),
  rust: (v) => sanitize(v).replace(/"/g, "'").replace(/;/g, ",").replace(/\\/g, "/"),
  teeworlds: (v) => sanitize(v).replace(/"/g, "'").replace(/\\/g, "/"),
  ddnet: (v) => sanitize(v).replace(/"/g, "'").replace(/\\/g, "/"),
  // `$` is written `$$`, which the console turns back into one.
  xonotic: (v) => sanitize(v).replace(/"/g, "'").replace(/\\/g, "/"),
};

const PARSE: Record<Exclude<Named, "minecraft">, (line: string) => string[][]> = {
  gmod: parseSourceConsole,
  cs2: parseSourceConsole,
  openarena: parseQuakeConsole,
  rust: parseRustConsole,
  teeworlds: parseTeeworldsConsole,
  ddnet: parseTeeworldsConsole,
  xonotic: parseDarkplacesConsole,
};

type Action = (b: ReturnType<typeof recordingBridge>["bridge"], value: string, preset: Preset) => Promise<unknown>;

/** Everything that puts a text value into a command; message texts are split at line breaks into one command each. */
const ACTIONS: Record<string, { run: Action; needs?: keyof Preset["commands"]; lines?: boolean }> = {
  "kick reason": { run: (b, v, p) => b.kick(PLAYERS[p.name as PresetName]("Alice"), v), needs: "kick" },
  "kick of a player with this nick": {
    run: (b, v, p) => b.kick(PLAYERS[p.name as PresetName](v), "bye"),
    needs: "kick",
  },
  "private message": {
    run: (b, v, p) => b.message(PLAYERS[p.name as PresetName]("Alice"), v),
    needs: "message",
    lines: true,
  },
  broadcast: { run: (b, v) => b.message(null, v), needs: "broadcast", lines: true },
  "group change of a player with this nick": {
    run: (b, v, p) => b.setGroup(PLAYERS[p.name as PresetName](v), "vip", "add"),
    needs: "group_add",
  },
  "reward command with an escaped nick": { run: (b, v) => b.exec(`say ${b.escape(v)}`) },
};

/** The commands a value becomes: a message is split at its line breaks, one per non-blank line; else one command. */
const partsOf = (action: { lines?: boolean }, value: string): string[] =>
  action.lines ? value.split(/\r\n|\r|\n/).filter((l) => l.trim() !== "") : [value];

/** What the console makes of the commands `action` renders for `value`. */
async function rendered(preset: Preset, action: Action, value: string): Promise<string[]> {
  const { bridge, transport } = recordingBridge(preset);
  await action(bridge, value, preset);
  return transport.commands;
}

/**
 * Renders every hostile value through `action`: one command per part of the value (partsOf), each handed to `check`
 * with its part; a failed check names the value and the command.
 */
async function eachHostileCommand(
  preset: Preset,
  action: (typeof ACTIONS)[string],
  check: (command: string, part: string) => void,
): Promise<void> {
  for (const value of HOSTILE) {
    const commands = await rendered(preset, action.run, value);
    const parts = partsOf(action, value);
    expect(commands).toHaveLength(parts.length);
    commands.forEach((command, i) => {
      try {
        check(command, parts[i]!);
      } catch (e) {
        throw new Error(`${JSON.stringify(value)} → ${JSON.stringify(command)}: ${(e as Error).message}`);
      }
    });
  }
}

/** Checks one hostile rendering against the benign one, the way the target console reads both. */
function expectSameShape(preset: Preset & { name: Named }, benign: string, hostile: string, value: string) {
  const expected = EXPECTED[preset.name](value);
  if (preset.name === "minecraft") {
    const b = parseMinecraftConsole(benign);
    const h = parseMinecraftConsole(hostile);
    const at = b.findIndex((arg) => arg.includes(BENIGN));
    if (at < 0) return expect(h).toEqual(b); // the value isn't part of this command (a kick names the uuid)
    // Everything before the value is unchanged; the value takes the rest of the line (greedy or JSON).
    expect(h.slice(0, at)).toEqual(b.slice(0, at));
    const rest = b.slice(at).join(" ");
    const json = rest.includes(`"${BENIGN}"`);
    const want = json
      ? rest.replace(`"${BENIGN}"`, () => JSON.stringify(sanitize(value)))
      : rest.replace(BENIGN, () => expected);
    expect(h.slice(at).join(" ")).toBe(want);
    if (json) expect(JSON.parse(want.slice(want.indexOf("{")))).toEqual({ text: sanitize(value) });
    return;
  }
  const parse = PARSE[preset.name];
  const [b, ...moreB] = parse(benign);
  const commands = parse(hostile);
  expect(moreB).toEqual([]);
  expect(commands).toHaveLength(1);
  const h = commands[0]!;
  expect(h).toHaveLength(b!.length);
  b!.forEach((arg, i) => expect(h[i]).toBe(arg.includes(BENIGN) ? arg.replace(BENIGN, () => expected) : arg));
}

describe("hostile values never make a second command", () => {
  test("the table has at least 30 cases", () => {
    expect(HOSTILE.length).toBeGreaterThanOrEqual(30);
  });

  // The generic preset is covered below, once per escaping an operator can pick.
  for (const preset of Object.values(PRESETS).filter((p): p is Preset & { name: Named } => p.name !== "generic")) {
    describe(preset.name, () => {
      for (const [what, action] of Object.entries(ACTIONS)) {
        if (action.needs && preset.commands[action.needs] === undefined) continue;
        test(`${what}: ${HOSTILE.length} hostile values`, async () => {
          const [benign] = await rendered(preset, action.run, BENIGN);
          expect(benign).toBeDefined();
          await eachHostileCommand(preset, action, (command, part) => expectSameShape(preset, benign!, command, part));
        });
      }

      test("a group name that isn't a plain word is refused before anything is sent", async () => {
        if (preset.commands.group_add === undefined) return;
        for (const group of ["vip;quit", "a b", 'v"ip', "vip\nquit", "", "x".repeat(65)]) {
          const { bridge, transport } = recordingBridge(preset);
          await expect(bridge.setGroup(PLAYERS[preset.name as PresetName]("Alice"), group, "add")).rejects.toThrow(
            "can't be used",
          );
          expect(transport.commands).toEqual([]);
        }
      });
    });
  }

  /**
   * The generic preset with each `game.overrides.escape`, its templates as an operator writes them (the value last),
   * parsed by every console the mode is documented for (docs/game-consoles.md §4).
   */
  const GENERIC_CONSOLES: Record<EscapeMode, Record<string, (line: string) => string[][]>> = {
    quote: {
      source: parseSourceConsole,
      quake: parseQuakeConsole,
      teeworlds: parseTeeworldsConsole,
      openttd: parseOpenttdConsole,
    },
    line: { minecraft: (line) => [parseMinecraftConsole(line)] },
    strip: {
      source: parseSourceConsole,
      quake: parseQuakeConsole,
      teeworlds: parseTeeworldsConsole,
      darkplaces: parseDarkplacesConsole,
      rust: parseRustConsole,
      openttd: parseOpenttdConsole,
      minecraft: (line) => [parseMinecraftConsole(line)],
    },
  };
  /** The value's arguments, joined by single spaces (unquoted modes: the console splits it at its spaces). */
  const GENERIC_EXPECTED: Record<EscapeMode, (value: string) => string> = {
    quote: (v) => sanitize(v).replace(/"/g, "'").replace(/\\/g, "/"),
    line: (v) => sanitize(v).trim().split(/ +/).join(" "),
    strip: (v) => stripForAnyConsole(v).trim().split(/ +/).join(" "),
  };

  for (const mode of ESCAPE_MODE_NAMES) {
    describe(`generic, escape = "${mode}"`, () => {
      const preset = resolvePreset("generic", {
        list_command: "clients",
        list_row: "^Client #(?<slot>\\d+) name: '(?<name>.*)'",
        escape: mode,
        commands: { kick: "kick {slot} {reason}", message: "say_client {slot} {text}", broadcast: "say {text}" },
      });
      for (const [what, action] of Object.entries(ACTIONS)) {
        if (action.needs && preset.commands[action.needs] === undefined) continue;
        for (const [console, parse] of Object.entries(GENERIC_CONSOLES[mode])) {
          test(`${what}, read by the ${console} console: ${HOSTILE.length} hostile values`, async () => {
            const [benign] = await rendered(preset, action.run, BENIGN);
            const [b, ...moreB] = parse(benign!);
            expect(moreB).toEqual([]);
            const at = b!.indexOf(BENIGN);
            await eachHostileCommand(preset, action, (command, part) => {
              const parsed = parse(command);
              expect(parsed).toHaveLength(1);
              const h = parsed[0]!;
              if (at < 0) return expect(h).toEqual(b!); // the value isn't in this command (a kick by slot)
              expect(h.slice(0, at)).toEqual(b!.slice(0, at));
              const arg = mode === "quote" ? h.slice(at) : h.slice(at).filter((a) => a !== "");
              if (mode === "quote") expect(arg).toEqual([GENERIC_EXPECTED[mode](part)]);
              else expect(arg.join(" ")).toBe(GENERIC_EXPECTED[mode](part));
            });
          });
        }
      }
    });
  }

  /**
   * Templates that quote the placeholder themselves, and ones that don't, for the preset's templates (`{name}`: the
   * kick of a player with the hostile nick) and for reward commands (`%nick%`). `args` is what the console must
   * read: `q` the value as read inside the template's quotes, `b` the standalone value's arguments; `fixed` is how
   * many arguments come before the standalone value (Minecraft reads the rest of the line as one).
   */
  const QUOTED: {
    kind: "preset" | "reward";
    template: string;
    fixed: number;
    args: (q: string, b: string[]) => string[];
  }[] = [
    { kind: "preset", template: "kick {name}", fixed: 1, args: (_q, b) => ["kick", ...b] },
    { kind: "preset", template: 'kick "{name}"', fixed: 2, args: (q) => ["kick", q] },
    { kind: "preset", template: 'kick "bye, {name}!"', fixed: 2, args: (q) => ["kick", `bye, ${q}!`] },
    { kind: "preset", template: 'kick "[{name}]" {name}', fixed: 2, args: (q, b) => ["kick", `[${q}]`, ...b] },
    { kind: "reward", template: "say %nick%", fixed: 1, args: (_q, b) => ["say", ...b] },
    { kind: "reward", template: 'say "%nick%"', fixed: 2, args: (q) => ["say", q] },
    { kind: "reward", template: 'say "thanks %nick%!"', fixed: 2, args: (q) => ["say", `thanks ${q}!`] },
    { kind: "reward", template: 'ulx psay "%nick%" thanks', fixed: 4, args: (q) => ["ulx", "psay", q, "thanks"] },
  ];

  /** How one console reads a rendering: its commands, and the value inside the template's quotes and standing alone. */
  interface Reading {
    parse: (line: string, fixed: number) => string[][];
    quoted: (value: string) => string;
    bare: (value: string) => string[];
  }
  /** A console that groups `"…"`, with an escaping that quotes: the value is one argument either way. */
  const grouping = (parse: (line: string) => string[][], arg: (value: string) => string): Reading => ({
    parse,
    quoted: arg,
    bare: (v) => [arg(v)],
  });
  /** A line console (Brigadier): the standalone value is the rest of the line, as written. */
  const brigadier = (quoted: (value: string) => string, bare: (value: string) => string): Reading => ({
    parse: (line, fixed) => [parseBrigadier(line, fixed)],
    quoted,
    bare: (v) => (bare(v) === "" ? [] : [bare(v)]),
  });
  /** Inside quotes where two quote characters and backslashes escape: no quote of either kind, no backslash. */
  const typographic = (text: string) => text.replace(/"/g, "\u201d").replace(/'/g, "\u2019").replace(/\\/g, "/");
  const stripped = (v: string) => stripForAnyConsole(v);

  /** Each preset and escaping, resolved with the test's kick template (checked at load like an operator's). */
  const READINGS: { name: string; preset: (kick: string) => Preset; readings: Record<string, Reading> }[] = [
    ...(["gmod", "cs2", "openarena", "rust", "teeworlds", "xonotic"] as const).map((name) => ({
      name,
      preset: (kick: string) => resolvePreset(name, { commands: { kick } }),
      readings: { [name]: grouping(PARSE[name], EXPECTED[name]) },
    })),
    {
      name: "minecraft",
      preset: (kick: string) => resolvePreset("minecraft", { commands: { kick } }),
      readings: { minecraft: brigadier((v) => typographic(EXPECTED.minecraft(v)), EXPECTED.minecraft) },
    },
    ...ESCAPE_MODE_NAMES.map((mode) => ({
      name: `generic, escape = "${mode}"`,
      preset: (kick: string) =>
        resolvePreset("generic", {
          list_command: "clients",
          list_row: "^(?<name>.*)$",
          escape: mode,
          commands: { kick },
        }),
      readings: {
        quote: Object.fromEntries(
          Object.entries(GENERIC_CONSOLES.quote).map(([c, parse]) => [c, grouping(parse, GENERIC_EXPECTED.quote)]),
        ),
        line: { minecraft: brigadier((v) => typographic(sanitize(v)), sanitize) },
        strip: {
          ...Object.fromEntries(
            Object.entries(GENERIC_CONSOLES.strip)
              .filter(([c]) => c !== "minecraft")
              .map(([c, parse]) => [
                c,
                { parse, quoted: stripped, bare: (v: string) => stripped(v).split(" ").filter(Boolean) },
              ]),
          ),
          minecraft: brigadier(stripped, stripped),
        },
      }[mode],
    })),
  ];

  /** The command a template becomes for a hostile nick: the kick (the template is the preset's), or a reward command. */
  async function renderQuoted(preset: Preset, t: (typeof QUOTED)[number], nick: string): Promise<string> {
    const { bridge, transport } = recordingBridge(preset);
    if (t.kind === "reward") await bridge.exec(fillTemplate(t.template, { nick }, bridge).text);
    else await bridge.kick(PLAYERS[preset.name as PresetName](nick), "bye");
    expect(transport.commands).toHaveLength(1);
    return transport.commands[0]!;
  }

  describe("placeholders inside the template's quotes", () => {
    for (const { name, preset, readings } of READINGS) {
      for (const t of QUOTED) {
        for (const [reader, reading] of Object.entries(readings)) {
          test(`${name}, ${t.kind} template ${t.template}, read by the ${reader} console: ${HOSTILE.length} hostile nicks`, async () => {
            for (const value of HOSTILE) {
              const command = await renderQuoted(preset(t.kind === "preset" ? t.template : "kick {name}"), t, value);
              try {
                expect(reading.parse(command, t.fixed)).toEqual([t.args(reading.quoted(value), reading.bare(value))]);
              } catch (e) {
                throw new Error(`${JSON.stringify(value)} → ${JSON.stringify(command)}: ${(e as Error).message}`);
              }
            }
          });
        }
      }
    }
  });

  test("values are cut to a bounded length at a character boundary", () => {
    expect(new TextEncoder().encode(sanitize("🎮".repeat(500))).length).toBeLessThanOrEqual(MAX_VALUE_BYTES);
    expect(sanitize("🎮".repeat(500))).toBe("🎮".repeat(MAX_VALUE_BYTES / 4));
    expect(sanitize("x".repeat(5000))).toHaveLength(MAX_VALUE_BYTES);
  });
});
