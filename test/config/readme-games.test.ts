/**
 * Every TOML configuration in the operator documentation (README.md and every page of docs/) is valid as written:
 * they are what operators copy. test/game/readme-configs.test.ts also runs the game pages' ones against each
 * protocol's fake server.
 */
import { expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../lib/app/config.ts";
import { docBlocks, pages } from "../support/docs.ts";

const blocks = pages().flatMap((page) =>
  docBlocks(page)
    // A server's file of servers.d is loaded as one, over a shared file: test/config/servers.test.ts.
    .filter((b) => b.lang === "toml" && !/^# \S*\/servers\.d\/\S+\.toml$/m.test(b.text))
    .map((b, i) => ({ where: `${page}, TOML block ${i + 1}`, text: b.text })),
);
const env = {
  HUB_API_URL: "https://api.vyhub.app/demo/v1",
  HUB_API_KEY: "k-0123456789",
  HUB_API_SERVER_ID: "541d1c41-1b58-40fc-8780-70c400ea5686",
};

test("the docs' TOML blocks are found: the game pages', the plugin protocol's", () => {
  const where = blocks.map((b) => b.where);
  expect(where.filter((w) => w.startsWith("docs/games/")).length).toBeGreaterThanOrEqual(15);
  expect(where).toContain("docs/games.md, TOML block 1");
  expect(where).toContain("docs/plugin-protocol.md, TOML block 1");
});

for (const block of blocks) {
  test(`${block.where} loads without a problem`, async () => {
    const dir = mkdtempSync(join(tmpdir(), "hub-readme-"));
    const password = join(dir, "rcon-password");
    writeFileSync(password, "from-a-file\n");
    const file = join(dir, "hub-agent.toml");
    // A snippet without its [game] table (the overrides) is checked as part of an rcon bridge.
    const head = /^\[game\]$/m.test(block.text)
      ? ""
      : '[game]\nbridge = "rcon"\npreset = "cs2"\n[game.rcon]\npassword = "x"\n';
    writeFileSync(file, head + block.text.replace("/etc/hub-agent/rcon-password", password));
    const r = await loadConfig({ env, cwd: dir, file });
    if (!r.ok) throw new Error(`${block.text}\n→ ${r.problems.join("\n")}`);
  });
}
