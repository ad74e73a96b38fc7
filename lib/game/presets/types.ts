import type { ColourMode } from "../bridge.ts";
import type { Quoting } from "./quoting.ts";
import type { TemplateValues } from "./template.ts";

/**
 * What a console or log line can tell. Named groups the bridge reads: `id`, `name`, `slot` (the player),
 * `killer_id`, `killer_name`, `killer_slot` (death), `text` (chat), `reason` (disconnect), `group` (group lines).
 * - `identity`: ties a slot or name to an id without an event (Minecraft "UUID of player", srcds "validated",
 *   Quake 3 userinfo); a connect waiting for its id completes here.
 * - `group_add` / `group_remove`: a group change made in the game. No preset ships one: the formats we know put
 *   player-chosen text where a chat line could forge them. Anchor your own carefully.
 */
export const LINE_KINDS = [
  "ready",
  "identity",
  "connect",
  "disconnect",
  "spawn",
  "death",
  "chat",
  "group_add",
  "group_remove",
] as const;
export type LineKind = (typeof LINE_KINDS)[number];

export const COMMAND_KINDS = [
  "kick",
  "message",
  "broadcast",
  "group_add",
  "group_remove",
  "group_add_temp",
  "stop",
] as const;
export type CommandKind = (typeof COMMAND_KINDS)[number];

/** One row of the player list; `id` is already normalised, and missing when the game doesn't print one. */
export interface ListedPlayer {
  id?: string;
  name: string;
  slot?: string;
  extra?: Record<string, unknown>;
}

export interface PlayerList {
  players: ListedPlayer[];
  maxPlayers?: number;
  map?: string;
}

/** A network console's defaults in a preset. `dialect`: a variant of the protocol (Source RCON: `minecraft`). */
export interface ConsoleDefaults {
  port: number;
  enable: string;
  dialect?: string;
}

/**
 * A game: everything the composed bridge needs to know about one game's console, as data and small pure
 * functions. Operators override the data fields in config (`[game.overrides]`); the functions stay.
 */
export interface Preset {
  /** `game.preset`: its key in PRESETS (./index.ts), which test/game/presets/common.test.ts holds it to. */
  name: string;
  title: string;
  /** The service's user type for this game's ids (docs/service-api.md §2.2). */
  userType: string;
  /** VyHub's server type made for this game, if it has one (lib/game/server-type.ts; `doctor` checks the record's). */
  serverType?: string;
  /** `platform`: ids come from the game (SteamID64, UUID). `name`: the game has none, the player's name is the id. */
  identity: "platform" | "name";
  /** A raw id as printed (any Steam form, a UUID, a name) → the service's identifier, or undefined (bots, pending). */
  normaliseId(raw: string): string | undefined;
  /** A name as printed → as shown (colour codes removed). */
  cleanName(raw: string): string;
  /** The id-derived placeholders of a player (`{steam2}`, `{uuid}`, …). */
  idValues(id: string): TemplateValues;
  /** Whether a player can hold several in-game groups at once (else setting one replaces the other). */
  multiGroup: boolean;
  /** How advert colour tags render in this game's chat. */
  colours: ColourMode;
  /** Chat lines starting with this are commands (`!dashboard`). */
  commandPrefix: string;
  /** Reported when the player list doesn't say; 0 when unknown. */
  maxPlayers?: number;
  /**
   * The network consoles this game speaks, by `game.bridge` kind (`rcon`, `q3rcon`, …): each one's default port
   * and how to turn it on (for doctor's fixes). A kind missing here is one the game doesn't have.
   */
  consoles: Partial<Record<string, ConsoleDefaults>>;
  /** Checked in this order; the first kind with a matching pattern wins. */
  lines: Partial<Record<LineKind, RegExp[]>>;
  /**
   * A console that prints a player's chat as `<prefix><name>: <text>` beside event lines that no chat line can be
   * kept from copying (srcds with sv_logecho: a name can be the log's date prefix): what may come before the name.
   * A line starting with a name a player went by, so prefixed or not, is no event (docs/game-consoles.md §8).
   */
  consoleChat?: RegExp;
  /**
   * `until`: the reply's last line, for a wrapped console without `echo` (Minecraft); `start`: the line after which
   * `until` counts (a list framed by the same line above and below its rows).
   */
  list: { command: string; parse(reply: string): PlayerList; until?: RegExp; start?: RegExp };
  /** A console command printing `marker` on its own line, which ends a reply on the wrapped console. */
  echo?: (marker: string) => string;
  /**
   * The wrapped console reads its stdin in pieces of at most this many bytes, each run as it is (ioq3: 256), so a
   * line cut at a piece's end would run its rest as a command of its own; the wrapper never lets that happen.
   */
  stdinReadBytes?: number;
  /**
   * A wrapped console without `echo`: a reply ends once the server printed nothing for this long (ms). Without it
   * (and without `list.until`) commands there are fire-and-forget.
   */
  replyQuietMs?: number;
  /** Missing commands are things the game can't do (the bridge refuses them with a clear error). */
  commands: Partial<Record<CommandKind, string>>;
  /** One value → one argument of one command on this console (GameBridge.escape). */
  escape(value: string): string;
  /** How this console reads quotes, and a value's form inside a template's quotes (lib/game/presets/quoting.ts). */
  quoting: Quoting;
  /** SCRIPT rewards, where the game has a script console: values as string literals, and the lines that run code. */
  script?: {
    escape(value: string): string;
    /** How the script language reads quotes (and where no value may go). */
    quoting: Quoting;
    /** The console lines that run `code`; only the last one runs it. `tag` is unique per run. */
    lines(code: string, player: { id: string } | null, tag: string): string[];
  };
}
