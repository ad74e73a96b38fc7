import { defineCommand } from "citty";
import { open } from "node:fs/promises";
import { resolve } from "node:path";
import { globalArgs, createContext } from "../context.ts";
import { CliError, EXIT } from "../exit.ts";
import { DEFAULT_CONFIG_FILE } from "../../lib/app/config.ts";
import { renderTemplate } from "../../lib/app/config.ts";
import { helpMeta } from "../args.ts";

export default defineCommand({
  meta: helpMeta({
    examples: [
      ["hub-agent init", "write ./hub-agent.toml (mode 0600)"],
      ["hub-agent init --force --config /etc/hub-agent/hub-agent.toml", "overwrite that file"],
    ],
  }),
  args: {
    ...globalArgs,
    force: { type: "boolean", description: "overwrite an existing file" },
  },
  async run({ args, data }) {
    const ctx = createContext(args, data);
    const { cwd, env } = ctx.invocation;
    const file = resolve(cwd, args.config ?? env.HUB_CONFIG ?? DEFAULT_CONFIG_FILE);
    let handle;
    try {
      // "wx" refuses to replace an existing file atomically: no check-then-write race.
      handle = await open(file, args.force ? "w" : "wx", 0o600);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "EEXIST")
        throw new CliError(
          `${file} already exists: edit it, or run \`hub-agent init --force\` to replace it`,
          EXIT.FAILURE,
        );
      throw new CliError(`cannot write ${file} (${code}): check the directory exists and is writable`, EXIT.FAILURE);
    }
    try {
      await handle.chmod(0o600); // --force on an existing file keeps its old mode otherwise; the file holds the API key
      await handle.writeFile(renderTemplate());
    } finally {
      await handle.close();
    }
    ctx.say(`wrote ${file}: fill in api.url, api.key, api.server_id and game.bridge, then run \`hub-agent doctor\``);
    ctx.emit({ file });
  },
});
