import { defineCommand } from "citty";
import { globalArgs, createContext, type Context } from "../context.ts";
import { CliError, EXIT } from "../exit.ts";
import type { SandboxPlayer } from "../../lib/sandbox/players.ts";

const reward = defineCommand({
  meta: {
    name: "reward",
    description: "give a player of a running sandbox a reward whose command runs on the game's console",
  },
  args: {
    ...globalArgs,
    player: { type: "positional", description: "the player: nick, platform id or VyHub user id", required: true },
    command: {
      type: "positional",
      description: "the console command, with placeholders like %nick% and %steamid64% (the rest of the line)",
      required: true,
    },
    event: {
      type: "string",
      description: "when it runs: direct (the next rewards round while online), connect, spawn, death or disconnect",
      valueHint: "direct|connect|spawn|death|disconnect",
    },
  },
  async run({ args, data }) {
    const ctx = createContext(args, data);
    const event = (args.event ?? "direct").toUpperCase();
    if (!["DIRECT", "CONNECT", "SPAWN", "DEATH", "DISCONNECT"].includes(event))
      throw new CliError(
        `--event ${args.event} is not a reward event: use direct, connect, spawn, death or disconnect`,
        EXIT.USAGE,
      );
    const command = args._.slice(1).join(" ").trim();
    if (!command) throw new CliError("the command is empty: hub-agent sandbox reward <player> <command…>", EXIT.USAGE);
    const config = await ctx.config();
    const { REWARD_CONTROL_PATH } = await import("../../lib/sandbox/routes/control.ts");
    const url = config.api.url.replace(/\/+$/, "") + REWARD_CONTROL_PATH;
    const body = await post(url, config.api.key, { player: args.player, command, on_event: event });
    const added = body as { id: string; user: { id: string; username: string | null }; reward: { on_event: string } };
    ctx.emit(added);
    const when =
      event === "DIRECT"
        ? "a running `hub-agent run` carries it out in its next rewards round (every intervals.rewards seconds) while they are online"
        : `it runs on their next ${event.toLowerCase()}`;
    ctx.say(`reward ${added.id} added for ${added.user.username ?? args.player} (${added.user.id}): ${when}`);
  },
});

/** POSTs to the sandbox's control route; its refusals become one line each. */
async function post(url: string, key: string, payload: unknown): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(payload),
      signal: AbortSignal.timeout(10_000),
    });
  } catch (e) {
    throw new CliError(
      `no sandbox answers at ${url} (${(e as Error).message}): start one with \`hub-agent sandbox\` and point api.url at it`,
      EXIT.UNREACHABLE,
    );
  }
  const text = await res.text();
  let body: { detail?: { msg?: string; detail?: { known?: string[] } } } | undefined;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (res.ok && body) return body;
  if (res.status === 401)
    throw new CliError(`the sandbox at ${url} refused the API key: use the key it printed`, EXIT.CONFIG);
  const known = body?.detail?.detail?.known;
  if (res.status === 404 && known)
    throw new CliError(
      known.length
        ? `no such player in the sandbox: use one of ${known.join(", ")}`
        : "the sandbox has no players (it was started with --seed empty): start it with the example data",
      EXIT.NOT_FOUND,
    );
  if (res.status === 404)
    throw new CliError(`${url} is not a hub-agent sandbox (404): api.url must point at one`, EXIT.FAILURE);
  throw new CliError(`the sandbox refused the reward (${res.status}): ${body?.detail?.msg ?? text}`, EXIT.FAILURE);
}

export default defineCommand({
  meta: {
    name: "sandbox",
    description:
      "start the in-memory service (seeded with example data), list its players and print how to point hub-agent at it",
  },
  args: {
    ...globalArgs,
    port: { type: "string", description: "port on 127.0.0.1 (default: any free port)", valueHint: "N" },
    key: { type: "string", description: "the API key it accepts (default: a random one)" },
    seed: { type: "string", description: "examples or empty", valueHint: "examples|empty" },
  },
  subCommands: { reward },
  async run({ args, data }) {
    const ctx = createContext(args, data);
    const port = args.port === undefined ? 0 : Number(args.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new CliError(`--port ${args.port} is not a port: use a number from 1 to 65535`, EXIT.USAGE);
    const seed = args.seed ?? "examples";
    if (seed !== "examples" && seed !== "empty")
      throw new CliError(`--seed ${seed} is not a seed: use examples or empty`, EXIT.USAGE);
    if (args.key !== undefined && !/^\S+$/.test(args.key))
      throw new CliError(`--key "${args.key}" is not a usable key: use letters and digits, no spaces`, EXIT.USAGE);
    const [{ startSandbox }, { sandboxPlayers }] = await Promise.all([
      import("../../lib/sandbox/index.ts"),
      import("../../lib/sandbox/players.ts"),
    ]);
    let sb;
    try {
      sb = await startSandbox({ port, key: args.key, seed });
    } catch (e) {
      throw new CliError(
        `cannot listen on 127.0.0.1:${port} (${(e as Error).message}): choose another --port`,
        EXIT.FAILURE,
      );
    }
    const players = sandboxPlayers(sb.state);
    const config = configFile(sb, players);
    // Listening for Ctrl-C before saying "Stop with Ctrl-C.": one pressed as soon as it shows stops it cleanly.
    const stopped = new Promise<void>((resolve) => {
      process.once("SIGINT", resolve);
      process.once("SIGTERM", resolve);
    });
    ctx.emit({ url: sb.url, key: sb.key, server_id: sb.serverId, serverbundle_id: sb.bundleId, players, config });
    if (!ctx.json) introduce(ctx, sb, players, config);
    await stopped;
    await sb.stop();
    ctx.logger.info("in-memory service stopped");
  },
});

/** A complete configuration for this sandbox and the simulated game, with the seeded players online in it. */
function configFile(sb: { url: string; key: string; serverId: string }, players: SandboxPlayer[]): string {
  const lines = [
    "[api]",
    `url = ${JSON.stringify(sb.url)}`,
    `key = ${JSON.stringify(sb.key)}`,
    `server_id = ${JSON.stringify(sb.serverId)}`,
    "",
    "[game]",
    'bridge = "sim"',
  ];
  if (players.length)
    lines.push("", "[game.sim]", `players = [${players.map((p) => JSON.stringify(`${p.id}:${p.nick}`)).join(", ")}]`);
  // A reward added while `run` runs shows within seconds rather than a minute; run and doctor warn, as they should.
  lines.push(
    "",
    "[intervals]",
    "rewards = 10  # seconds, for trying rewards out; keep the default 60 on a real server",
  );
  return lines.join("\n") + "\n";
}

function introduce(
  ctx: Context,
  sb: { url: string; key: string; serverId: string },
  players: SandboxPlayer[],
  config: string,
) {
  const lines = [`in-memory service listening at ${sb.url}`, ""];
  if (players.length) {
    const w = (f: (p: SandboxPlayer) => string, title: string) =>
      Math.max(title.length, ...players.map(f).map((s) => s.length));
    const [nw, iw, uw] = [w((p) => p.nick, "nick"), w((p) => p.id, "platform id"), w((p) => p.user_id, "VyHub user")];
    const row = (a: string, b: string, c: string, d: string) =>
      `  ${a.padEnd(nw)}  ${b.padEnd(iw)}  ${c.padEnd(uw)}  ${d}`.trimEnd();
    lines.push("its players (they are online in the simulated game of the configuration below):");
    lines.push(row("nick", "platform id", "VyHub user", "what the service holds"));
    for (const p of players) lines.push(row(p.nick, p.id, p.user_id, p.notes.join("; ")));
    lines.push("");
  }
  lines.push(
    "a configuration for it and the simulated game (save it as hub-agent.toml):",
    "",
    ...config
      .trimEnd()
      .split("\n")
      .map((l) => (l ? `  ${l}` : "")),
    "",
    "or in the environment:",
    `  export HUB_API_URL=${sb.url}`,
    `  export HUB_API_KEY=${sb.key}`,
    `  export HUB_API_SERVER_ID=${sb.serverId}`,
    "  export HUB_GAME_BRIDGE=sim",
    "  export HUB_INTERVALS_REWARDS=10",
  );
  if (players.length) lines.push(`  export HUB_GAME_SIM_PLAYERS=${players.map((p) => `${p.id}:${p.nick}`).join(",")}`);
  lines.push("");
  if (players.length) {
    const first = players[0]!.nick;
    lines.push(
      "give a player a reward (a purchase whose command runs on the game's console), from another terminal:",
      `  hub-agent sandbox reward ${first} 'say Thanks for your support, %nick%'`,
      "",
    );
  }
  lines.push("then run `hub-agent doctor` and `hub-agent run`. Stop with Ctrl-C.");
  for (const line of lines) ctx.say(line);
}
