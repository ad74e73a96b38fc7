/**
 * `hub-agent doctor`'s game checks: the console, by its kind (lib/game/kinds/: can hub-agent reach it, is the
 * password right, does the player list answer; can it start the server), and whether the log file is there.
 */
import { constants } from "node:fs";
import { access } from "../fsio.ts";
import type { GameSettings } from "./settings.ts";
import type { Check } from "../check.ts";
import { systemClock } from "../clock.ts";
import { silentLogger } from "../log.ts";
import { configuredKind } from "./index.ts";

export async function checkGame(config: GameSettings, opts: { timeoutMs?: number } = {}): Promise<Check[]> {
  const { kind, input } = configuredKind(config, { clock: systemClock, logger: silentLogger });
  const checks = [await kind.check(input, { timeoutMs: opts.timeoutMs ?? 5000 })];
  if (config.game.log_file) checks.push(await checkLogFile(config.game.log_file));
  return checks;
}

async function checkLogFile(path: string): Promise<Check> {
  try {
    await access(path, constants.R_OK);
    return { name: "log", status: "ok", message: `${path} is readable; hub-agent follows it from its end` };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const missing = code === "ENOENT";
    return {
      name: "log",
      status: missing ? "warn" : "fail",
      message: missing ? `${path} does not exist yet; hub-agent waits for it` : `${path} cannot be read (${code})`,
      fix: missing
        ? "check game.log_file, and that the game writes that log (Minecraft: logs/latest.log; srcds: log on; OpenArena: g_log)"
        : "give the user running hub-agent read access to the log",
      ...(missing ? {} : { kind: "failure" }),
    };
  }
}
