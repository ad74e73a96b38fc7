/**
 * Any console hub-agent has no preset for (docs/game-consoles.md §5.8): the operator describes it in
 * `[game.overrides]` — the list command and its row pattern (required), how a reply ends on a wrapped console
 * (`echo`, `list_end` or `reply_quiet`), the escaping, and the line patterns and command templates the game has.
 *
 * Identity: whatever the row pattern's `id` group holds, as printed (trimmed), else the player's name; the user type
 * is CENTRAL unless overridden. Values are escaped with `strip` until the operator picks a mode their console takes.
 */
import { knownByName, trimmed } from "./by-name.ts";
import { stripForAnyConsole } from "./escape.ts";
import { NO_QUOTES } from "./quoting.ts";
import type { ConsoleDefaults, Preset } from "./types.ts";

/** Every network console, without a default port: `game.rcon.port` must say where it is (config validation). */
const ANY_PORT = (kind: string): ConsoleDefaults => ({
  port: 0,
  enable: `turn on the game's ${kind} console, and set game.rcon.port to its port`,
});

export const generic: Preset = {
  name: "generic",
  title: "generic console",
  ...knownByName(trimmed),
  colours: "strip",
  commandPrefix: "!",
  consoles: Object.fromEntries(["rcon", "q3rcon", "dprcon", "webrcon", "econ"].map((k) => [k, ANY_PORT(k)])),
  lines: {},
  // Replaced by game.overrides.list_command and list_row, which config validation requires for this preset.
  list: { command: "", parse: () => ({ players: [] }) },
  commands: {},
  escape: stripForAnyConsole,
  quoting: NO_QUOTES,
};
