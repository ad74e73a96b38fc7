import { defineCommand } from "citty";
import { mkdir, open, stat } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { globalArgs, createContext } from "../context.ts";
import { CliError, EXIT } from "../exit.ts";
import { DEFAULT_CONFIG_FILE } from "../../lib/app/config.ts";
import { renderServerTemplate, renderTemplate } from "../../lib/app/config.ts";
import { SERVERS_DIR, serverNameProblem } from "../../lib/app/servers.ts";
import { helpMeta } from "../args.ts";

export default defineCommand({
  meta: helpMeta({
    examples: [
      ["hub-agent init", "write ./hub-agent.toml (mode 0600)"],
      ["hub-agent init --force --config /etc/hub-agent/hub-agent.toml", "overwrite that file"],
      ["hub-agent init --server ttt-1", "servers.d/ttt-1.toml beside it: one server of several"],
    ],
  }),
  args: {
    ...globalArgs,
    force: { type: "boolean", description: "overwrite an existing file" },
  },
  async run({ args, data }) {
    const ctx = createContext(args, data);
    const { cwd, env } = ctx.invocation;
    const shared = resolve(cwd, args.config ?? env.HUB_CONFIG ?? DEFAULT_CONFIG_FILE);
    const server = args.server ?? (env.HUB_SERVER || undefined);
    const bad = server === undefined ? undefined : serverNameProblem(server);
    if (bad) throw new CliError(bad, EXIT.USAGE);
    // One server of several: its file in servers.d beside the shared one (the folder made when missing).
    const file = server ? join(dirname(shared), SERVERS_DIR, `${server}.toml`) : shared;
    if (server) await mkdir(dirname(file), { recursive: true, mode: 0o750 }); // the service reads it by group
    let handle;
    try {
      // "wx" refuses to replace an existing file atomically: no check-then-write race.
      handle = await open(file, args.force ? "w" : "wx", 0o600);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      // `--config <folder>`: neither "edit it" nor --force can help there.
      if ((code === "EEXIST" || code === "EISDIR") && (await stat(file)).isDirectory())
        throw new CliError(
          `${file} is a directory: give the configuration file's path (${join(file, DEFAULT_CONFIG_FILE)})`,
          EXIT.FAILURE,
        );
      if (code === "EEXIST")
        throw new CliError(
          `${file} already exists: edit it, or run \`hub-agent init --force\` to replace it`,
          EXIT.FAILURE,
        );
      throw new CliError(`cannot write ${file} (${code}): check the directory exists and is writable`, EXIT.FAILURE);
    }
    try {
      await handle.chmod(0o600); // --force on an existing file keeps its old mode otherwise; the file holds the API key
      await handle.writeFile(server ? renderServerTemplate(server, shared) : renderTemplate());
    } finally {
      await handle.close();
    }
    const keys = server ? "api.key, api.server_id and game.bridge" : "api.url, api.key, api.server_id and game.bridge";
    const doctor = server ? `hub-agent doctor --server ${server}` : "hub-agent doctor";
    ctx.say(`wrote ${file}: fill in ${keys}, then run \`${doctor}\``);
    ctx.emit({ file });
  },
});
