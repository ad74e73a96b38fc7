/**
 * What the end-to-end tests against real game servers share: the agent and its bridge, configured from the
 * environment as an operator would, against the in-memory service, with every line the bridge reads recorded; free
 * loopback ports; the service-side lookups the steps assert on.
 */
import { rmSync } from "node:fs";
import * as dgram from "node:dgram";
import * as net from "node:net";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { Agent } from "../../lib/agent.ts";
import { createApi } from "../../lib/api/client.ts";
import { systemClock } from "../../lib/clock.ts";
import { loadConfig } from "../../lib/app/config.ts";
import type { BridgeEvent } from "../../lib/game/bridge.ts";
import { presetBridgeOptions } from "../../lib/game/index.ts";
import { PresetBridge, type PresetBridgeOptions } from "../../lib/game/preset-bridge.ts";
import type { LineSource } from "../../lib/game/sources/lines.ts";
import { errorMessage } from "../../lib/game/transports/transport.ts";
import { type ExitInfo, WrappedServer } from "../../lib/game/wrap/wrapped-server.ts";
import { memoryLogger } from "../../lib/log.ts";
import { loadMessages } from "../../lib/messages.ts";
import { startSandbox, type Sandbox } from "../../lib/sandbox/index.ts";
import { openStore } from "../../lib/store/index.ts";

export interface World {
  sb: Sandbox;
  bridge: PresetBridge;
  agent: Agent;
  /** The wrapped server, when hub-agent runs it (game.bridge = "wrapper"). */
  wrapped?: WrappedServer;
  /** The operator's terminal: what is written here is typed into the wrapped console. */
  console: PassThrough;
  /** What the operator's terminal shows of the server's console (hub-agent's stdout). */
  shown: () => string;
  /** Every line the bridge's sources delivered (the wrapped console, the log file). */
  lines: string[];
  events: BridgeEvent[];
  /** Every command the bridge sent the game, with the game's reply (or why there was none). */
  exchanges: Exchange[];
  exits: ExitInfo[];
  logger: ReturnType<typeof memoryLogger>;
  home: string;
  /** The operator's configuration (environment only), also for the CLI commands. */
  env: Record<string, string>;
}

type BridgeTransport = PresetBridgeOptions["transport"];

export interface Exchange {
  command: string;
  reply?: string;
  error?: string;
}

/** The same transport, also recording every command and its reply. */
export function recordingTransport(transport: BridgeTransport, exchanges: Exchange[]): BridgeTransport {
  return {
    send: async (command, opts) => {
      const exchange: Exchange = { command };
      exchanges.push(exchange);
      try {
        exchange.reply = await transport.send(command, opts);
        return exchange.reply;
      } catch (e) {
        exchange.error = errorMessage(e);
        throw e;
      }
    },
    close: () => transport.close(),
    on: (event, fn) => transport.on(event, fn),
  };
}

/** The same source, also recording every line for the assertions. */
export function recording(source: LineSource, lines: string[]): LineSource {
  return {
    start: (onLine) =>
      source.start((line, stream) => {
        lines.push(line);
        onLine(line, stream);
      }),
    stop: () => source.stop(),
  };
}

/**
 * The agent with its game bridge, configured by `game` (HUB_GAME_* variables) plus the service and storage (in
 * `home`), started once the game is ready. Queue and reward rounds run every 2 s; the player list is read when a
 * step asks for it and the ban list an hour apart, so a kick after a CLI ban is its "sanctions changed" marker's doing.
 */
export async function startWorld(home: string, game: Record<string, string>): Promise<World> {
  const sb = await startSandbox();
  const env = {
    HUB_API_URL: sb.url,
    HUB_API_KEY: sb.key,
    HUB_API_SERVER_ID: sb.serverId,
    HUB_STORAGE_DIR: join(home, "data"),
    HUB_INTERVALS_PLAYER_POLL: "3600",
    HUB_INTERVALS_QUEUES: "2",
    HUB_INTERVALS_REWARDS: "2",
    HUB_INTERVALS_BANS: "3600",
    ...game,
  };
  const loaded = await loadConfig({ env, cwd: home });
  if (!loaded.ok) throw new Error(loaded.problems.join("\n"));
  const config = loaded.config;
  const logger = memoryLogger();
  const console = new PassThrough();
  const output = new PassThrough();
  let shownText = "";
  output.on("data", (d) => (shownText += String(d)));
  const opts = await presetBridgeOptions(config, { clock: systemClock, logger, input: console, output });
  const wrapped = opts.process instanceof WrappedServer ? opts.process : undefined;
  const exits: ExitInfo[] = [];
  wrapped?.supervisor.on("exit", (e) => exits.push(e));
  const lines: string[] = [];
  const exchanges: Exchange[] = [];
  const bridge = new PresetBridge({
    ...opts,
    transport: recordingTransport(opts.transport, exchanges),
    sources: (opts.sources ?? []).map((s) => recording(s, lines)),
  });
  const events: BridgeEvent[] = [];
  bridge.on((e) => void events.push(e));
  const api = createApi({ url: sb.url, key: sb.key, retries: 0, clock: systemClock, timeoutMs: 5000 });
  const agent = new Agent({
    config,
    api,
    store: await openStore({ dir: config.storage.dir, clock: systemClock }),
    bridge,
    clock: systemClock,
    logger,
    messages: await loadMessages(config.lang, { logger }),
    jitter: 0,
  });
  const w: World = {
    sb,
    bridge,
    agent,
    console,
    shown: () => shownText,
    lines,
    events,
    exchanges,
    exits,
    logger,
    home,
    env,
  };
  if (wrapped) w.wrapped = wrapped;
  await bridge.start();
  await wrapped?.supervisor.whenReady();
  if (!(await agent.start())) throw new Error("the agent did not start");
  return w;
}

export async function stopWorld(w: World | undefined): Promise<void> {
  if (!w) return;
  await w.agent.stop();
  await w.bridge.stop();
  await w.sb.stop();
  rmSync(w.home, { recursive: true, force: true });
}

/** The names of the players the agent has let in, sorted. */
export const online = (w: World) => [...w.agent.players.values()].map((p) => p.name).sort();

/** A player's service user (CENTRAL: the games that know players by name). */
export function userOf(w: World, name: string) {
  const user = w.sb.state.findUser(name, "CENTRAL");
  if (!user) throw new Error(`${name} has no service user`);
  return user;
}

export const bansOf = (w: World, name: string) =>
  [...w.sb.state.bans.values()].filter((b) => b.user_id === userOf(w, name).id);

/** A port free on loopback at this moment (the game binds it next). */
export async function freePort(kind: "tcp" | "udp"): Promise<number> {
  // The system may give the same free port to the next bind(0) once this one closed it: two ports asked for one
  // after the other (a game's and the plugin link's) came back equal, and the second server could not listen.
  for (;;) {
    const port = await unusedPort(kind);
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    return port;
  }
}

/** Every port freePort gave this test process: none is given twice. */
const handedOut = new Set<number>();

async function unusedPort(kind: "tcp" | "udp"): Promise<number> {
  if (kind === "udp") {
    const s = dgram.createSocket("udp4");
    await new Promise<void>((resolve) => s.bind(0, "127.0.0.1", () => resolve()));
    const { port } = s.address();
    await new Promise<void>((resolve) => s.close(() => resolve()));
    return port;
  }
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", () => resolve()));
  const { port } = s.address() as net.AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}
