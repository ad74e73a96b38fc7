/** The per-game configurations the README shows are valid as written (they are what operators copy). */
import { expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../lib/config/index.ts";

const readme = readFileSync(join(import.meta.dir, "..", "..", "README.md"), "utf8");
const games = readme.slice(readme.indexOf("## Games"), readme.indexOf("## Architecture"));
const blocks = [...games.matchAll(/```toml\n([\s\S]*?)```/g)].map((m) => m[1]!);
const env = {
  HUB_API_URL: "https://api.vyhub.app/demo/v1",
  HUB_API_KEY: "k-0123456789",
  HUB_API_SERVER_ID: "541d1c41-1b58-40fc-8780-70c400ea5686",
  HUB_GAME_BRIDGE: "sim",
};

test("every TOML example in the README's Games section loads without a problem", async () => {
  expect(blocks.length).toBeGreaterThanOrEqual(8);
  for (const block of blocks) {
    const dir = mkdtempSync(join(tmpdir(), "hub-readme-"));
    const password = join(dir, "rcon-password");
    writeFileSync(password, "from-a-file\n");
    const file = join(dir, "hub-agent.toml");
    // A snippet without its [game] table (the overrides) is checked as part of an rcon bridge.
    const head = /^\[game\]$/m.test(block)
      ? ""
      : '[game]\nbridge = "rcon"\npreset = "cs2"\n[game.rcon]\npassword = "x"\n';
    writeFileSync(file, head + block.replace("/etc/hub-agent/rcon-password", password));
    const r = await loadConfig({ env, cwd: dir, file });
    if (!r.ok) throw new Error(`${block}\n→ ${r.problems.join("\n")}`);
  }
});
