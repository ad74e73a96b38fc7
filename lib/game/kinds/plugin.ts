/**
 * `game.bridge = "plugin"`: a small plugin inside the game server connects to hub-agent and speaks the plugin
 * protocol (docs/plugin-protocol.md): joins with ids, leaves, chat, spawns, deaths and group changes as events;
 * the player list, kicks, messages, groups and console commands as requests. hub-agent listens on
 * `[game.rcon] host:port` (loopback unless `allow_remote`), and `password` is the token the plugin presents.
 */
import type { Check } from "../../check.ts";
import { isLoopback } from "../../loopback.ts";
import { errorMessage, TransportError } from "../transports/transport.ts";
import type { BridgeKind, RemoteConsoleSection } from "./kind.ts";
import { passwordProblems } from "./remote.ts";

/** Where hub-agent listens for the plugin when `game.rcon.port` is not set. */
export const PLUGIN_PORT = 25585;
/**
 * Whoever holds the port while hub-agent is down can get the plugin's HMAC of a challenge it chose, and try tokens
 * against it offline: only a long random token makes that hopeless.
 */
export const MIN_TOKEN_CHARS = 16;
const TOKEN_FIX = `use a random one of at least ${MIN_TOKEN_CHARS} characters (openssl rand -hex 24), in the plugin's settings too`;

type PluginSection = RemoteConsoleSection & { allow_remote?: boolean };

export const plugin: BridgeKind<PluginSection> = {
  name: "plugin",
  title: "plugin protocol",
  help: "plugin (a plugin in the game server connects to hub-agent; docs/plugin-protocol.md)",
  section: "rcon",
  console: false,
  listsPlayers: true,
  validate(raw) {
    const problems = passwordProblems(raw, plugin);
    const token = raw.get("game.rcon.password");
    if (token !== undefined && String(token).trim().length < MIN_TOKEN_CHARS)
      problems.push(
        `game.rcon.password (${raw.where("game.rcon.password")}) is too short for a plugin token: ${TOKEN_FIX}`,
      );
    const host = String(raw.get("game.rcon.host") ?? "127.0.0.1").trim();
    const allow = raw.get("game.rcon.allow_remote");
    if (!isLoopback(host) && !(allow === true || ["true", "1", "yes"].includes(String(allow).toLowerCase())))
      problems.push(
        `game.rcon.host = "${host}" (${raw.where("game.rcon.host")}) is not a loopback address, so plugins on other machines could try tokens: use 127.0.0.1 when the game server runs here, or set game.rcon.allow_remote = true if it runs elsewhere`,
      );
    return problems;
  },
  async create(input) {
    const { PluginLink } = await import("../transports/plugin-link.ts");
    const { clock, logger } = input.deps;
    const link = new PluginLink({ ...addressOf(input.section), clock, logger });
    return { transport: link, structured: link };
  },
  async check(input, { timeoutMs }): Promise<Check> {
    const { PluginLink } = await import("../transports/plugin-link.ts");
    const address = addressOf(input.section);
    const link = new PluginLink({ ...address, timeoutMs });
    const where = link.target;
    try {
      await link.start();
    } catch (e) {
      await link.close();
      return {
        name: "game",
        status: "fail",
        message: errorMessage(e),
        fix: `if hub-agent runs already, \`hub-agent status\` tells whether its plugin is connected; otherwise free the port or change game.rcon.port (and the plugin's settings with it)`,
        kind: "failure",
      };
    }
    try {
      const list = await link.players({ timeoutMs });
      const names = list.players.map((p) => p.name);
      const shown = names.length > 5 ? [...names.slice(0, 5), "…"] : names;
      return {
        name: "game",
        status: "ok",
        message: `plugin protocol ${where} (${input.preset.title}): a plugin connected, token accepted; ${names.length} players online${names.length ? `: ${shown.join(", ")}` : ""}`,
      };
    } catch (e) {
      const auth = e instanceof TransportError && e.code === "auth";
      return {
        name: "game",
        status: "fail",
        message: `plugin protocol ${where}: ${errorMessage(e)}`,
        fix: auth
          ? "put the same token in game.rcon.password (HUB_GAME_RCON_PASSWORD) and in the plugin's settings"
          : `start the game server with the plugin installed, pointed at ${where} with the token (docs/plugin-protocol.md); it reconnects every few seconds`,
        kind: auth ? "config" : "unreachable",
      };
    } finally {
      await link.close();
    }
  },
};

function addressOf(section: PluginSection): { host: string; port: number; token: string } {
  if (section.password === undefined) throw new Error("game.rcon.password is missing");
  // A token from password_file is read after validate: checked here, before the port is opened.
  if (section.password.length < MIN_TOKEN_CHARS)
    throw new Error(`the plugin token (game.rcon.password or password_file) is too short: ${TOKEN_FIX}`);
  return { host: section.host, port: section.port ?? PLUGIN_PORT, token: section.password };
}
