import * as v from "valibot";
import { DEFAULT_MAX_RESPONSE_BYTES } from "../api/errors.ts";
import { BRIDGE_KINDS, BRIDGE_NAMES } from "../game/kinds/index.ts";
import { ESCAPE_MODE_NAMES } from "../game/presets/escape.ts";
import { PRESET_NAMES } from "../game/presets/index.ts";
import { COMMAND_KINDS, LINE_KINDS } from "../game/presets/types.ts";

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

export const ConfigSchema = v.strictObject({
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
  storage: v.optional(v.strictObject({ dir: v.optional(text("must be a directory path"), "./data") }), {}),
  /** Required, as game.bridge is (loadConfig gives a missing [game] table, so the key is named). */
  game: v.strictObject({
    /** Required, also for the simulated game: a config that forgot it must not run a game that isn't there. */
    bridge: v.picklist(BRIDGE_NAMES, `must be one of: ${BRIDGE_NAMES.join(", ")}`),
    preset: v.optional(v.picklist(PRESET_NAMES, `must be one of: ${PRESET_NAMES.join(", ")}`)),
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
        command_pipe: v.optional(text("must be the path of the named pipe (FIFO) the server reads its commands from")),
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
        escape: v.optional(v.picklist(ESCAPE_MODE_NAMES, `must be one of: ${ESCAPE_MODE_NAMES.join(", ")}`)),
        lines: optionalKeys(LINE_KINDS, "must be a regular expression (a string)"),
        commands: optionalKeys(COMMAND_KINDS, "must be a command template (a string)"),
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
      ...(Object.fromEntries(Object.entries(COMMAND_NAMES).map(([k, name]) => [k, v.optional(commandName, name)])) as {
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

export type ConfigInput = v.InferInput<typeof ConfigSchema>;
type Parsed = v.InferOutput<typeof ConfigSchema>;

/** The validated configuration, with the API key and RCON password resolved and relative paths made absolute. */
export interface Config extends Omit<Parsed, "api" | "game"> {
  api: Omit<Parsed["api"], "key" | "key_file"> & { key: string };
  storage: { dir: string };
  game: Omit<Parsed["game"], "rcon"> & { rcon: Omit<Parsed["game"]["rcon"], "password_file"> };
}

/** What each key is for and how to fix it: the `init` template and error messages use these. */
export const KEY_HELP: Record<string, string> = {
  "api.url": "the service's base URL incl. its path, e.g. https://api.vyhub.app/<instance>/v1",
  "api.key": "the server's API key",
  "api.key_file": "a file holding the API key (systemd/Docker credentials); relative to this file",
  "api.server_id": "this server's id, from the service's server settings",
  "api.web_url": "your community's web address, for the dashboard link (asked from the service when unset)",
  "api.timeout": "seconds to wait for one HTTP attempt",
  "api.allow_insecure": "allow an http:// API URL to a host other than this machine",
  "api.max_response_bytes":
    "the largest answer read from the service, in bytes (default 16 MiB); a larger one is refused, not read",
  "storage.dir": "where queues and caches live; relative to this file",
  "game.bridge": `how hub-agent talks to the game: sim (simulated), ${BRIDGE_KINDS.map((k) => k.help).join(", ")}`,
  "game.preset": `the game: ${PRESET_NAMES.join(", ")} (see the README for each game's settings)`,
  "game.map": "the map to report when the game cannot tell",
  "game.sim.players": 'sim bridge only: players online at start, "<id>:<nick>,<id>:<nick>"',
  "game.sim.actions_log":
    "sim bridge only: a file every game action (exec, kick, message, …) is appended to as a JSON line",
  "game.sim.online": "sim bridge only: generated players online from the start (Player0, Player1, …), besides players",
  "game.sim.churn":
    "sim bridge only: generated players replaced a second (the one online longest leaves, a next one joins); may be a fraction",
  "game.sim.distinct":
    "sim bridge only: how many distinct generated players there are; joins go through them in turn, so after that many the first come back (0: every join a new player)",
  "rewards.allow_script":
    "run SCRIPT rewards (code from the service) when the game bridge can run scripts; off by default",
  "game.rcon.host":
    "the game server's console host (every network console bridge); for the plugin bridge, the address hub-agent listens on",
  "game.rcon.port":
    "the RCON port (default: the preset's, e.g. 25575 for minecraft, 27015 for gmod); for the plugin bridge, the port hub-agent listens on (default 25585)",
  "game.rcon.password":
    "the RCON password (rcon.password / rcon_password / rconpassword on the server); for the plugin bridge, the token the plugin presents",
  "game.rcon.password_file": "a file holding the RCON password instead; relative to this file",
  "game.rcon.allow_remote":
    "plugin bridge only: allow game.rcon.host to be an address other than loopback, for a game server on another machine (the token then crosses the network unencrypted); off by default",
  "game.wrapper.command":
    'the dedicated server to start and its arguments, e.g. ["./srcds_run", "-game", "garrysmod", "-norestart"]; in the environment a JSON array',
  "game.wrapper.cwd": "the directory to start the server in; relative to this file",
  "game.wrapper.command_pipe":
    "a named pipe (FIFO) the server reads its commands from instead of stdin (e.g. armagetronad's --input); hub-agent creates it (0600) if missing; relative to this file",
  "game.wrapper.user":
    "when hub-agent runs as root: the user to run the server as (some servers refuse root); its HOME, USER and SHELL replace root's",
  "game.wrapper.group": "with game.wrapper.user: the server's group, instead of the user's own group",
  "game.wrapper.env":
    '[game.wrapper.env] NAME = "value": variables for the server; it gets only PATH, HOME, USER, locale, TZ, TERM, TMPDIR and these',
  "game.wrapper.restart": "restart the server when it exits on its own (with backoff; gives up after 5 quick crashes)",
  "game.log_file":
    "a game log to follow for events (Minecraft logs/latest.log, srcds logs/L*.log, OpenArena games.log)",
  "game.overrides.user_type": "the service's user type for this game's ids, instead of the preset's",
  "game.overrides.command_prefix":
    "the chat command prefix, instead of the preset's (! on most games; . on OpenArena, whose own admin commands take !; / on Teeworlds)",
  "game.overrides.multi_group": "whether a player can hold several in-game groups at once",
  "game.overrides.colours": "how advert colour tags render: strip, minecraft or quake",
  "game.overrides.max_players": "the player limit to report, when the game's player list doesn't say",
  "game.overrides.list_command": "the console command that lists the players, instead of the preset's",
  "game.overrides.list_row":
    "a regular expression for one player-list row, with named groups (?<name>…) and/or (?<id>…), optionally (?<slot>…); replaces the preset's parser",
  "game.overrides.list_end":
    'wrapper: a regular expression for the player list\'s last line, for a console without echo; "" turns it off',
  "game.overrides.list_start":
    "wrapper, with list_end: a regular expression for the line above the rows; list_end counts only after it (a list framed by the same line above and below: set both to it)",
  "game.overrides.echo":
    'wrapper: the console command printing a marker after each command, e.g. "echo {marker}"; "" when the console has none',
  "game.overrides.reply_quiet":
    "wrapper, console without echo: seconds of silence that end a command's reply (e.g. 0.5)",
  "game.overrides.escape":
    'how text values are escaped: quote ("…", " as \', \\ as /), line (as is, one line), strip (only letters, digits, spaces and . , ! ? + = _ -)',
  "intervals.player_poll": "seconds between polls of the game's player list",
  "commands.dashboard": "the chat command that answers with the server dashboard link",
  "commands.ban": "the chat/console command to ban a player",
  "commands.unban": "the chat/console command to unban a player",
  "commands.warn": "the chat/console command to warn a player",
  "commands.warns": "the chat/console command to list a player's warnings",
  "commands.trusted_groups":
    "in-game groups (as the game names them) whose chat bans and unbans apply here at once, before VyHub has checked the player's permission; everyone else's take effect once VyHub accepts them. Ignored where players are known only by name (openarena)",
  lang: "a locale of lang/ (en, de) or a path to your own JSON file",
  "http.listen":
    "serve the status page, /metrics, /healthz and /readyz of `run` here, e.g. 127.0.0.1:9187 (off when unset)",
  "http.allow_remote":
    "allow http.listen on an address other than loopback: the page and metrics have no password; off by default",
  "intervals.status": "seconds between status updates (spec: 60)",
  "intervals.groups": "seconds between group syncs of online players (spec: 300)",
  "intervals.bans": "seconds between ban-list refreshes (spec: 60)",
  "intervals.queues": "seconds between ban/unban/reward queue rounds (spec: about 60)",
  "intervals.playtime": "seconds between playtime reports (spec: 3600)",
  "intervals.rewards": "seconds between DIRECT/DISABLE reward rounds (spec: 60)",
  "intervals.adverts": "seconds between adverts; 0 switches adverts off",
  "intervals.user_retry": "seconds before retrying a failed user lookup (spec: 60)",
};

for (const kind of LINE_KINDS) {
  KEY_HELP[`game.overrides.lines.${kind}`] =
    `a regular expression for ${kind} lines, with named groups such as (?<id>…), (?<name>…), (?<slot>…); "" turns it off`;
}
for (const kind of COMMAND_KINDS) {
  KEY_HELP[`game.overrides.commands.${kind}`] =
    `the ${kind} command template, with placeholders such as {steam64}, {uuid}, {slot}, {name}, {text}; "" turns it off`;
}
