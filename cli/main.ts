#!/usr/bin/env bun
import type { CommandDef } from "citty";
import { type Meta, globalArgs } from "./args.ts";
import { BUILD } from "./build-info.ts";
import { examplesHelp, runCli } from "./runner.ts";

export const VERSION = BUILD.version;

interface Command {
  description: string;
  load: () => Promise<{ default: unknown }>;
  lasting?: true;
}

/**
 * Every command, loaded only when run: a one-shot command must start fast, so `--help` renders from this
 * table and never imports a command's module. Each command's name and one line of description are written here
 * only (its module has its arguments, examples and run: cli/args.ts helpMeta). `lasting`: it runs until stopped, so
 * its file operations stay off its event loop; every other command does them blocking, which starts faster
 * (lib/fsio.ts).
 */
const COMMANDS: Record<string, Command> = {
  run: {
    description:
      "run the agent: every timer and event of the client interface, until SIGINT/SIGTERM (--once: one round, for cron)",
    load: () => import("./commands/run.ts"),
    lasting: true,
  },
  status: {
    description:
      "the running agent: service, jobs, queues, players, game bridge, caches, quarantine; exit 0 alive, 1 none",
    load: () => import("./commands/status.ts"),
  },
  demo: {
    description:
      "the agent against the built-in service and a simulated game: one narrated script (about 20 s), then a summary",
    load: () => import("./commands/demo.ts"),
    lasting: true,
  },
  dashboard: {
    description: "print the link to this server's dashboard of who is online",
    load: () => import("./commands/dashboard.ts"),
  },
  doctor: {
    description: "check the configuration, storage, service, key, clock and game console, with a fix for each failure",
    load: () => import("./commands/doctor.ts"),
  },
  ban: {
    description:
      "ban a player: <player> <length> <reason…> [--as <player>]; queued durably, then sent: 0 delivered, 6 queued",
    load: () => import("./commands/ban.ts"),
  },
  unban: {
    description: "lift a player's bans (queued ones too): <player> [--as <player>]; 0 delivered, 6 queued",
    load: () => import("./commands/unban.ts"),
  },
  warn: {
    description: "warn a player: <player> <reason…> [--as <player>]; queued durably, then sent: 0 delivered, 6 queued",
    load: () => import("./commands/warn.ts"),
  },
  warns: {
    description: "a player's warnings in this serverbundle, active and inactive, newest first: <player>",
    load: () => import("./commands/warns.ts"),
  },
  init: {
    description: "write a commented configuration file (mode 0600) to fill in",
    load: () => import("./commands/init.ts"),
  },
  queue: {
    description: "the durable queues: status (entries, age, attempts, last error), retry <id>, drop <id>",
    load: () => import("./commands/queue.ts"),
  },
  sandbox: {
    description:
      "start the in-memory service for trying hub-agent out (its players, a config for it); reward <player> <command>",
    load: () => import("./commands/sandbox.ts"),
    lasting: true,
  },
  help: {
    description: "the list of commands, or one command's help: help [<command>] (as <command> --help)",
    load: () => import("./commands/help.ts"),
  },
  version: {
    description: "the version, commit, build date, target and Bun's version (--version, -V: the version)",
    load: () => import("./commands/version.ts"),
  },
  completion: {
    description: "print the shell completion script: bash, zsh or fish",
    load: () => import("./commands/completion.ts"),
  },
};

/** The root's meta; its examples end `hub-agent --help`. */
const ROOT: Meta = {
  name: "hub-agent",
  version: VERSION,
  description: "connects a game server to VyHub from outside the game",
  examples: [
    ["hub-agent demo", "see it work: the built-in service and a simulated game, about 20 s"],
    ["hub-agent init && hub-agent doctor", "write hub-agent.toml to fill in, then check it"],
    ["hub-agent run", "the agent, until Ctrl-C"],
    ['hub-agent ban Bob 1d "griefing"', "ban an online player by nick for a day"],
  ],
};

/** A command's module, named and described by its line of the table. */
async function load(name: string, c: Command): Promise<CommandDef> {
  const def = (await c.load()).default as CommandDef;
  // At the command's start (its setup, which cli/runner.ts calls for each command on the way), not at its loading:
  // `completion` loads every command's table.
  // Set by every command line, so one run in a process does not leave its mode to the next (the tests').
  const setup = async (context: Parameters<NonNullable<CommandDef["setup"]>>[0]) => {
    (await import("../lib/fsio.ts")).useBlockingFileIo(!c.lasting);
    await def.setup?.(context);
  };
  return { ...def, setup, meta: { ...(def.meta as Meta), name, description: c.description } };
}

/** Each command's loader, by name. A loop: Object.fromEntries' first run cost every command line 0.03–0.05 ms. */
const subCommands: Record<string, () => Promise<CommandDef>> = {};
for (const name in COMMANDS) subCommands[name] = () => load(name, COMMANDS[name]!);

export const main: CommandDef = { meta: ROOT, args: globalArgs, subCommands };

export function rootHelp(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((n) => n.length));
  const flags = Object.entries(globalArgs).map(([name, def]) => {
    const hint = "valueHint" in def ? ` <${def.valueHint}>` : "";
    return `  --${name}${hint}`.padEnd(30) + def.description;
  });
  return [
    `hub-agent ${VERSION} — connects a game server to VyHub from outside the game`,
    "",
    "USAGE  hub-agent <command> [options]",
    "",
    "COMMANDS",
    ...Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.description}`),
    "",
    "OPTIONS (every command)",
    ...flags,
    "",
    ...examplesHelp(ROOT.examples),
    "",
    "Run `hub-agent <command> --help` for a command's own options. Exit codes: 0 ok, 1 failure, 2 usage error,",
    "3 configuration error (a refused API key too), 4 service unreachable, 5 not found, 6 queued but not yet",
    "delivered, 7 another run holds the storage directory, 8 the storage directory can't be written.",
  ].join("\n");
}

// No top-level await: `completion` imports this module for the command table while the CLI runs.
if (import.meta.main) void runCli(main, process.argv.slice(2), rootHelp).then((code) => process.exit(code));
