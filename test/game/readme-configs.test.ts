/**
 * Every configuration on the game pages (docs/games.md, docs/games/*.md), word for word (the password placeholder filled in): it
 * loads, names the section's preset, and a network console configured by it passes `doctor`'s game check against
 * that protocol's fake server, found on the port a test gives it. The real servers run their sections' configurations
 * in test/e2e/ (OpenArena, Nexuiz).
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../lib/app/config.ts";
import { checkGame } from "../../lib/game/doctor.ts";
import { PRESETS, type PresetName } from "../../lib/game/presets/index.ts";
import { docBlocks, gamePages, pageTitle } from "../support/docs.ts";
import { FakeDpServer } from "./transports/fake-dp-server.ts";
import { FakeEconServer } from "./transports/fake-econ-server.ts";
import { FakeQ3Server } from "./transports/fake-q3-server.ts";
import { FakeSourceRconServer } from "./transports/fake-source-rcon-server.ts";
import { FakeWebRconServer } from "./transports/fake-web-rcon-server.ts";

const PASSWORD = "secret"; // the fakes' password
const service = {
  HUB_API_URL: "https://api.example/x/v1",
  HUB_API_KEY: "k-0123456789",
  HUB_API_SERVER_ID: "541d1c41-1b58-40fc-8780-70c400ea5686",
};

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

/** The protocol's fake server, answering every command with nothing (so: no players online); none for other kinds. */
async function fakeFor(bridge: string, preset: string): Promise<{ port: number; close(): Promise<void> } | undefined> {
  const handler = () => "";
  switch (bridge) {
    case "rcon":
      return FakeSourceRconServer.start({ dialect: preset === "minecraft" ? "minecraft" : "source", handler });
    case "q3rcon":
      return FakeQ3Server.start({ handler });
    case "dprcon":
      return FakeDpServer.start({ handler, secure: 1 });
    case "webrcon":
      return FakeWebRconServer.start({ handler });
    case "econ":
      return FakeEconServer.start({ dialect: preset === "ddnet" ? "ddnet" : "teeworlds" });
    default:
      return undefined; // the wrapper, the simulated game, a kind that doesn't connect out: loading is the check
  }
}

const pages = ["docs/games.md", ...gamePages()];

describe("the game pages' configurations, word for word", () => {
  test("the game pages are found, with their TOML blocks", () => {
    expect(pages.length).toBeGreaterThanOrEqual(10);
    expect(pages.flatMap((p) => docBlocks(p)).filter((b) => b.lang === "toml").length).toBeGreaterThanOrEqual(16);
  });

  for (const page of pages) {
    // The presets the page's title names (Teeworlds and DDNet share a page): each block names one of them.
    const title = pageTitle(page);
    const presets = [...title.matchAll(/`preset = "(\w+)"`/g)].map((m) => m[1]);
    docBlocks(page)
      .filter((b) => b.lang === "toml")
      .forEach((block, i) => {
        test(`${page} (${title}): TOML block ${i + 1}`, async () => {
          const dir = mkdtempSync(join(tmpdir(), "hub-readme-"));
          const passwordFile = join(dir, "rcon-password");
          writeFileSync(passwordFile, `${PASSWORD}\n`);
          const text = block.text
            .replaceAll("<password>", PASSWORD)
            .replace(/^(password_file = )"[^"]*"/m, `$1${JSON.stringify(passwordFile)}`);
          writeFileSync(join(dir, "hub-agent.toml"), text);
          // A block without [game] (the overrides example) is a part of a configuration: given a game here.
          const fragment = !/^bridge = /m.test(text);
          const env = {
            ...service,
            HUB_CONFIG: join(dir, "hub-agent.toml"),
            ...(fragment ? { HUB_GAME_BRIDGE: "rcon", HUB_GAME_PRESET: "gmod", HUB_GAME_RCON_PASSWORD: PASSWORD } : {}),
          };
          const first = await loadConfig({ env, cwd: dir });
          if (!first.ok) throw new Error(first.problems.join("\n"));
          if (presets.length) expect(presets).toContain(first.config.game.preset as string);
          const bridge = first.config.game.bridge;
          // The port a comment gives ("port defaults to 25575", "the game port (27960)") is the preset's default.
          const said = [...text.matchAll(/#[^\n]*port[^\n]*?\b(\d{4,5})\b/g)].map((m) => Number(m[1]));
          const consoles = PRESETS[first.config.game.preset as PresetName]?.consoles as
            Record<string, { port: number } | undefined> | undefined;
          for (const port of said) expect(consoles?.[bridge]?.port).toBe(port);
          const fake = await fakeFor(bridge, first.config.game.preset ?? "");
          if (!fake) return; // the wrapped servers' own tests start them (test/e2e)
          cleanups.push(() => fake.close());
          const loaded = await loadConfig({ env: { ...env, HUB_GAME_RCON_PORT: String(fake.port) }, cwd: dir });
          if (!loaded.ok) throw new Error(loaded.problems.join("\n"));
          const [game] = await checkGame(loaded.config, { timeoutMs: 5000 });
          expect(game).toMatchObject({ name: "game", status: "ok" });
          expect(game!.message).toContain(`127.0.0.1:${fake.port}`);
          expect(game!.message).toContain("password accepted");
        });
      });
  }
});
