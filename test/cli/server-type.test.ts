/**
 * `doctor` holds the server's record at VyHub to the configured game: a GMOD server with the `openarena` preset
 * (the first hour's surprise, issue 21) is a warning with the fix, a matching type says nothing more.
 */
import { expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Sandbox } from "../../lib/sandbox/index.ts";
import { hub } from "./binary.ts";
import { useSandbox } from "../support/sandbox.ts";

let sb: Sandbox;
useSandbox((s) => (sb = s));

const env = (game: Record<string, string>) => ({
  HUB_API_URL: sb.url,
  HUB_API_KEY: sb.key,
  HUB_API_SERVER_ID: sb.serverId,
  HUB_STORAGE_DIR: mkdtempSync(join(tmpdir(), "hub-type-")),
  // A console nobody answers at: the game's check fails, the server's is what this test reads.
  HUB_GAME_RCON_HOST: "127.0.0.1",
  HUB_GAME_RCON_PORT: "9",
  HUB_GAME_RCON_PASSWORD: "secret-pw",
  HUB_GAME_Q3RCON_HOST: "127.0.0.1",
  HUB_GAME_Q3RCON_PORT: "9",
  HUB_GAME_Q3RCON_PASSWORD: "secret-pw",
  ...game,
});
const serverLines = (out: string) =>
  out
    .split("\n")
    .filter((l, i, all) => /^. server /.test(l) || (l.startsWith("  fix:") && /^. server /.test(all[i - 1] ?? "")));

test("a GMOD server record with the openarena preset: doctor warns, naming the type to choose and where", async () => {
  const r = await hub(["doctor"], { env: env({ HUB_GAME_BRIDGE: "q3rcon", HUB_GAME_PRESET: "openarena" }) });
  const lines = serverLines(r.stdout);
  expect(lines[0]).toStartWith("✔ server   key accepted; server");
  expect(lines.slice(1)).toEqual([
    `! server   the server's type at VyHub is GMOD (Garry's Mod's), but game.preset = "openarena" (OpenArena (ioquake3)) has no type of its own: VyHub's SOURCE suits it`,
    expect.stringMatching(/^ {2}fix: create the server in VyHub with the type SOURCE .*docs\/games\.md/),
  ]);
});

test("a type that suits the preset adds no line", async () => {
  const r = await hub(["doctor"], { env: env({ HUB_GAME_BRIDGE: "rcon", HUB_GAME_PRESET: "gmod" }) });
  expect(serverLines(r.stdout)).toEqual([expect.stringMatching(/^✔ server {3}key accepted; server .*\(GMOD\)/)]);
});

test("a Minecraft preset on the GMOD record: the preset's own type is named", async () => {
  const r = await hub(["doctor"], { env: env({ HUB_GAME_BRIDGE: "rcon", HUB_GAME_PRESET: "minecraft" }) });
  expect(serverLines(r.stdout).slice(1)).toEqual([
    `! server   the server's type at VyHub is GMOD (Garry's Mod's), but game.preset = "minecraft" (Minecraft (vanilla/Paper + LuckPerms)) is MINECRAFT's`,
    expect.stringMatching(/^ {2}fix: create the server in VyHub with the type MINECRAFT /),
  ]);
});
