/** The simulated game's churn mode: generated players coming and going, distinct players over time, bounded memory. */
import { expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ManualClock } from "../../lib/clock.ts";
import { loadConfig } from "../../lib/app/config.ts";
import type { BridgeEvent } from "../../lib/game/bridge.ts";
import { createBridge } from "../../lib/game/index.ts";
import { GENERATED_ID_BASE, SimGame } from "../../lib/game/sim.ts";
import { silentLogger } from "../../lib/log.ts";

const steam = (k: number) => String(GENERATED_ID_BASE + BigInt(k));

test("online from the start, churn a second replaced (longest online first), distinct ids in turn", async () => {
  const clock = new ManualClock();
  const sim = new SimGame({ clock, maxPlayers: 10, churn: { online: 5, churn: 2, distinct: 8 } });
  const events: BridgeEvent[] = [];
  sim.on((e) => events.push(e));
  expect(sim.online().map((p) => p.id)).toEqual([0, 1, 2, 3, 4].map(steam));
  expect(sim.online()[0]!.name).toBe("Player0");
  await sim.start();
  await clock.advance(1000);
  const moves = events
    .filter((e) => e.type !== "ready")
    .map((e) => `${e.type === "player_connect" ? "+" : "-"}${"player" in e ? e.player.name : ""}`);
  expect(moves).toEqual(["-Player0", "+Player5", "-Player1", "+Player6"]);
  await clock.advance(2000); // 4 more: Player7, then the pool starts over with Player0, 1 and 2
  expect(sim.online().map((p) => p.name)).toEqual(["Player6", "Player7", "Player0", "Player1", "Player2"]);
  expect(sim.generatedJoins).toBe(11);
  expect(sim.distinctPlayers).toBe(8);
  await sim.stop();
  await clock.advance(10_000);
  expect(sim.generatedJoins).toBe(11); // stopped
});

test("a fraction a second is carried over; a kicked player's slot is filled; distinct 0 is every join new", async () => {
  const clock = new ManualClock();
  const sim = new SimGame({ clock, maxPlayers: 10, churn: { online: 3, churn: 0.25, distinct: 0 } });
  await sim.start();
  await clock.advance(3900);
  expect(sim.generatedJoins).toBe(3);
  await clock.advance(100);
  expect(sim.generatedJoins).toBe(4);
  await sim.kick(sim.online()[0]!, "banned");
  await clock.advance(4000);
  expect(sim.online()).toHaveLength(3);
  expect(sim.distinctPlayers).toBe(sim.generatedJoins);
  expect(() => new SimGame({ clock, churn: { online: 5, churn: 1, distinct: 5 } })).toThrow("must be larger");
  await sim.stop();
});

test("[game.sim] online, churn and distinct: read from the configuration, refused when they can't work", async () => {
  const dir = mkdtempSync(join(tmpdir(), "hub-sim-"));
  const file = join(dir, "hub-agent.toml");
  const base =
    '[api]\nurl = "http://127.0.0.1:1/v1"\nkey = "k"\nserver_id = "541d1c41-1b58-40fc-8780-70c400ea5686"\n[game]\nbridge = "sim"\n';
  writeFileSync(file, `${base}[game.sim]\nonline = 50\nchurn = 1.5\ndistinct = 1000\n`);
  const ok = await loadConfig({ env: {}, cwd: dir });
  if (!ok.ok) throw new Error(ok.problems.join("\n"));
  expect(ok.config.game.sim).toMatchObject({ online: 50, churn: 1.5, distinct: 1000 });
  const sim = (await createBridge(ok.config, { clock: new ManualClock(), logger: silentLogger })) as SimGame;
  expect(sim.online()).toHaveLength(50);
  expect(sim.maxPlayers).toBe(50);

  const refused = async (env: Record<string, string>) => {
    writeFileSync(file, base);
    const r = await loadConfig({ env, cwd: dir });
    return r.ok ? [] : r.problems;
  };
  expect((await refused({ HUB_GAME_SIM_ONLINE: "10", HUB_GAME_SIM_DISTINCT: "10" })).join("\n")).toContain(
    "game.sim.distinct must be larger than game.sim.online",
  );
  expect((await refused({ HUB_GAME_SIM_CHURN: "-1" })).join("\n")).toContain("game.sim.churn");
  expect((await refused({ HUB_GAME_SIM_ONLINE: "2.5" })).join("\n")).toContain("must be a whole number of players");
});

test("the sim made from the configuration keeps only its latest 1,000 actions in memory", async () => {
  const clock = new ManualClock();
  const sim = new SimGame({ clock, maxActions: 1000 });
  for (let i = 0; i < 5000; i++) await sim.exec(`say ${i}`);
  expect(sim.actions.length).toBeLessThanOrEqual(2000);
  expect(sim.actions.at(-1)?.command).toBe("say 4999");
});
