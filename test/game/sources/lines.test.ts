import { describe, expect, test } from "bun:test";
import { cleanLine, LineSplitter, MAX_LINE_CHARS } from "../../../lib/game/sources/lines.ts";

function split(chunks: (string | Uint8Array)[], flush = false): string[] {
  const lines: string[] = [];
  const s = new LineSplitter((l) => lines.push(l));
  for (const c of chunks) s.push(c);
  if (flush) s.flush();
  return lines;
}

describe("LineSplitter", () => {
  test("keeps a partial line until its end arrives", () => {
    expect(split(["Client", "Connect: ", "3\nClientBe", "gin: 3\n"])).toEqual(["ClientConnect: 3", "ClientBegin: 3"]);
    expect(split(["no end yet"])).toEqual([]);
    expect(split(["no end yet"], true)).toEqual(["no end yet"]);
  });

  test("\\n, \\r\\n (also split across chunks) and a lone \\r end a line; empty lines are dropped", () => {
    expect(split(["a\r", "\nb\r\n\r\nc\rd\n\n"])).toEqual(["a", "b", "c", "d"]);
  });

  test("decodes UTF-8 characters split across chunks", () => {
    const bytes = new TextEncoder().encode("grüße 🎮\n");
    expect(split([bytes.subarray(0, 3), bytes.subarray(3, 9), bytes.subarray(9)])).toEqual(["grüße 🎮"]);
  });

  test("strips terminal escapes and NULs", () => {
    expect(split(["\x1b[1;33mServer ready\x1b[0m\n\0\0\0after truncation\n"])).toEqual([
      "Server ready",
      "after truncation",
    ]);
    expect(cleanLine("\x1b]0;title\x07> \x1b[2Kjoined")).toBe("> joined");
  });

  test("an endless line is cut, not held forever; its rest is dropped, never a line of its own", () => {
    // In one chunk, and in many: the rest up to the line's end would start wherever the cut fell (a player's text).
    const long = `${"x".repeat(MAX_LINE_CHARS)}Alice joined the game`;
    expect(split([`${long}\nnext\n`])).toEqual(["x".repeat(MAX_LINE_CHARS), "next"]);
    const chunks = [...`${long}${"y".repeat(MAX_LINE_CHARS)}\r\nnext\n`.matchAll(/[^]{1,65536}/g)].map((m) => m[0]);
    expect(split(chunks)).toEqual(["x".repeat(MAX_LINE_CHARS), "next"]);
    expect(split([long], true)).toEqual(["x".repeat(MAX_LINE_CHARS)]);
  });

  test("line ends inside a text become spaces: JavaScript's `.` matches every character of a line", () => {
    expect(cleanLine("a\u2028b\u2029c\rd\ne")).toBe("a b c d e");
    expect(/^.*$/.test(cleanLine("say: Mallory: x\u2028y"))).toBe(true);
  });
});
