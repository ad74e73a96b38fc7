/**
 * The checks of the operator's patterns (lib/game/sources/pattern-check.ts, docs/game-consoles.md §8): shapes that
 * take exponential time are refused when the configuration loads, with one line naming the key, the reason and
 * the fix; `run` and `doctor` also time each pattern on hostile lines and refuse one slower than linear.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../../lib/app/config.ts";
import { parseToml } from "../../../lib/config/toml.ts";
import { PRESETS, PresetError, resolvePreset } from "../../../lib/game/presets/index.ts";
import { ambiguity } from "../../../lib/game/sources/pattern-check.ts";
import { hostileLines, slowest } from "../../../lib/game/sources/pattern-timing.ts";
import { docBlock } from "../../support/docs.ts";

/** Patterns that take exponential time on a line they almost match, each with such a line. */
const EXPONENTIAL: [string, string][] = [
  [String.raw`^(?<name>(?:\w+ ?)+)$`, `${"a".repeat(26)}!`],
  [String.raw`^(a*)*$`, `${"a".repeat(26)}!`],
  [String.raw`^(?:\w|\d)+$`, `${"1".repeat(26)}!`],
  [String.raw`^(?:.|\s)*$`, "x"],
  [String.raw`^(?:\s*\w+)+$`, `${"a".repeat(26)}!`],
  [String.raw`^(?:\w{1,20} ?)+$`, `${"a".repeat(26)}!`],
  [String.raw`^(?:a|ab)+$`, "x"],
  [String.raw`^(?:(?:a+)+b)+$`, "x"],
];

/** Patterns slower than linear (squared, cubed) that no repetition inside another makes so. */
const POLYNOMIAL = [
  String.raw`^\[All\] (?<name>.+): (?<text>.*)x$`,
  String.raw`^(?:\^7)?Client "(?<name>.*)" dropped(?: \([^:]*\))?\s*$`, // xonotic's leave line before
  String.raw`^\s*(?:\d+:\d\d )?Kill: (\d+) (\d+) \d+: .* killed .* by \w+$`, // openarena's kill line before
  String.raw`^players\s*:\s*\d+.*?\((\d+) max\)`, // srcds status' max players before
  String.raw`^\s*(\d+)\s+(?:[\d:]+|BOT)\s+\d+\s+\d+\s+\w+\s+\d+\s*(?:\S*)\s+'(.*)'\s*$`, // cs2's row before
  String.raw`\d+\s*\d+\s*\d+x`,
];

/** Patterns that must stay accepted: linear ones with repetitions inside repetitions that can't overlap. */
const LINEAR = [
  String.raw`^(?:\d+\.)+\d+$`,
  String.raw`^(?:foo|far)+$`,
  String.raw`^[^,]*(?:,[^,]*)*$`,
  String.raw`^(?: \[[^\]]*\]){0,2}: `,
  String.raw`^(?<name>.+): (?<text>.*)$`,
];

/** The problems of a wrapped generic console whose `[game.overrides]` are `overrides` (TOML), as loadConfig says. */
async function loadProblems(overrides: string, timePatterns = false): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), "hub-pattern-"));
  const head = ["[game]", 'bridge = "wrapper"', 'preset = "generic"', "[game.wrapper]", 'command = ["/bin/true"]'];
  // The docs' game pages bring their own list command and echo.
  const own = [
    "[game.overrides]",
    ...(overrides.includes("list_command") ? [] : ['list_command = "players"', 'echo = "echo {marker}"']),
  ];
  writeFileSync(join(dir, "hub-agent.toml"), [...head, ...own, overrides].join("\n"));
  const env = {
    HUB_API_URL: "https://api.example/x/v1",
    HUB_API_KEY: "k-0123456789",
    HUB_API_SERVER_ID: "541d1c41-1b58-40fc-8780-70c400ea5686",
  };
  const r = await loadConfig({ env, cwd: dir, timePatterns });
  return r.ok ? [] : r.problems;
}

function resolveRefusal(overrides: Record<string, unknown>): string {
  try {
    resolvePreset("generic", { list_command: "players", list_row: "^(?<name>\\S+)$", ...overrides });
  } catch (e) {
    if (e instanceof PresetError) return e.message;
    throw e;
  }
  return "accepted";
}

describe("the shape check (at load)", () => {
  test("refuses nested and overlapping repetitions, with the reason", () => {
    for (const [source] of EXPONENTIAL)
      expect({ source, why: ambiguity(new RegExp(source)) ?? "" }).toMatchObject({
        source,
        why: expect.stringMatching(/repeat|alternatives/),
      });
  });

  test("the refused shapes are exponential indeed: each a few characters longer doubles the time", () => {
    // (?:\w+ ?)+ on a nick of 18 letters and one more: measured, not assumed (26 letters: ~0.9 s).
    const re = new RegExp(EXPONENTIAL[0]![0]);
    const time = (n: number) => {
      let best = Infinity;
      for (let r = 0; r < 3; r++) {
        const start = performance.now();
        re.exec(`${"a".repeat(n)}!`);
        best = Math.min(best, performance.now() - start);
      }
      return best;
    };
    expect(time(20)).toBeGreaterThan(time(16) * 4);
  });

  test("accepts linear patterns, every preset's and every one of the docs", () => {
    const readme = parseToml(docBlock("docs/games/openttd.md", "toml")) as {
      game: { overrides: Record<string, unknown> };
    };
    const { list_row, lines } = readme.game.overrides as { list_row: string; lines: Record<string, string> };
    const sources = [...LINEAR, ...POLYNOMIAL, list_row, ...Object.values(lines)];
    for (const source of sources)
      expect({ source, why: ambiguity(new RegExp(source)) }).toEqual({ source, why: undefined });
    for (const preset of Object.values(PRESETS)) {
      for (const re of Object.values(preset.lines).flat())
        expect({ re: re.source, why: ambiguity(re) }).toEqual({ re: re.source, why: undefined });
    }
  });

  test("an operator's pattern of that shape is refused at load: one line naming the key, the reason and the fix", () => {
    const nick = String.raw`^(?<slot>\d+) (?<name>(?:\w+ ?)+)$`;
    for (const [key, overrides] of [
      ["game.overrides.list_row", { list_row: nick }],
      ["game.overrides.list_end", { list_end: String.raw`^(?:\d+ ?)+ players$` }],
      ["game.overrides.lines.chat", { lines: { chat: String.raw`^(?<name>\w+): (?<text>(?:\S+ ?)*)$` } }],
    ] as const) {
      const message = resolveRefusal(overrides);
      expect(message).toStartWith(`${key} is refused: a repeated part holds another repetition`);
      expect(message).toContain("write one repetition per part");
      expect(message).not.toContain("\n");
    }
    expect(resolveRefusal({ lines: { connect: String.raw`^(?:\w|\d)+ joined (?<name>\S+)$` } })).toStartWith(
      "game.overrides.lines.connect is refused: alternatives inside a repeated part can match the same text",
    );
  });

  test("loadConfig names the key and where it is set", async () => {
    const start = performance.now();
    const problems = await loadProblems(String.raw`list_row = '^(?<name>(?:\w+ ?)+)$'`);
    expect(performance.now() - start).toBeLessThan(5_000); // refused at once, not after running the pattern
    expect(problems).toEqual([expect.stringMatching(/^game\.overrides\.list_row is refused: .*hub-agent\.toml/)]);
  });
});

describe("the timing (run and doctor)", () => {
  test("finds every pattern slower than linear on short lines, in seconds at most (not the minutes of 64 KiB)", () => {
    for (const source of POLYNOMIAL) {
      const start = performance.now();
      const s = slowest(new RegExp(source));
      const took = performance.now() - start;
      expect({ source, slow: s.ms > Math.max(1, (10 * s.length) / 65536), short: s.length < 65536 }).toEqual({
        source,
        slow: true,
        short: true,
      });
      // Well under a second on an idle machine; at 64 KiB, a squared pattern takes seconds, a cubed one hours.
      expect(took).toBeLessThan(15_000);
    }
  });

  test("linear patterns pass, each line's best run judged (a busy machine doesn't refuse them)", () => {
    for (const source of LINEAR) {
      const s = slowest(new RegExp(source));
      expect({ source, length: s.length, ok: s.ms <= 10 }).toEqual({ source, length: 65536, ok: true });
    }
  });

  test("a slow pattern of the operator's is refused by run and doctor's load, naming the key, its time and the fix", async () => {
    const chat = String.raw`chat = '^\[All\] (?<name>.+): (?<text>.*)x$'`;
    const row = String.raw`list_row = '^(?<name>\S+)$'`;
    expect(await loadProblems(`${row}\n[game.overrides.lines]\n${chat}`)).toEqual([]); // other commands run none
    const problems = await loadProblems(`${row}\n[game.overrides.lines]\n${chat}`, true);
    expect(problems).toEqual([
      expect.stringMatching(
        /^game\.overrides\.lines\.chat is refused: it took \d+ ms on a line of \d+ characters \(".*"\), where a pattern may take \d+ ms, and lines of 65536 reach it; its time grows faster than the line: make the parts around each repetition exclusive.* \(.*hub-agent\.toml.*\)$/,
      ),
    ]);
    expect(problems[0]).not.toContain("\n");
    // The docs' OpenTTD patterns pass the timing.
    expect(await loadProblems(docBlock("docs/games/openttd.md", "toml").split("[game.overrides]\n")[1]!, true)).toEqual(
      [],
    );
  });

  test("hostile lines are what a source delivers: cut, cleaned, raw line ends made spaces", () => {
    const lines = hostileLines(/^\[All\] (?<name>.+): (?<text>.*)$/, 4096);
    expect(lines.length).toBeGreaterThan(2);
    for (const line of lines) {
      expect(line.length).toBeLessThanOrEqual(4096);
      expect(line).not.toMatch(/[\r\n\u2028\u2029]/);
    }
  });
});
