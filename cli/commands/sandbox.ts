import { defineCommand } from "citty";
import { globalArgs, createContext } from "../context.ts";
import { CliError, EXIT } from "../exit.ts";

export default defineCommand({
  meta: {
    name: "sandbox",
    description: "start the in-memory service (seeded with example data) and print how to point hub-agent at it",
  },
  args: {
    ...globalArgs,
    port: { type: "string", description: "port on 127.0.0.1 (default: any free port)", valueHint: "N" },
    key: { type: "string", description: "the API key it accepts (default: a random one)" },
    seed: { type: "string", description: "examples or empty", valueHint: "examples|empty" },
  },
  async run({ args }) {
    const ctx = createContext(args);
    const port = args.port === undefined ? 0 : Number(args.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new CliError(`--port ${args.port} is not a port: use a number from 1 to 65535`, EXIT.USAGE);
    const seed = args.seed ?? "examples";
    if (seed !== "examples" && seed !== "empty")
      throw new CliError(`--seed ${seed} is not a seed: use examples or empty`, EXIT.USAGE);
    const { startSandbox } = await import("../../lib/sandbox/index.ts");
    let sb;
    try {
      sb = await startSandbox({ port, key: args.key, seed });
    } catch (e) {
      throw new CliError(
        `cannot listen on 127.0.0.1:${port} (${(e as Error).message}): choose another --port`,
        EXIT.FAILURE,
      );
    }
    ctx.emit({ url: sb.url, key: sb.key, server_id: sb.serverId, serverbundle_id: sb.bundleId });
    for (const line of [
      `in-memory service listening at ${sb.url}`,
      "",
      "point hub-agent at it with:",
      `  export HUB_API_URL=${sb.url}`,
      `  export HUB_API_KEY=${sb.key}`,
      `  export HUB_API_SERVER_ID=${sb.serverId}`,
      "",
      "then run `hub-agent doctor`. Stop with Ctrl-C.",
    ])
      ctx.say(line);
    await new Promise<void>((resolve) => {
      process.once("SIGINT", resolve);
      process.once("SIGTERM", resolve);
    });
    await sb.stop();
    ctx.logger.info("in-memory service stopped");
  },
});
