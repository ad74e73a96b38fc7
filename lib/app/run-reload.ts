/**
 * A `run`'s reload (SIGHUP): the configuration read and checked again, and what of it can change live. The running
 * agent is then served again with it (lib/app/run-serve.ts); the game bridge and the instance lock stay.
 */
import { changedKeys } from "../config/changes.ts";
import type { Config, LoadResult } from "./config.ts";
import type { Logger } from "../log.ts";

/**
 * Keys the game bridge was built from (lib/game/index.ts createBridge) and the store's place: a reload keeps their
 * running values, since changing them means a new bridge (a wrapped server restarted) or another store.
 */
const RESTART_ONLY = [/^game\./, /^storage\./, /^intervals\.player_poll$/, /^commands\.(ban|unban|warn|warns)$/];

/** The keys that changed and only a restart applies (a host restarts that one server's agent: lib/app/host.ts). */
export const restartOnlyChanges = (running: Config, next: Config): string[] =>
  changedKeys(running, next).filter((k) => RESTART_ONLY.some((re) => re.test(k)));

/**
 * The configuration read and checked again, told in one line: not valid (the running one stays), unchanged, or what
 * is applied and what only a restart applies. Returns the configuration to serve next (the new one with the
 * restart-only keys as they run), or undefined; `apply` false (`run --once`) only checks.
 */
export async function reloadable(
  reread: () => Promise<LoadResult>,
  running: Config,
  logger: Logger,
  apply = true,
): Promise<Config | undefined> {
  const result = await reread().catch((e: unknown) => ({ ok: false as const, problems: [String(e)], file: undefined }));
  const where = result.file ?? "the environment";
  if (!result.ok) {
    // A TOML error's excerpt (`| line`, `| caret`) is part of its problem, not more problems.
    const count = result.problems.filter((p) => !p.startsWith("| ")).length;
    const more = count > 1 ? ` (and ${count - 1} more: see hub-agent doctor)` : "";
    logger.warn(`SIGHUP: ${where} is not valid, the running configuration stays: ${result.problems[0]}${more}`);
    return undefined;
  }
  const changed = changedKeys(running, result.config);
  if (!changed.length) {
    logger.info(`SIGHUP: ${where} is valid and unchanged`);
    return undefined;
  }
  const list = (keys: string[]) =>
    keys.length > 8 ? `${keys.slice(0, 8).join(", ")} and ${keys.length - 8} more` : keys.join(", ");
  const later = changed.filter((k) => RESTART_ONLY.some((re) => re.test(k)));
  const now = apply ? changed.filter((k) => !later.includes(k)) : [];
  const restart = (keys: string[]) => `${list(keys)} apply only at a restart (systemctl restart hub-agent)`;
  if (!now.length) {
    logger.warn(`SIGHUP: ${where} is valid; the running configuration stays: ${restart(apply ? later : changed)}`);
    return undefined;
  }
  logger.info(
    `SIGHUP: ${where} is valid; applying ${list(now)} (the agent starts again, the game bridge keeps running)` +
      (later.length ? `; ${restart(later)}` : ""),
  );
  const c = result.config;
  const { ban, unban, warn, warns } = running.commands;
  return {
    ...c,
    game: running.game,
    storage: running.storage,
    intervals: { ...c.intervals, player_poll: running.intervals.player_poll },
    commands: { ...c.commands, ban, unban, warn, warns },
  };
}
