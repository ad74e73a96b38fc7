import type { ArgsDef } from "citty";

// Imports nothing at run time: `hub-agent --help` loads only this, main.ts and the runner.

/** Flags every command accepts; placed before or after the command name. */
export const globalArgs = {
  config: {
    type: "string",
    description: "configuration file (default ./hub-agent.toml, or $HUB_CONFIG)",
    valueHint: "file",
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
  json?: boolean;
  "log-format"?: string;
  quiet?: boolean;
}
