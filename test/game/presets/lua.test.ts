/**
 * Garry's Mod SCRIPT rewards (lib/game/presets/lua.ts): every console line is one `lua_run` command the way srcds
 * splits them, within the engine's 512 bytes; the code arrives whole; and a hostile value substituted into the code
 * stays one string literal — checked by a real Lua interpreter (LuaJIT, what Garry's Mod runs, else Lua 5.1).
 */
import { describe, expect, test } from "bun:test";
import { Buffer } from "node:buffer";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
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

describe.skipIf(!lua)(`string literals, checked by ${lua ?? "a Lua interpreter (install luajit)"}`, () => {
  test("a hostile value substituted into the code is exactly that value, never code", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hub-lua-"));
    for (const [i, value] of HOSTILE.entries()) {
      // What a SCRIPT reward's code looks like with its placeholder filled by the preset's escaping.
      const { text } = fillTemplate('io.write(%nick%) io.write("|end")', { nick: value }, gmod.script!);
      const file = join(dir, `${i}.lua`);
      writeFileSync(file, text);
      const proc = Bun.spawnSync([lua!, file]);
      expect({ value, out: proc.stdout.toString(), err: proc.stderr.toString() }).toEqual({
        value,
        out: `${Buffer.from(value, "utf8").toString("utf8")}|end`,
        err: "",
      });
    }
  });
});
