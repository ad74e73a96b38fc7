import { expect, test } from "bun:test";
import { createLogger, redactor } from "../cli/log.ts";
import { jsonPrintable, printable } from "../lib/log.ts";
import { fsErrorLine } from "../lib/store/errors.ts";

test("printable: every control character becomes a visible escape; other text is untouched", () => {
  const cases: [string, string][] = [
    ["plain Ünïcödé ✓ text", "plain Ünïcödé ✓ text"],
    ["\x1b[2J\x1b]0;title\x07", "\\x1b[2J\\x1b]0;title\\x07"],
    ["a\nb\r\tc", "a\\nb\\r\\tc"],
    ["\x00\x7f\x85\x9b31m", "\\x00\\x7f\\x85\\x9b31m"],
    ["line\u2028sep\u2029", "line\\u2028sep\\u2029"],
    // Bidirectional controls: "kicking Eve\u202E" would show the rest of the operator's line reversed.
    ["Eve\u202Edenned\u202C \u2066x\u2069\u200f\u061c", "Eve\\u202edenned\\u202c \\u2066x\\u2069\\u200f\\u061c"],
  ];
  for (const [input, shown] of cases) expect(printable(input)).toBe(shown);
});

test("log lines: a nick with ESC, BEL and a line break stays one inert line, plain and JSON", () => {
  const nick = "Evil\x1b[31m\x07\nINFO forged\x9b";
  for (const format of ["pretty", "json"] as const) {
    const lines: string[] = [];
    const log = createLogger({
      format,
      quiet: false,
      redact: (t) => t,
      tty: false,
      env: {},
      write: (l) => lines.push(l),
    });
    log.info(`kicking ${nick}`, { player: nick });
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toMatch(/[\x00-\x1f\x7f-\x9f]/); // oxlint-disable-line no-control-regex
    if (format === "json")
      expect(JSON.parse(lines[0] as string)).toMatchObject({ msg: `kicking ${nick}`, player: nick });
    else expect(lines[0]).toContain("kicking Evil\\x1b[31m\\x07\\nINFO forged\\x9b");
  }
  expect(jsonPrintable(JSON.stringify("\x9b"))).toBe('"\\u009b"');
  expect(jsonPrintable(JSON.stringify("a\u202Eb"))).toBe('"a\\u202eb"');
});

test("store errors: one line naming the path and the fix", () => {
  expect(fsErrorLine("ENOSPC", "/s/queue/ban/1", "/s")).toBe("the store /s is full (ENOSPC): free space on that disk");
  expect(fsErrorLine("EROFS", "/s/x", "/s")).toContain("the store /s is on a read-only filesystem (EROFS): remount");
  expect(fsErrorLine("EACCES", "/s/x", "/s")).toBe(
    "/s/x can't be written by this user (EACCES): give the user running hub-agent write access to /s (chown, chmod)",
  );
  expect(fsErrorLine("EISDIR", "/s/locks/a.lock")).toContain("/s/locks/a.lock is a directory");
});

test("secrets are redacted also where a log line or JSON output escapes them (a quote, a backslash, a tab)", () => {
  const secrets = ['Xq7"Wv2\\Jk4', "Ab3\tCd4", "Ef5\x85Gh6"];
  const parts = ["Xq7", "Wv2", "Jk4", "Ab3", "Cd4", "Ef5", "Gh6"];
  const redact = redactor(() => secrets);
  for (const format of ["pretty", "json"] as const) {
    const lines: string[] = [];
    const log = createLogger({ format, quiet: false, redact, tty: false, env: {}, write: (l) => lines.push(l) });
    for (const s of secrets) {
      log.warn(`not passed on to the server: rcon_password ${s}`, { line: `rcon_password ${s}` });
      log.info(s, { value: s });
    }
    for (const line of lines) {
      expect(line).toContain("[redacted]");
      for (const part of parts) expect(line).not.toContain(part);
    }
  }
  // `--json` output and error objects: JSON-escaped, then redacted.
  const out = redact(jsonPrintable(JSON.stringify({ error: { message: secrets.join(" ") } }, null, 2)));
  for (const part of parts) expect(out).not.toContain(part);
});
