import { defineCommand } from "citty";
import { globalArgs, createContext } from "../context.ts";
import { CliError, EXIT } from "../exit.ts";
import {
  type RewardOutcome,
  type RunningSandbox,
  type SandboxPlayer,
  addSandboxReward,
  openSandbox,
} from "../../lib/app/sandbox.ts";
import { helpMeta } from "../args.ts";

const reward = defineCommand({
  meta: helpMeta({
    name: "reward",
    description: "give a player of a running sandbox a reward whose command runs on the game's console",
    examples: [
      ["hub-agent sandbox reward Alice 'say Thanks, %nick%'", "run by the next rewards round while Alice is online"],
      ["hub-agent sandbox reward Bob 'say Hi' --event connect", "run when Bob next connects"],
    ],
  }),
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
    const r = await addSandboxReward(config.api, { player: args.player, command, event });
    if (r.kind !== "added") throw rewardRefused(r);
    const added = r.reward;
    ctx.emit(added);
    const when =
      event === "DIRECT"
        ? "a running `hub-agent run` carries it out in its next rewards round (every intervals.rewards seconds) while they are online"
        : `it runs on their next ${event.toLowerCase()}`;
    ctx.say(`reward ${added.id} added for ${added.user.username ?? args.player} (${added.user.id}): ${when}`);
  },
});

/** Why the sandbox did not add the reward, in one line. */
function rewardRefused(r: Exclude<RewardOutcome, { kind: "added" }>): CliError {
  switch (r.kind) {
    case "unreachable":
      return new CliError(
        `no sandbox answers at ${r.url} (${r.error}): start one with \`hub-agent sandbox\` and point api.url at it`,
        EXIT.UNREACHABLE,
      );
    case "key_refused":
      return new CliError(`the sandbox at ${r.url} refused the API key: use the key it printed`, EXIT.CONFIG);
    case "unknown_player":
      return new CliError(
        r.known.length
          ? `no such player in the sandbox: use one of ${r.known.join(", ")}`
          : "the sandbox has no players (it was started with --seed empty): start it with the example data",
        EXIT.NOT_FOUND,
      );
    case "not_sandbox":
      return new CliError(`${r.url} is not a hub-agent sandbox (404): api.url must point at one`, EXIT.FAILURE);
    case "refused":
      return new CliError(`the sandbox refused the reward (${r.status}): ${r.detail}`, EXIT.FAILURE);
  }
}

export default defineCommand({
  meta: helpMeta({
    examples: [
      ["hub-agent sandbox", "any free port, a random key"],
      ["hub-agent sandbox --port 8787 --key try-it-out", "the README's Getting started"],
      ["hub-agent sandbox reward Alice 'say Thanks, %nick%'", "from another terminal: give Alice a reward"],
    ],
  }),
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
    const opened = await openSandbox({ port, key: args.key, seed });
    if (!opened.ok)
      throw new CliError(`cannot listen on 127.0.0.1:${port} (${opened.error}): choose another --port`, EXIT.FAILURE);
    const sb = opened.sandbox;
    // Listening for Ctrl-C before saying "Stop with Ctrl-C.": one pressed as soon as it shows stops it cleanly.
    const stopped = new Promise<void>((resolve) => {
      process.once("SIGINT", resolve);
      process.once("SIGTERM", resolve);
    });
    const { url, key, serverId: server_id, bundleId: serverbundle_id, players, config } = sb;
    ctx.emit({ url, key, server_id, serverbundle_id, players, config });
    if (!ctx.json) for (const line of introduction(sb)) ctx.say(line);
    await stopped;
    await sb.stop();
    ctx.logger.info("in-memory service stopped");
  },
});

/** What a person reads once it listens: its players, a configuration for it, what to try next. */
function introduction(sb: RunningSandbox): string[] {
  const { players, config } = sb;
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
  return lines;
}
