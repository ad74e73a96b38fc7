/**
 * What each configuration key is for and how to fix it: the `init` template prints these above each key, and a
 * wrong value's error message ends with them. Text only, kept apart from the schema (schema.ts, which re-exports it)
 * so the rules stay readable; a key added there gets its line here.
 */
import type { GameVocabulary } from "./vocabulary.ts";

/** What each key is for and how to fix it: the `init` template and error messages use these. */
// oxlint-disable-next-line max-lines-per-function -- a data table: one line of help per configuration key
export function keyHelp(game: GameVocabulary): Record<string, string> {
  const help: Record<string, string> = {
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
    "game.bridge": `how hub-agent talks to the game: sim (simulated), ${game.bridgeHelp}`,
    "game.preset": `the game: ${game.presets.join(", ")} (see the README for each game's settings)`,
    "game.map": "the map to report when the game cannot tell",
    "game.sim.players": 'sim bridge only: players online at start, "<id>:<nick>,<id>:<nick>"',
    "game.sim.actions_log":
      "sim bridge only: a file every game action (exec, kick, message, …) is appended to as a JSON line",
    "game.sim.online":
      "sim bridge only: generated players online from the start (Player0, Player1, …), besides players",
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
    "game.wrapper.restart":
      "restart the server when it exits on its own (with backoff; gives up after 5 quick crashes)",
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
    "intervals.groups":
      "seconds between group syncs of online players (spec: 300); group sync is off where players are known only by name (openarena)",
    "intervals.bans": "seconds between ban-list refreshes (spec: 60)",
    "intervals.queues": "seconds between ban/unban/reward queue rounds (spec: about 60)",
    "intervals.playtime": "seconds between playtime reports (spec: 3600)",
    "intervals.rewards": "seconds between DIRECT/DISABLE reward rounds (spec: 60)",
    "intervals.adverts": "seconds between adverts; 0 switches adverts off",
    "intervals.user_retry": "seconds before retrying a failed user lookup (spec: 60)",
  };

  for (const kind of game.lineKinds) {
    help[`game.overrides.lines.${kind}`] =
      `a regular expression for ${kind} lines, with named groups such as (?<id>…), (?<name>…), (?<slot>…); "" turns it off`;
  }
  for (const kind of game.commandKinds) {
    help[`game.overrides.commands.${kind}`] =
      `the ${kind} command template, with placeholders such as {steam64}, {uuid}, {slot}, {name}, {text}; "" turns it off`;
  }
  return help;
}
