import * as v from "valibot";
import { ConfigSchema, KEY_HELP } from "./schema.ts";
import { configKeys, envName } from "./index.ts";

const REQUIRED_EXAMPLE: Record<string, string> = {
  "api.url": "https://api.vyhub.app/<instance>/v1",
  "api.key": "<paste the server's API key here>",
  "api.server_id": "<server id, a UUID>",
};

/** The commented configuration `hub-agent init` writes: every key, its default, and its environment variable. */
export function renderTemplate(values: Record<string, string> = {}): string {
  const out = [
    "# hub-agent configuration. Every key can also be set by an environment variable (shown beside it),",
    "# which wins over this file. Relative paths are relative to this file.",
  ];
  let section = "";
  // Top-level keys (lang) must come before the first [table] in TOML.
  const paths = configKeys().sort((a, b) => Number(a.includes(".")) - Number(b.includes(".")));
  for (const path of paths) {
    // The last segment is the key, the rest its table: game.rcon.host → [game.rcon] host.
    const dot = path.lastIndexOf(".");
    const [head, key] = dot >= 0 ? [path.slice(0, dot), path.slice(dot + 1)] : ["", path];
    if (head !== section) {
      out.push("", `[${head}]`);
      section = head;
    }
    out.push(`# ${KEY_HELP[path] ?? path} (${envName(path)})`);
    const given = values[path] ?? REQUIRED_EXAMPLE[path];
    const fallback = defaultOf(path);
    if (given !== undefined) out.push(`${key} = ${JSON.stringify(given)}`);
    else out.push(`# ${key} = ${fallback === undefined ? '""' : JSON.stringify(fallback)}`);
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

function defaultOf(path: string): unknown {
  let s: v.GenericSchema = ConfigSchema;
  for (const k of path.split(".")) {
    const inner = "wrapped" in s ? (s as unknown as { wrapped: v.GenericSchema }).wrapped : s;
    s = (inner as unknown as { entries: Record<string, v.GenericSchema> }).entries[k] as v.GenericSchema;
  }
  return v.getDefault(s as never);
}
