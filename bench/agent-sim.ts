/**
 * The agent of `hub-agent run` over a simulated game with N players online, for bench/load.ts. Compiled with the
 * flags of `npm run build`. Settings come from the environment: HUB_* as for `run`, plus BENCH_PLAYERS and
 * BENCH_SECONDS (it stops itself, so GNU time can report on it).
 */
import { runAgent } from "../cli/commands/run.ts";
import { createLogger } from "../cli/log.ts";
import { systemClock as clock } from "../lib/clock.ts";
import { loadConfig } from "../lib/config/index.ts";
import { SimGame } from "../lib/game/sim.ts";

const players = Number(process.env.BENCH_PLAYERS ?? 0);
const seconds = Number(process.env.BENCH_SECONDS ?? 60);
const loaded = await loadConfig({ env: process.env, cwd: process.cwd() });
if (!loaded.ok) throw new Error(loaded.problems.join("\n"));
const logger = createLogger({ format: "pretty", quiet: true, redact: (s) => s });
const sim = new SimGame({ clock, maxPlayers: Math.max(players, 1), map: "bench_map" });
for (let i = 0; i < players; i++) sim.join({ id: String(76561198400000000n + BigInt(i)), name: `Player${i}` });
const until = new Promise<void>((r) => setTimeout(r, seconds * 1000));
process.exitCode = await runAgent({ config: loaded.config, bridge: sim, clock, logger, until });
