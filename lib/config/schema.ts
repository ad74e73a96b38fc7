import * as v from "valibot";

/**
 * The configuration schema is the one source of truth: the loader derives every HUB_* environment
 * variable from it, `hub-agent init` renders its template from it, and its messages are what an operator
 * reads when a value is wrong.
 */

/** A number of seconds; environment variables arrive as strings, so numeric strings are accepted too. */
const seconds = (fallback: number) =>
  v.optional(
    v.pipe(
      v.union([v.number(), v.pipe(v.string(), v.trim(), v.nonEmpty(), v.transform(Number))]),
      v.number("must be a number of seconds"),
      v.gtValue(0, "must be a positive number of seconds"),
    ),
    fallback,
  );

const bool = (fallback: boolean) =>
  v.optional(
    v.pipe(
      v.union([v.boolean(), v.pipe(v.string(), v.toLowerCase(), v.picklist(["true", "false", "1", "0", "yes", "no"]))]),
      v.transform((x) => x === true || x === "true" || x === "1" || x === "yes"),
    ),
    fallback,
  );

const text = (message: string) => v.pipe(v.string(message), v.trim(), v.nonEmpty(message));

/** The spec's numbers (client-interface.md, "Limits"); adverts follow the official addons' 180 s. */
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

export const ConfigSchema = v.strictObject({
  api: v.strictObject({
    url: text("is required: the service's base URL incl. its path, e.g. https://api.vyhub.app/<instance>/v1"),
    key: v.optional(text("must not be empty")),
    key_file: v.optional(text("must be a path to a file that holds the API key")),
    server_id: text("is required: this server's id from the service's server settings"),
    web_url: v.optional(text("must be the web address of your community site, e.g. https://community.example.org")),
    timeout: seconds(10),
    allow_insecure: bool(false),
  }),
  storage: v.optional(v.strictObject({ dir: v.optional(text("must be a directory path"), "./data") }), {}),
  game: v.optional(
    v.strictObject({
      bridge: v.optional(v.picklist(["sim"], "must be one of: sim"), "sim"),
      preset: v.optional(text("must name a game preset")),
      map: v.optional(text("must be the map name to report when the game cannot tell")),
      /** Only for `bridge = "sim"`: a simulated game for demos and process tests. */
      sim: v.optional(
        v.strictObject({
          players: v.optional(simPlayers, []),
          actions_log: v.optional(text("must be a file path")),
        }),
        {},
      ),
    }),
    {},
  ),
  intervals: v.optional(
    v.strictObject(
      Object.fromEntries(Object.entries(SPEC_INTERVALS).map(([k, s]) => [k, seconds(s)])) as {
        [K in keyof typeof SPEC_INTERVALS]: ReturnType<typeof seconds>;
      },
    ),
    {},
  ),
  /** In-game chat command names (typed with the game's prefix, e.g. `!dashboard`), also matched at the console. */
  commands: v.optional(
    v.strictObject(
      Object.fromEntries(Object.entries(COMMAND_NAMES).map(([k, name]) => [k, v.optional(commandName, name)])) as {
        [K in keyof typeof COMMAND_NAMES]: v.OptionalSchema<typeof commandName, string>;
      },
    ),
    {},
  ),
  rewards: v.optional(v.strictObject({ allow_script: bool(false) }), {}),
  lang: v.optional(text("must be a locale of lang/ (en, de) or a path to a JSON file"), "en"),
  /** Shell-free hooks: event name → command line, run with the event's data as JSON on stdin. */
  hooks: v.optional(v.record(v.string(), text("must be a command to run")), {}),
});

export type ConfigInput = v.InferInput<typeof ConfigSchema>;
type Parsed = v.InferOutput<typeof ConfigSchema>;

/** The validated configuration, with the API key resolved and relative paths made absolute. */
export interface Config extends Omit<Parsed, "api"> {
  api: Omit<Parsed["api"], "key" | "key_file"> & { key: string };
  storage: { dir: string };
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
  "storage.dir": "where queues and caches live; relative to this file",
  "game.bridge": "how hub-agent talks to the game",
  "game.preset": "the game preset (command templates, id format)",
  "game.map": "the map to report when the game cannot tell",
  "game.sim.players": 'sim bridge only: players online at start, "<id>:<nick>,<id>:<nick>"',
  "game.sim.actions_log":
    "sim bridge only: a file every game action (exec, kick, message, …) is appended to as a JSON line",
  "rewards.allow_script":
    "run SCRIPT rewards (code from the service) when the game bridge can run scripts; off by default",
  "commands.dashboard": "the chat command that answers with the server dashboard link",
  "commands.ban": "the chat/console command to ban a player",
  "commands.unban": "the chat/console command to unban a player",
  "commands.warn": "the chat/console command to warn a player",
  "commands.warns": "the chat/console command to list a player's warnings",
  lang: "a locale of lang/ (en, de) or a path to your own JSON file",
  "intervals.status": "seconds between status updates (spec: 60)",
  "intervals.groups": "seconds between group syncs of online players (spec: 300)",
  "intervals.bans": "seconds between ban-list refreshes (spec: 60)",
  "intervals.queues": "seconds between ban/unban/reward queue rounds (spec: about 60)",
  "intervals.playtime": "seconds between playtime reports (spec: 3600)",
  "intervals.rewards": "seconds between DIRECT/DISABLE reward rounds (spec: 60)",
  "intervals.adverts": "seconds between adverts",
  "intervals.user_retry": "seconds before retrying a failed user lookup (spec: 60)",
};
