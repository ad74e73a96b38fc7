/**
 * `hub-agent doctor`'s game checks: can hub-agent reach the game's console, is the password right, does the
 * player list answer (rcon, q3rcon); can it start the server (wrapper); is the log file there (log_file).
 * The wrapper's server is not started: doctor must not take a second copy of the game's ports.
 */
import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import { delimiter, isAbsolute, join, resolve } from "node:path";
import type { Config } from "../config/index.ts";
import type { Check } from "../check.ts";
import { resolvePreset } from "./presets/index.ts";
import type { Preset } from "./presets/types.ts";
import { Q3Rcon } from "./transports/q3-rcon.ts";
import { SourceRcon } from "./transports/source-rcon.ts";
import { errorMessage, type Transport, TransportError } from "./transports/transport.ts";

export async function checkGame(config: Config, opts: { timeoutMs?: number } = {}): Promise<Check[]> {
  const preset = resolvePreset(config.game.preset ?? "", config.game.overrides);
  const checks: Check[] = [];
  if (config.game.bridge === "wrapper") checks.push(await checkWrapper(config, preset));
  else checks.push(await checkConsole(config, preset, opts.timeoutMs ?? 5000));
  if (config.game.log_file) checks.push(await checkLogFile(config.game.log_file));
  return checks;
}

/** Connect, authenticate, list the players. */
async function checkConsole(config: Config, preset: Preset, timeoutMs: number): Promise<Check> {
  const { rcon } = config.game;
  const q3 = config.game.bridge === "q3rcon";
  const defaults = q3 ? preset.q3rcon : preset.rcon;
  if (!defaults) throw new Error(`the ${preset.name} preset has no ${config.game.bridge} defaults`);
  const target = `${rcon.host}:${rcon.port ?? defaults.port}`;
  const what = q3 ? "Quake 3 rcon" : "RCON";
  const common = { host: rcon.host, port: rcon.port ?? defaults.port, password: rcon.password ?? "", timeoutMs };
  let transport: Transport | undefined;
  try {
    if (q3) transport = new Q3Rcon(common);
    else {
      const source = new SourceRcon({ ...common, dialect: preset.rcon!.dialect, backoff: { initialMs: timeoutMs } });
      transport = source;
      await connectOnce(source, timeoutMs);
    }
    const reply = await transport.send(preset.list.command, { timeoutMs });
    const list = preset.list.parse(reply);
    const names = list.players.map((p) => p.name);
    const shown = names.length > 5 ? [...names.slice(0, 5), "…"] : names;
    const who = names.length ? `: ${shown.join(", ")}` : "";
    return {
      name: "game",
      status: "ok",
      message: `${what} ${target} (${preset.title}): password accepted; ${names.length} players online${who}`,
    };
  } catch (e) {
    const code = e instanceof TransportError ? e.code : undefined;
    if (code === "auth") {
      return {
        name: "game",
        status: "fail",
        message: `${what} ${target} refused the password`,
        fix: `copy the server's password into game.rcon.password / HUB_GAME_RCON_PASSWORD (${defaults.enable})${q3 ? "" : "; srcds bans an address after repeated wrong passwords, so fix it before trying again"}`,
        kind: "config",
      };
    }
    return {
      name: "game",
      status: "fail",
      // Transport errors name the address already.
      message: errorMessage(e).includes(target) ? errorMessage(e) : `${what} ${target}: ${errorMessage(e)}`,
      fix: `check that the server runs with ${what} on: ${defaults.enable}; then game.rcon.host and game.rcon.port, and the firewall`,
      kind: "failure",
    };
  } finally {
    await transport?.close();
  }
}

/** Connects and authenticates once: the first failure is the answer (no retries with backoff). */
async function connectOnce(rcon: SourceRcon, timeoutMs: number): Promise<void> {
  let off = () => {};
  const failed = new Promise<never>((_, reject) => {
    off = rcon.on("state", (state, error) => {
      if (error && state !== "connected") reject(error);
    });
  });
  try {
    await Promise.race([rcon.connect({ timeoutMs }), failed]);
  } finally {
    off();
  }
}

/** The server hub-agent would start: found and executable. */
async function checkWrapper(config: Config, preset: Preset): Promise<Check> {
  const argv = config.game.wrapper.command ?? [];
  const program = argv[0] ?? "";
  const cwd = config.game.wrapper.cwd ?? process.cwd();
  const found = await findExecutable(program, cwd);
  if (!found) {
    return {
      name: "game",
      status: "fail",
      message: `game.wrapper.command: ${JSON.stringify(program)} is not an executable file${program.includes("/") ? "" : " on PATH"}`,
      fix: "give the full path to the dedicated server (or its start script) as the first element, and make it executable (chmod +x)",
      kind: "failure",
    };
  }
  const stop = preset.commands.stop ? `stops it with "${preset.commands.stop}"` : "stops it with SIGTERM";
  return {
    name: "game",
    status: "ok",
    message: `hub-agent run starts ${found} (${preset.title}) in ${cwd} and ${stop}`,
  };
}

async function findExecutable(program: string, cwd: string): Promise<string | undefined> {
  if (!program) return undefined;
  const candidates = program.includes("/")
    ? [isAbsolute(program) ? program : resolve(cwd, program)]
    : (process.env.PATH ?? "").split(delimiter).map((dir) => join(dir, program));
  for (const path of candidates) {
    try {
      if (!(await stat(path)).isFile()) continue;
      await access(path, constants.X_OK);
      return path;
    } catch {
      // next
    }
  }
  return undefined;
}

async function checkLogFile(path: string): Promise<Check> {
  try {
    await access(path, constants.R_OK);
    return { name: "log", status: "ok", message: `${path} is readable; hub-agent follows it from its end` };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const missing = code === "ENOENT";
    return {
      name: "log",
      status: missing ? "warn" : "fail",
      message: missing ? `${path} does not exist yet; hub-agent waits for it` : `${path} cannot be read (${code})`,
      fix: missing
        ? "check game.log_file, and that the game writes that log (Minecraft: logs/latest.log; srcds: log on; OpenArena: g_log)"
        : "give the user running hub-agent read access to the log",
      ...(missing ? {} : { kind: "failure" }),
    };
  }
}
