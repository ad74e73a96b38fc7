import * as v from "valibot";
import { DEFAULT_MAX_RESPONSE_BYTES } from "../api/errors.ts";
import { DEFAULT_STORAGE_DIR } from "./file.ts";
import type { GameVocabulary } from "./vocabulary.ts";

/**
 * The configuration schema is the one source of truth: the loader derives every HUB_* environment
 * variable from it, `hub-agent init` renders its template from it, and its messages are what an operator
 * reads when a value is wrong.
 */

/** The longest interval: a week. Longer is a typo, not a schedule (and "never" is spelled 0 where it exists). */
export const MAX_INTERVAL_SECONDS = 7 * 86_400;

// Schemas are immutable values: a part used for many keys is built once and shared. Every command that reads the
// configuration builds this whole schema first, so its size is start-up time (docs/performance.md).

/**
 * A number, or a numeric string (environment variables arrive as strings), made a number; anything else is left as
 * it is for the key's own v.number(message) to refuse, so an empty string, `true` or a table gets the key's sentence.
 */
const NUMBER_OR_STRING = v.pipe(
  v.unknown(),
  v.transform((x) => (typeof x === "string" && x.trim() !== "" ? Number(x) : x)),
);

/** A number; environment variables arrive as strings, so numeric strings are accepted too. */
const numeric = (message: string) => v.pipe(NUMBER_OR_STRING, v.number(message));

const MAX_INTERVAL = v.maxValue<number, number, string>(
  MAX_INTERVAL_SECONDS,
  `must be at most ${MAX_INTERVAL_SECONDS} seconds (7 days)`,
);
const SECONDS = v.pipe(
  numeric("must be a number of seconds"),
  v.gtValue(0, "must be a positive number of seconds"),
  MAX_INTERVAL,
);

/** A number of seconds up to MAX_INTERVAL_SECONDS; `off`: 0 is allowed too and means "never" (what for, in `off`). */
const seconds = (fallback: number, off?: string) =>
  v.optional(
    off
      ? v.pipe(
          numeric("must be a number of seconds"),
          v.minValue(0, `must be a number of seconds, or 0 to switch ${off} off`),
          MAX_INTERVAL,
        )
      : SECONDS,
    fallback,
  );

const BOOL_HELP = "must be true or false";
const BOOL = v.pipe(
  v.union(
    [v.boolean(), v.pipe(v.string(), v.toLowerCase(), v.picklist(["true", "false", "1", "0", "yes", "no"], BOOL_HELP))],
    BOOL_HELP,
  ),
  v.transform((x) => x === true || x === "true" || x === "1" || x === "yes"),
);
const bool = (fallback: boolean) => v.optional(BOOL, fallback);

const text = (message: string) => v.pipe(v.string(message), v.trim(), v.nonEmpty(message));

const port = v.pipe(
  NUMBER_OR_STRING,
  v.number("must be a port number"),
  v.integer("must be a port number (1-65535)"),
  v.minValue(1, "must be a port number (1-65535)"),
  v.maxValue(65535, "must be a port number (1-65535)"),
);

/** A user or group as `getent` takes it: a name (useradd's rules) or a number. */
const account = (what: string, example: string) =>
  v.pipe(
    v.string(`must be a ${what} name or number, e.g. "${example}"`),
    v.trim(),
    v.regex(/^(?:[A-Za-z_][\w.-]*\$?|\d+)$/, `must be a ${what} name or number, e.g. "${example}"`),
  );

const COMMAND_LINE_HELP =
  'must be the server and its arguments as an array of strings, e.g. ["./srcds_run", "-game", "garrysmod"] (in HUB_GAME_WRAPPER_COMMAND: the same as JSON)';

/** An argv array; from the environment it arrives as a JSON array. */
const commandLine = v.pipe(
  v.union([
    v.array(v.unknown()),
    v.pipe(
      v.string(),
      v.transform((s): unknown => {
        try {
          return JSON.parse(s);
        } catch {
          return s;
        }
      }),
    ),
  ]),
  // One check for the whole value, so the problem names the key rather than an array index.
  v.custom<string[]>(
    (x) => Array.isArray(x) && x.every((a) => typeof a === "string") && (x[0] ?? "").trim() !== "",
    COMMAND_LINE_HELP,
  ),
);

/** Every key optional: the operator overrides only what differs from the preset. */
function optionalKeys<K extends string>(keys: readonly K[], message: string) {
  const value = v.optional(v.string(message));
  const entries = Object.fromEntries(keys.map((k) => [k, value])) as Record<
    K,
    v.OptionalSchema<v.StringSchema<string>, undefined>
  >;
  // The generic key set hides that {} is a valid input; it is (every key is optional).
  return v.optional(v.strictObject(entries), {} as never);
}

/** The spec's numbers (docs/client-interface.md §9); adverts follow the official addons' 180 s. */
export const SPEC_INTERVALS = {
  status: 60,
  groups: 300,
  bans: 60,
  queues: 60,
  playtime: 3600,
  rewards: 60,
  adverts: 180,
  user_retry: 60,
} as const;

/** The default chat and console command names (the official addons' names). */
export const COMMAND_NAMES = {
  dashboard: "dashboard",
  ban: "ban",
  unban: "unban",
  warn: "warn",
  warns: "warns",
} as const;

const commandName = v.pipe(
  v.string(),
  v.trim(),
  v.toLowerCase(),
  v.regex(/^[a-z0-9_-]{1,32}$/, "must be one word of letters, digits, - or _ (without the chat prefix)"),
);

const GROUP_NAMES_HELP =
  'must be a list of in-game group names, e.g. ["admin", "superadmin"] (in the environment: admin,superadmin)';

/** In-game group names: a TOML array of strings, or comma-separated in one string (environment). */
const groupNames = v.pipe(
  v.union(
    [
      v.array(v.string()),
      v.pipe(
        v.string(),
        v.transform((s) => s.split(",")),
      ),
    ],
    GROUP_NAMES_HELP,
  ),
  v.transform((items) => items.map((s) => s.trim()).filter(Boolean)),
);

const SIM_PLAYERS_HELP =
  'must be a list of "<id>:<nick>" entries, e.g. "76561198012345671:Alice,76561198087654322:Bob"';

/** `<id>:<nick>` entries, comma-separated in one string (environment) or a TOML array of strings. */
const simPlayers = v.pipe(
  v.union(
    [
      v.array(v.string()),
      v.pipe(
        v.string(),
        v.transform((s) => s.split(",")),
      ),
    ],
    SIM_PLAYERS_HELP,
  ),
  v.transform((items) => items.map((s) => s.trim()).filter(Boolean)),
  v.check((items) => items.every((s) => /^[^:\s]+:.*\S/.test(s)), SIM_PLAYERS_HELP),
  v.transform((items) =>
    items.map((s) => ({ id: s.slice(0, s.indexOf(":")), name: s.slice(s.indexOf(":") + 1).trim() })),
  ),
);

/** A number of simulated players. */
const simCount = v.pipe(
  numeric("must be a whole number of players"),
  v.integer("must be a whole number of players"),
  v.minValue(0, "must be a whole number of players, 0 or more"),
  v.maxValue(1_000_000, "must be at most 1000000 players"),
);

/** The schema, with the game's names (vocabulary.ts): built once by configRules (index.ts). */
// oxlint-disable-next-line max-lines-per-function -- a data table: every configuration key and its rule, in one place
export function buildConfigSchema(game: GameVocabulary) {
  return v.strictObject({
    api: v.strictObject({
      url: text("is required: the service's base URL incl. its path, e.g. https://api.vyhub.app/<instance>/v1"),
      key: v.optional(text("must not be empty")),
      key_file: v.optional(text("must be a path to a file that holds the API key")),
      server_id: text("is required: this server's id from the service's server settings"),
      web_url: v.optional(text("must be the web address of your community site, e.g. https://community.example.org")),
      timeout: seconds(10),
      allow_insecure: bool(false),
      max_response_bytes: v.optional(
        v.pipe(
          numeric("must be a number of bytes"),
          v.integer("must be a whole number of bytes"),
          v.minValue(65_536, "must be at least 65536 bytes (64 KiB)"),
          v.maxValue(1024 ** 3, "must be at most 1073741824 bytes (1 GiB)"),
        ),
        DEFAULT_MAX_RESPONSE_BYTES,
      ),
    }),
    storage: v.optional(v.strictObject({ dir: v.optional(text("must be a directory path"), DEFAULT_STORAGE_DIR) }), {}),
    /** Required, as game.bridge is (loadConfig gives a missing [game] table, so the key is named). */
    game: v.strictObject({
      /** Required, also for the simulated game: a config that forgot it must not run a game that isn't there. */
      bridge: v.picklist(game.bridges, `must be one of: ${game.bridges.join(", ")}`),
      preset: v.optional(v.picklist(game.presets, `must be one of: ${game.presets.join(", ")}`)),
      map: v.optional(text("must be the map name to report when the game cannot tell")),
      // Before the sub-tables, so `hub-agent init` writes each table once.
      log_file: v.optional(text("must be a path to the game's log file")),
      /** Only for `bridge = "sim"`: a simulated game for demos and process tests. */
      sim: v.optional(
        v.pipe(
          v.strictObject({
            players: v.optional(simPlayers, []),
            actions_log: v.optional(text("must be a file path")),
            online: v.optional(simCount, 0),
            churn: v.optional(
              v.pipe(
                numeric("must be a number of players a second"),
                v.minValue(0, "must be a number of players a second, 0 or more"),
                v.maxValue(10_000, "must be at most 10000 players a second"),
              ),
              0,
            ),
            distinct: v.optional(simCount, 0),
          }),
          v.check(
            (sim) => sim.distinct === 0 || sim.distinct > sim.online,
            "game.sim.distinct must be larger than game.sim.online (or 0: every join a new player), so a player who joins is never online already",
          ),
        ),
        {},
      ),
      rcon: v.optional(
        v.strictObject({
          host: v.optional(text("must be the game server's host name or IP address"), "127.0.0.1"),
          port: v.optional(port),
          password: v.optional(text("must not be empty")),
          password_file: v.optional(text("must be a path to a file that holds the RCON password")),
          allow_remote: bool(false),
        }),
        {},
      ),
      wrapper: v.optional(
        v.strictObject({
          command: v.optional(commandLine),
          cwd: v.optional(text("must be a directory path")),
          command_pipe: v.optional(
            text("must be the path of the named pipe (FIFO) the server reads its commands from"),
          ),
          user: v.optional(account("user", "freeciv")),
          group: v.optional(account("group", "games")),
          restart: bool(false),
          /** Only these reach the server besides PATH, HOME, locale and the like: never hub-agent's HUB_* secrets. */
          env: v.optional(
            v.record(
              v.pipe(v.string(), v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be a variable name (letters, digits, _)")),
              v.string("must be a string (quote numbers)"),
            ),
            {},
          ),
        }),
        {},
      ),
      overrides: v.optional(
        v.strictObject({
          user_type: v.optional(
            v.pipe(v.string(), v.trim(), v.regex(/^[A-Z0-9_]+$/, "must be a user type of the service, e.g. STEAM")),
          ),
          command_prefix: v.optional(text("must be the chat command prefix, e.g. !")),
          multi_group: v.optional(bool(false)),
          colours: v.optional(v.picklist(["strip", "minecraft", "quake"], "must be one of: strip, minecraft, quake")),
          max_players: v.optional(
            v.pipe(
              NUMBER_OR_STRING,
              v.number("must be a number"),
              v.integer("must be a whole number"),
              v.minValue(0, "must not be negative"),
            ),
          ),
          list_command: v.optional(text("must be the console command that lists the players")),
          list_row: v.optional(text("must be a regular expression for one row of the player list")),
          list_end: v.optional(v.string("must be a regular expression (a string)")),
          list_start: v.optional(v.string("must be a regular expression (a string)")),
          echo: v.optional(v.string('must be the console\'s echo command with {marker}, e.g. "echo {marker}"')),
          reply_quiet: v.optional(
            v.pipe(
              numeric("must be a number of seconds"),
              v.gtValue(0, "must be a positive number of seconds"),
              v.maxValue(5, "must be at most 5 seconds (a reply must end well within a command's 10 s)"),
            ),
          ),
          escape: v.optional(v.picklist(game.escapeModes, `must be one of: ${game.escapeModes.join(", ")}`)),
          lines: optionalKeys(game.lineKinds, "must be a regular expression (a string)"),
          commands: optionalKeys(game.commandKinds, "must be a command template (a string)"),
        }),
        {},
      ),
    }),
    intervals: v.optional(
      v.strictObject({
        ...(Object.fromEntries(
          Object.entries(SPEC_INTERVALS).map(([k, s]) => [k, seconds(s, k === "adverts" ? "adverts" : undefined)]),
        ) as {
          [K in keyof typeof SPEC_INTERVALS]: ReturnType<typeof seconds>;
        }),
        /** Not the service's: how often the game's player list is polled. */
        player_poll: seconds(10),
      }),
      {},
    ),
    /** In-game chat command names (typed with the game's prefix, e.g. `!dashboard`), also matched at the console. */
    commands: v.optional(
      v.strictObject({
        ...(Object.fromEntries(
          Object.entries(COMMAND_NAMES).map(([k, name]) => [k, v.optional(commandName, name)]),
        ) as {
          [K in keyof typeof COMMAND_NAMES]: v.OptionalSchema<typeof commandName, string>;
        }),
        /** In-game groups whose members' chat bans and unbans take effect locally before the service has answered. */
        trusted_groups: v.optional(groupNames, []),
      }),
      {},
    ),
    rewards: v.optional(v.strictObject({ allow_script: bool(false) }), {}),
    /** The status page, /metrics, /healthz and /readyz of `run` (lib/monitor/); off unless `listen` is set. */
    http: v.optional(
      v.strictObject({
        listen: v.optional(text("must be an address and port, e.g. 127.0.0.1:9187")),
        allow_remote: bool(false),
      }),
      {},
    ),
    lang: v.optional(text("must be a locale of lang/ (en, de) or a path to a JSON file"), "en"),
    /** Shell-free hooks: event name → command line, run with the event's data as JSON on stdin. */
    hooks: v.optional(v.record(v.string(), text("must be a command to run")), {}),
  });
}

export type ConfigSchema = ReturnType<typeof buildConfigSchema>;
export type ConfigInput = v.InferInput<ConfigSchema>;
/** What the schema accepted, before the loader reads the files it names and makes paths absolute. */
export type ParsedConfig = v.InferOutput<ConfigSchema>;
type Parsed = ParsedConfig;

/** The validated configuration, with the API key and RCON password resolved and relative paths made absolute. */
export interface Config extends Omit<Parsed, "api" | "game"> {
  api: Omit<Parsed["api"], "key" | "key_file"> & { key: string };
  storage: { dir: string };
  game: Omit<Parsed["game"], "rcon"> & { rcon: Omit<Parsed["game"]["rcon"], "password_file"> };
}

/** What each key is for (key-help.ts), exported beside the schema: the loader and the template read both. */
export { keyHelp } from "./key-help.ts";
