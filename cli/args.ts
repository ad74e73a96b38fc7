import type { ArgsDef, CommandMeta } from "citty";

// Imports nothing at run time: `hub-agent --help` loads only this, main.ts and the runner.

/** Flags every command accepts; placed before or after the command name. */
export const globalArgs = {
  config: {
    type: "string",
    description: "configuration file (default ./hub-agent.toml, or $HUB_CONFIG)",
    valueHint: "file",
  },
  server: {
    type: "string",
    description: "one server of this host: servers.d/<name>.toml beside the configuration file (or $HUB_SERVER)",
    valueHint: "name",
  },
  json: { type: "boolean", description: "machine-readable output on stdout; logs stay on stderr" },
  "log-format": {
    type: "string",
    description: "pretty (plain timestamped lines when not a terminal) or json",
    valueHint: "pretty|json",
  },
  quiet: { type: "boolean", alias: "q", description: "log only warnings and errors" },
} as const satisfies ArgsDef;

export interface GlobalFlags {
  config?: string;
  server?: string;
  json?: boolean;
  "log-format"?: string;
  quiet?: boolean;
}

/** One example of a command's --help: the command line, then what it does. */
export type Example = [line: string, what: string];

/** citty's meta with the examples each --help ends with (citty has no place for them). */
export interface Meta extends CommandMeta {
  examples?: Example[];
}

/**
 * A command's meta, examples included. A top-level command gives only its examples: its name and its one line of
 * description are written once, in the command table (cli/main.ts), which `--help` reads without loading it.
 */
export const helpMeta = (meta: Meta): CommandMeta => meta;
