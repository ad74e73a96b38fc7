import * as v from "valibot";
import { type ConfigRules, envName } from "./index.ts";

/** The required keys' placeholders (loadConfig refuses a value still like this, naming the key). */
const requiredExample = (rules: ConfigRules): Record<string, string> => ({
  "api.url": "https://api.vyhub.app/<instance>/v1",
  "api.key": "<paste the server's API key here>",
  "api.server_id": "<server id, a UUID>",
  "game.bridge": `<how hub-agent talks to the game: ${rules.game.bridges.join(", ")}>`,
});

/**
 * What a key without a default shows, commented out: a value that is valid once uncommented (`tested in
 * test/config/template.test.ts`), so an operator can start from it. Override lines and commands show "" (off).
 */
const EXAMPLES: Record<string, unknown> = {
  "api.key_file": "api-key",
  "api.web_url": "https://community.example.org",
  "game.preset": "minecraft",
  "game.map": "de_dust2",
  "game.log_file": "logs/latest.log",
  "game.sim.actions_log": "sim-actions.jsonl",
  "game.rcon.port": 27015,
  "game.rcon.password": "change-me",
  "game.rcon.password_file": "rcon-password",
  "game.wrapper.command": ["./srcds_run", "-game", "garrysmod", "-norestart"],
  "game.wrapper.cwd": "server",
  "game.wrapper.command_pipe": "server/console.fifo",
  "game.wrapper.user": "gameserver",
  "game.wrapper.group": "gameserver",
  "game.overrides.user_type": "STEAM",
  "game.overrides.command_prefix": "!",
  "game.overrides.multi_group": false,
  "game.overrides.colours": "strip",
  "game.overrides.max_players": 32,
  "game.overrides.list_command": "status",
  "game.overrides.list_row": "^\\s*(?<slot>\\d+)\\s+(?<name>.+)$",
  "game.overrides.reply_quiet": 0.5,
  "game.overrides.escape": "quote",
  "http.listen": "127.0.0.1:9187",
};

/** Keys that replace another one: uncommenting one means commenting the other out. */
export const ALTERNATIVES: Record<string, string> = {
  "api.key_file": "key",
  "game.rcon.password_file": "password",
};

/** The commented configuration `hub-agent init` writes: every key, its default, and its environment variable. */
export function renderTemplate(rules: ConfigRules, values: Record<string, string> = {}): string {
  const required = requiredExample(rules);
  const out = [
    "# hub-agent configuration. Every key can also be set by an environment variable (shown beside it),",
    "# which wins over this file. Relative paths are relative to this file.",
  ];
  let section = "";
  // Top-level keys (lang) must come before the first [table] in TOML.
  const paths = [...rules.keys].sort((a, b) => Number(a.includes(".")) - Number(b.includes(".")));
  for (const path of paths) {
    // The last segment is the key, the rest its table: game.rcon.host → [game.rcon] host.
    const dot = path.lastIndexOf(".");
    const [head, key] = dot >= 0 ? [path.slice(0, dot), path.slice(dot + 1)] : ["", path];
    if (head !== section) {
      out.push("", `[${head}]`);
      section = head;
    }
    out.push(`# ${rules.help[path] ?? path} (${envName(path)})`);
    const given = values[path] ?? required[path];
    if (given !== undefined) {
      out.push(`${key} = ${JSON.stringify(given)}`);
      continue;
    }
    const example = defaultOf(rules, path) ?? EXAMPLES[path] ?? (path.startsWith("game.overrides.") ? "" : undefined);
    if (example === undefined) throw new Error(`no commented value for ${path}: add one to EXAMPLES`);
    const instead = ALTERNATIVES[path] ? `  # instead of ${ALTERNATIVES[path]}` : "";
    out.push(`# ${key} = ${JSON.stringify(example)}${instead}`);
  }
  out.push(
    "",
    "# Run a command when an event happens; it gets the event's data as JSON on stdin (no shell involved).",
    "[hooks]",
    '# hub_ready = "/usr/local/bin/notify-ready"',
    "",
  );
  return out.join("\n");
}

function defaultOf(rules: ConfigRules, path: string): unknown {
  let s: v.GenericSchema = rules.schema;
  for (const k of path.split(".")) {
    const inner = "wrapped" in s ? (s as unknown as { wrapped: v.GenericSchema }).wrapped : s;
    s = (inner as unknown as { entries: Record<string, v.GenericSchema> }).entries[k] as v.GenericSchema;
  }
  return v.getDefault(s as never);
}

/**
 * A server's file of servers.d (`hub-agent init --server <name>`): what is each server's own, with the template's
 * placeholders (refused until replaced, one line each); any other key of the shared file may be added.
 */
export function renderServerTemplate(rules: ConfigRules, name: string, shared: string): string {
  const required = requiredExample(rules);
  const line = (path: string) => [
    `# ${rules.help[path] ?? path}`,
    `${path.slice(path.lastIndexOf(".") + 1)} = ${JSON.stringify(required[path])}`,
  ];
  return [
    `# hub-agent: the server "${name}" of this host. Laid over ${shared} and the HUB_* variables, table by`,
    "# table: set here what is this server's own; any key of the shared file may be set here too, and wins.",
    '# Relative paths are relative to this folder. See docs/configuration.md, "Several servers".',
    "",
    "[api]",
    ...line("api.server_id"),
    ...line("api.key"),
    '# or, instead of key: key_file = "' + name + '.key"',
    "",
    "[game]",
    ...line("game.bridge"),
    '# preset = "minecraft"',
    "",
  ].join("\n");
}
