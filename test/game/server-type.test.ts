import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PRESET_NAMES, resolvePreset } from "../../lib/game/presets/index.ts";
import { checkServerType, serverTypesFor } from "../../lib/game/server-type.ts";

const types = (name: string, userType?: string) =>
  serverTypesFor(resolvePreset(name, userType ? { user_type: userType } : {}));

describe("the server type that suits a preset", () => {
  test("a game's own type; SOURCE for a game VyHub has none for; by user type for the generic preset", () => {
    expect(types("gmod")).toEqual(["GMOD"]);
    expect(types("minecraft")).toEqual(["MINECRAFT"]);
    expect(types("rust")).toEqual(["RUST"]);
    expect(types("cs2")).toEqual(["SOURCE"]);
    for (const name of ["openarena", "teeworlds", "ddnet", "xonotic", "generic"])
      expect(types(name)).toEqual(["SOURCE"]);
    expect(types("generic", "STEAM")).toEqual(["GMOD", "RUST", "SEVEN_DAYS", "SOURCE"]);
    expect(types("generic", "MINECRAFT")).toEqual(["MINECRAFT"]);
  });

  test("doctor's warning: none when the type suits, else the type to choose", () => {
    expect(checkServerType(resolvePreset("gmod"), "GMOD")).toBeUndefined();
    expect(checkServerType(resolvePreset("openarena"), "SOURCE")).toBeUndefined();
    expect(checkServerType(resolvePreset("generic", { user_type: "STEAM" }), "RUST")).toBeUndefined();
    const warned = checkServerType(resolvePreset("generic", { user_type: "STEAM" }), "MINECRAFT");
    expect(warned?.status).toBe("warn");
    expect(warned?.message).toBe(
      `the server's type at VyHub is MINECRAFT (Minecraft's), but game.preset = "generic" (generic console) knows players by STEAM ids: GMOD, RUST, SEVEN_DAYS or SOURCE suit it`,
    );
    expect(warned?.fix).toStartWith("create the server in VyHub with the type GMOD ");
  });

  test("docs/games.md names, for every preset, the type doctor asks for", () => {
    const page = readFileSync(join(import.meta.dir, "..", "..", "docs", "games.md"), "utf8");
    const section = page.slice(page.indexOf("## The server at VyHub"), page.indexOf("## Wrapping the server"));
    const documented = new Map<string, string>();
    for (const row of section.split("\n").filter((l) => l.startsWith("| ") && !l.startsWith("| game"))) {
      const [, presets = "", type = ""] = row.split("|").slice(1, -1);
      for (const [, name] of presets.matchAll(/`(\w+)`/g)) documented.set(name!, type.trim().replaceAll("`", ""));
    }
    expect(Object.fromEntries(documented)).toEqual(
      Object.fromEntries(PRESET_NAMES.map((name) => [name, types(name)[0] as string])),
    );
  });
});
