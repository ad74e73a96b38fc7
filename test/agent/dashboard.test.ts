import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dashboard } from "../../lib/features/dashboard.ts";
import { SEED_IDS } from "../../lib/sandbox/seed.ts";
import { startSandbox } from "../../lib/sandbox/index.ts";
import type { SimAction } from "../../lib/game/sim.ts";
import { binary, hubBinary } from "../cli/binary.ts";
import { harness, until, type Harness } from "./harness.ts";

const alice = { id: SEED_IDS.steamid64.alice, name: "Alice" };
let h: Harness;
afterEach(() => h?.close());
const toAlice = () =>
  h.sim
    .actionsOf("message")
    .filter((a: SimAction) => a.player === alice.id)
    .map((a: SimAction) => a.text);

describe("dashboard (rule 17)", () => {
  test("!dashboard answers the player with {frontend_url}/server-dashboard/<server_id>", async () => {
    h = await harness({ features: [dashboard] });
    await h.agent.start();
    h.sim.join(alice);
    h.sim.chat(alice.id, "!dashboard");
    await until(() => toAlice().length === 1, "the answer");
    expect(toAlice()).toEqual([`Server dashboard: https://community.example.org/server-dashboard/${h.sb.serverId}`]);
  });

  test("api.web_url wins; the command name is configurable; the console gets the link in the log", async () => {
    h = await harness({
      features: [dashboard],
      env: { HUB_API_WEB_URL: "https://play.example.net/", HUB_COMMANDS_DASHBOARD: "dash" },
    });
    await h.agent.start();
    h.sim.join(alice);
    h.sim.chat(alice.id, "!dashboard"); // not the configured name: ignored
    h.sim.chat(alice.id, "!dash");
    await until(() => toAlice().length === 1, "the answer");
    expect(toAlice()).toEqual([`Server dashboard: https://play.example.net/server-dashboard/${h.sb.serverId}`]);
    h.sim.operatorInput("dash");
    await until(() => h.logger.lines.some((l) => l.tag === "console"), "the console answer");
    expect(h.logger.lines.find((l) => l.tag === "console")?.msg).toContain(
      "https://play.example.net/server-dashboard/",
    );
    expect(h.sb.control.requests({ path: "/general/frontend-url" })).toEqual([]);
  });

  test("the service's address is cached: the link still works while the service is down", async () => {
    h = await harness({ features: [dashboard] });
    await h.agent.start();
    h.sim.join(alice);
    h.sim.chat(alice.id, "!dashboard");
    await until(() => toAlice().length === 1, "the first answer");
    await h.sb.control.down();
    h.sim.chat(alice.id, "!dashboard");
    await until(() => toAlice().length === 2, "the second answer");
    expect(toAlice()[1]).toBe(toAlice()[0]);
  });
});

describe("hub-agent dashboard (compiled binary)", () => {
  beforeAll(() => binary(), 120_000);

  test("prints the link, --json gives url and source; without web_url and service it exits 4 with a fix", async () => {
    const sb = await startSandbox();
    const env = {
      HUB_API_URL: sb.url,
      HUB_API_KEY: sb.key,
      HUB_API_SERVER_ID: sb.serverId,
      HUB_GAME_BRIDGE: "sim",
      HUB_STORAGE_DIR: mkdtempSync(join(tmpdir(), "hub-dash-")),
    };
    try {
      const r = await hubBinary(["dashboard"], { env });
      expect(r).toMatchObject({ code: 0, stdout: `https://community.example.org/server-dashboard/${sb.serverId}\n` });
      const j = await hubBinary(["dashboard", "--json"], { env });
      expect(JSON.parse(j.stdout)).toEqual({
        url: `https://community.example.org/server-dashboard/${sb.serverId}`,
        source: "api",
      });
      const fresh = { ...env, HUB_STORAGE_DIR: mkdtempSync(join(tmpdir(), "hub-dash-")) };
      await sb.control.down();
      const down = await hubBinary(["dashboard"], { env: fresh });
      expect(down.code).toBe(4);
      expect(down.stderr).toContain("set api.web_url");
      expect(down.stderr.trim().split("\n")).toHaveLength(1);
      const cached = await hubBinary(["dashboard", "--json"], { env });
      expect(JSON.parse(cached.stdout).source).toBe("cache");
      expect(`${r.stdout}${r.stderr}${down.stderr}`).not.toContain(sb.key);
    } finally {
      await sb.stop();
    }
  }, 60_000);
});
