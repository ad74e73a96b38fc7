#!/usr/bin/env bun
import type { CommandDef } from "citty";
import { globalArgs } from "./args.ts";
import { examplesHelp } from "./examples.ts";
import { runCli } from "./runner.ts";

export const VERSION = "0.1.0";

/**
 * Every command, loaded only when run: a one-shot command must start fast, so `--help` renders from this
 * table and never imports a command's module. `lasting`: it runs until stopped, so its file operations stay off
 * its event loop; every other command does them blocking, which starts faster (lib/fsio.ts).
 */
const COMMANDS: Record<string, { summary: string; load: () => Promise<{ default: unknown }>; lasting?: true }> = {
  run: {
    summary: "run the agent until SIGINT/SIGTERM (--once: one round of every job, for cron)",
    load: () => import("./commands/run.ts"),
    lasting: true,
  },
  status: {
    summary: "the running agent: service, jobs, queues, players, game bridge, caches, quarantine (0 alive, 1 none)",
    load: () => import("./commands/status.ts"),
  },
  demo: {
    summary: "the agent against the built-in service and a simulated game: one narrated script, then a summary",
    load: () => import("./commands/demo.ts"),
    lasting: true,
  },
  dashboard: {
    summary: "print the link to this server's dashboard of who is online",
    load: () => import("./commands/dashboard.ts"),
  },
  doctor: {
    summary: "check the configuration, storage and service, with a fix for each failure",
    load: () => import("./commands/doctor.ts"),
  },
  ban: {
    summary: "ban a player: <player> <length> <reason…> [--as <player>]; 0 delivered, 6 queued",
    load: () => import("./commands/ban.ts"),
  },
  unban: {
    summary: "lift a player's bans: <player> [--as <player>]; 0 delivered, 6 queued",
    load: () => import("./commands/unban.ts"),
  },
  warn: {
    summary: "warn a player: <player> <reason…> [--as <player>]; 0 delivered, 6 queued",
    load: () => import("./commands/warn.ts"),
  },
  warns: { summary: "a player's warnings, newest first: <player>", load: () => import("./commands/warns.ts") },
  init: { summary: "write a commented configuration file to fill in", load: () => import("./commands/init.ts") },
  queue: {
    summary: "the durable queues: status (entries, age, attempts, last error), retry <id>, drop <id>",
    load: () => import("./commands/queue.ts"),
  },
  sandbox: {
    summary:
      "start the in-memory service for trying hub-agent out (its players, a config for it); reward <player> <command>",
    load: () => import("./commands/sandbox.ts"),
    lasting: true,
  },
  help: {
    summary: "the list of commands, or one command's help: help [<command>] (as <command> --help)",
    load: () => import("./commands/help.ts"),
  },
  version: { summary: "print the version (as --version, -V)", load: () => import("./commands/version.ts") },
  completion: {
    summary: "print the shell completion script: bash, zsh or fish",
    load: () => import("./commands/completion.ts"),
  },
};

export const main: CommandDef = {
  meta: { name: "hub-agent", version: VERSION, description: "connects a game server to VyHub from outside the game" },
  args: globalArgs,
  subCommands: Object.fromEntries(
    Object.entries(COMMANDS).map(([name, c]) => [
      name,
      async (): Promise<CommandDef> => {
        const command = (await c.load()).default as CommandDef;
        // At the command's start (citty's setup), not at its loading: `completion` loads every command's table.
        // Set by every command line, so one run in a process does not leave its mode to the next (the tests').
        const setup = async (context: Parameters<NonNullable<CommandDef["setup"]>>[0]) => {
          (await import("../lib/fsio.ts")).useBlockingFileIo(!c.lasting);
          await command.setup?.(context);
        };
        return { ...command, setup };
      },
    ]),
  ),
};

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
    ...Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`),
    "",
    "OPTIONS (every command)",
    ...flags,
    "",
    ...examplesHelp([]),
    "",
    "Run `hub-agent <command> --help` for a command's own options. Exit codes: 0 ok, 1 failure, 2 usage error,",
    "3 configuration error (a refused API key too), 4 service unreachable, 5 not found, 6 queued but not yet",
    "delivered, 7 another run holds the storage directory, 8 the storage directory can't be written.",
  ].join("\n");
}

// No top-level await: `completion` imports this module for the command table while the CLI runs.
if (import.meta.main) void runCli(main, process.argv.slice(2), rootHelp).then((code) => process.exit(code));
