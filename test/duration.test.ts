import { describe, expect, test } from "bun:test";
import { formatLength, MAX_BAN_SECONDS, parseLength } from "../lib/duration.ts";

describe("parseLength", () => {
  const accepted: [string, number | null][] = [
    ["90", 5400],
    ["1", 60],
    ["0", null],
    ["000", null],
    ["perm", null],
    ["Permanent", null],
    [" PERM ", null],
    ["30m", 1800],
    ["2h", 7200],
    ["1d12h", 129_600],
    ["2w", 1_209_600],
    ["1w2d3h4m5s", 604_800 + 2 * 86_400 + 3 * 3600 + 4 * 60 + 5],
    ["45s", 45],
    ["1D12H", 129_600],
    ["0d5m", 300],
  ];
  for (const [text, seconds] of accepted)
    test(`${JSON.stringify(text)} → ${seconds ?? "permanent"}`, () =>
      expect(parseLength(text)).toEqual({ ok: true, seconds }));

  const refused: [string, string][] = [
    ["", ""],
    ["soon", ""],
    ["-5", ""],
    ["1.5", ""],
    ["1.5h", ""],
    ["5 m", ""],
    ["m", ""],
    ["10x", ' (unknown unit "x")'],
    ["3mo", ' (unknown unit "mo")'],
    ["30m2h", " (give each unit once, largest first)"],
    ["1m1m", " (give each unit once, largest first)"],
    ["0m", " (zero; a permanent ban is 0 or perm)"],
    ["0d0h", " (zero; a permanent ban is 0 or perm)"],
    ["perma", ""],
  ];
  for (const [text, why] of refused)
    test(`${JSON.stringify(text)} is refused, naming the value and the accepted forms`, () => {
      const r = parseLength(text);
      expect(r.ok).toBe(false);
      if (r.ok) return;
      expect(r.error).toStartWith(`"${text}" is not a ban length${why}: use minutes as a number`);
      expect(r.error).toContain("30m, 1d12h, 2w");
      expect(r.error).toContain("0/perm");
    });
});

describe("the longest ban", () => {
  test("10 years is accepted, in minutes or as a duration", () => {
    expect(parseLength(String(MAX_BAN_SECONDS / 60))).toEqual({ ok: true, seconds: MAX_BAN_SECONDS });
    expect(parseLength("3650d")).toEqual({ ok: true, seconds: MAX_BAN_SECONDS });
    expect(parseLength("0")).toEqual({ ok: true, seconds: null });
  });
  for (const text of ["5256001", "3650d1s", "99999999999", "99999999999999999999", "99999999999999999w", "600w"])
    test(`${JSON.stringify(text)} is refused, naming the limit and perm`, () => {
      const r = parseLength(text);
      expect(r).toMatchObject({ ok: false, tooLong: true });
      if (r.ok) return;
      expect(r.error).toBe(
        `"${text}" is too long for a ban: the longest is 10 years (3650d, 5256000 minutes); use 0/perm for a permanent ban`,
      );
    });
});

describe("formatLength", () => {
  const cases: [number | null, string][] = [
    [null, "permanent"],
    [60, "1m"],
    [5400, "1h 30m"],
    [129_600, "1d 12h"],
    [1_209_600, "2w"],
    [45, "45s"],
  ];
  for (const [seconds, text] of cases) test(`${seconds} → ${text}`, () => expect(formatLength(seconds)).toBe(text));

  test("round-trips through parseLength", () => {
    for (const s of [60, 3600, 90_061, 1_209_600 + 61]) {
      const r = parseLength(formatLength(s).replaceAll(" ", ""));
      expect(r).toEqual({ ok: true, seconds: s });
    }
  });
});
