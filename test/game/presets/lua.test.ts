/**
 * Garry's Mod SCRIPT rewards (lib/game/presets/lua.ts): every console line is one `lua_run` command the way srcds
 * splits them, within the engine's 512 bytes; the code arrives whole; and a hostile value substituted into the code,
 * bare or inside the code's own strings, stays text — checked by a real Lua interpreter (LuaJIT, what Garry's Mod
 * runs, else Lua 5.1).
 */
import { describe, expect, test } from "bun:test";
import { Buffer } from "node:buffer";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sanitize } from "../../../lib/game/presets/escape.ts";
import { gmod } from "../../../lib/game/presets/gmod.ts";
import { luaRunLines } from "../../../lib/game/presets/lua.ts";
import { fillTemplate } from "../../../lib/rewards/replace.ts";
import { parseSourceConsole } from "./consoles.ts";
import { HOSTILE } from "./hostile-values.ts";

const lua = Bun.which("luajit") ?? Bun.which("lua5.1");

/** The code the lines carry, as the server would assemble it: the chunks joined, then base64-decoded. */
function carried(lines: string[]): string {
  const chunks = lines.slice(0, -1).map((l) => /"([A-Za-z0-9+/=]*)"$/.exec(l)?.[1] ?? "<bad line>");
  return Buffer.from(chunks.join(""), "base64").toString("utf8");
}

describe("lua_run lines", () => {
  test("each line is one lua_run command of at most 512 bytes; the last one runs the decoded code", () => {
    const code = `PLAYER:ChatPrint("thanks; // \\"quoted\\" ${"x".repeat(2000)}")`;
    const lines = luaRunLines(code, { id: "76561198000000001" }, "ab12-cd34");
    expect(lines.length).toBeGreaterThan(3);
    for (const line of lines) {
      expect(Buffer.byteLength(line)).toBeLessThanOrEqual(512);
      const commands = parseSourceConsole(line);
      expect(commands).toHaveLength(1);
      expect(commands[0]![0]).toBe("lua_run");
    }
    expect(lines.at(-1)).toBe(
      'lua_run local s = _G.hub_agent_ab12cd34 _G.hub_agent_ab12cd34 = nil RunString(util.Base64Decode(s), "hub-agent reward")',
    );
    expect(carried(lines)).toBe(`local PLAYER = player.GetBySteamID64("76561198000000001")\n${code}`);
  });

  test("without a player, PLAYER is nil", () => {
    expect(carried(luaRunLines("print(1)", null, "t"))).toBe("local PLAYER = nil\nprint(1)");
  });
});

/** Nicks written to break out of a Lua string of either kind and run code. */
const LUA_HOSTILE = ['"..os.exit(3).."', "'..os.exit(3)..'", '\\"..os.exit(3)..\\"', "]]os.exit(3)--[["];

/** The value as read inside a string the code quotes: no quote of either kind, no backslash, one line, 400 bytes. */
const inQuotes = (value: string) => sanitize(value).replace(/"/g, "\u201d").replace(/'/g, "\u2019").replace(/\\/g, "/");

/**
 * SCRIPT rewards' code with its placeholder bare (a complete literal: the exact value) and inside the code's own
 * strings, as VyHub's addons write them (`PLAYER:ChatPrint("Thanks, %nick%!")`), and a console command carried in a
 * Lua string (`game.ConsoleCommand("ulx psay \"%nick%\" …")`): what Lua prints, and how srcds would split it.
 */
const SCRIPTS: { code: string; out: (value: string) => string; console?: (value: string) => string[][] }[] = [
  { code: "io.write(%nick%)", out: (v) => Buffer.from(v, "utf8").toString("utf8") },
  { code: 'io.write("%nick%")', out: inQuotes },
  { code: "io.write('%nick%')", out: inQuotes },
  { code: 'io.write("thanks %nick%!")', out: (v) => `thanks ${inQuotes(v)}!` },
  {
    code: 'io.write("ulx psay \\"%nick%\\" thanks")',
    out: (v) => `ulx psay "${inQuotes(v)}" thanks`,
    console: (v) => [["ulx", "psay", inQuotes(v), "thanks"]],
  },
];

/** Runs the script with every hostile nick filled in: Lua must print what `script.out` says, and nothing else run. */
function expectText(script: (typeof SCRIPTS)[number]): void {
  const dir = mkdtempSync(join(tmpdir(), "hub-lua-"));
  try {
    for (const [i, value] of [...HOSTILE, ...LUA_HOSTILE].entries()) {
      // What a SCRIPT reward's code looks like with its placeholder filled by the preset's escaping.
      const { text } = fillTemplate(`${script.code} io.write("|end")`, { nick: value }, gmod.script!);
      const file = join(dir, `${i}.lua`);
      writeFileSync(file, text);
      const proc = Bun.spawnSync([lua!, file]);
      const out = proc.stdout.toString();
      expect({ value, out, err: proc.stderr.toString(), code: proc.exitCode }).toEqual({
        value,
        out: `${script.out(value)}|end`,
        err: "",
        code: 0,
      });
      if (script.console) expect(parseSourceConsole(out.slice(0, -"|end".length))).toEqual(script.console(value));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe.skipIf(!lua)(`string literals, checked by ${lua ?? "a Lua interpreter (install luajit)"}`, () => {
  for (const script of SCRIPTS) {
    test(`${script.code}: every hostile nick is that text, never code`, () => expectText(script));
  }

  test("a string Lua carries over a line break (\\z, a backslash before CR LF): the nick on the next line is text", () => {
    // `\z` skips the line break and the spaces after it (the nick's own too); a backslash takes CR LF as one.
    expectText({ code: 'io.write("thanks \\z\n  %nick%!")', out: (v) => `thanks ${inQuotes(v).trimStart()}!` });
    expectText({ code: 'io.write("thanks \\\r\n%nick%!")', out: (v) => `thanks \n${inQuotes(v)}!` });
  });

  test("a line comment ended by a CR alone: the nick in the string on the line after is text", () => {
    expectText({ code: '-- thanks\rio.write("%nick%")', out: inQuotes });
    // Garry's Mod's `//` comments too (LuaJIT has none to run): were one still open there, the nick would be in it.
    expect(fillTemplate('// thanks\rprint("%nick%")', { nick: 'M"l' }, gmod.script!).text).toBe(
      '// thanks\rprint("M\u201dl")',
    );
  });
});

describe("where no value can go in Lua", () => {
  test("a long string, a block comment, or right after a backslash: refused, naming the token and the fix", () => {
    const refused: [string, string][] = [
      ["print([[Thanks, %nick%]])", "sits inside a Lua long string"],
      ["print([==[ %nick% ]==])", "sits inside a Lua long string"],
      ["--[[ %nick% ]] print(1)", "sits inside a block comment"],
      ["--[=[ ]] %nick% ]=] print(1)", "sits inside a block comment"],
      ["/* %nick% */ print(1)", "sits inside a block comment"],
      ['print("\\%nick%")', "comes right after a backslash"],
    ];
    for (const [code, why] of refused) {
      expect(() => fillTemplate(code, { nick: "Mal" }, gmod.script!)).toThrow(`%nick% ${why}`);
    }
  });

  test("outside them: code, strings, line comments, and brackets that open no long string", () => {
    const fill = (code: string) => fillTemplate(code, { nick: 'M"l' }, gmod.script!).text;
    expect(fill('print("[[" .. %nick%)')).toBe('print("[[" .. "M\\"l")');
    expect(fill("t[%nick%] = 1")).toBe('t["M\\"l"] = 1');
    expect(fill("-- %nick%\nprint(%nick%)")).toBe('-- "M\\"l"\nprint("M\\"l")');
    expect(fill("print([[a]] .. '%nick%')")).toBe("print([[a]] .. 'M\u201dl')");
    expect(fill('print("a\\"b %nick%")')).toBe('print("a\\"b M\u201dl")');
    expect(fill("print([=[ ]] ]=] .. %nick%)")).toBe('print([=[ ]] ]=] .. "M\\"l")');
  });
});
