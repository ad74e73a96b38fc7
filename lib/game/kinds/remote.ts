/**
 * What every network console kind shares: the password checks of `[game.rcon]`, the preset's defaults for this
 * console, and doctor's check (connect, authenticate, list the players; the first failure is the answer).
 */
import type { Check } from "../../check.ts";
import type { ConsoleDefaults, Preset } from "../presets/types.ts";
import { errorMessage, type Transport, TransportError } from "../transports/transport.ts";
import type { BridgeKind, KindInput, RawConfig, RemoteConsoleSection } from "./kind.ts";

/** The server's password: set exactly once, in the file or in a file of its own. */
export function passwordProblems(raw: RawConfig, kind: BridgeKind): string[] {
  const hasPassword = raw.get("game.rcon.password") !== undefined;
  const hasFile = raw.get("game.rcon.password_file") !== undefined;
  if (hasPassword && hasFile)
    return [
      `game.rcon.password and game.rcon.password_file are both set (${raw.where("game.rcon.password")}, ${raw.where("game.rcon.password_file")}): keep only one`,
    ];
  if (!hasPassword && !hasFile)
    return [
      `${raw.missing("game.rcon.password")}: game.bridge = "${kind.name}" (${raw.where("game.bridge")}) needs the server's ${kind.title} password (or put it in a file and set game.rcon.password_file)`,
    ];
  return [];
}

/** passwordProblems, and a password without whitespace: `consequence` says what the server makes of one, and the fix. */
export function spacelessPasswordProblems(raw: RawConfig, kind: BridgeKind, consequence: string): string[] {
  const problems = passwordProblems(raw, kind);
  const password = raw.get("game.rcon.password");
  if (!problems.length && password !== undefined && /\s/.test(String(password).trim()))
    problems.push(`game.rcon.password = [redacted] contains spaces, ${consequence}`);
  return problems;
}

/** The preset's defaults for this console (config validation made sure they exist). */
export function consoleOf(preset: Preset, kind: BridgeKind): ConsoleDefaults {
  const c = preset.consoles[kind.name];
  if (!c) throw new Error(`the ${preset.name} preset doesn't speak ${kind.title}`);
  return c;
}

export interface RemoteTarget {
  host: string;
  port: number;
  password: string;
}

/** Where the console is and its password, from `[game.rcon]` and the preset's default port. */
export function targetOf({ section, preset }: KindInput<RemoteConsoleSection>, kind: BridgeKind): RemoteTarget {
  const password = section.password;
  if (password === undefined) throw new Error("game.rcon.password is missing");
  return { host: section.host, port: section.port ?? consoleOf(preset, kind).port, password };
}

/**
 * doctor's check of a network console: `open` connects (and authenticates, where the protocol does that first);
 * then the preset's list command must answer with a list it can parse. `authNote` is added to a refused password's
 * fix (srcds bans an address after repeated failures).
 */
export async function checkRemote(
  input: KindInput<RemoteConsoleSection>,
  kind: BridgeKind,
  timeoutMs: number,
  open: (target: RemoteTarget) => Promise<Transport>,
  authNote = "",
): Promise<Check> {
  const { section, preset } = input;
  const defaults = consoleOf(preset, kind);
  const target = `${section.host}:${section.port ?? defaults.port}`;
  let transport: Transport | undefined;
  try {
    transport = await open({
      host: section.host,
      port: section.port ?? defaults.port,
      password: section.password ?? "",
    });
    const reply = await transport.send(preset.list.command, { timeoutMs });
    const names = preset.list.parse(reply).players.map((p) => p.name);
    const shown = names.length > 5 ? [...names.slice(0, 5), "…"] : names;
    const who = names.length ? `: ${shown.join(", ")}` : "";
    return {
      name: "game",
      status: "ok",
      message: `${kind.title} ${target} (${preset.title}): password accepted; ${names.length} players online${who}`,
    };
  } catch (e) {
    if (e instanceof TransportError && e.code === "auth") {
      return {
        name: "game",
        status: "fail",
        message: `${kind.title} ${target} refused the password`,
        fix: `copy the server's password into game.rcon.password / HUB_GAME_RCON_PASSWORD (${defaults.enable})${authNote}`,
        kind: "config",
      };
    }
    return {
      name: "game",
      status: "fail",
      // Transport errors name the address already.
      message: errorMessage(e).includes(target) ? errorMessage(e) : `${kind.title} ${target}: ${errorMessage(e)}`,
      fix: `check that the server runs with ${kind.title} on: ${defaults.enable}; then game.rcon.host and game.rcon.port, and the firewall`,
      kind: "failure",
    };
  } finally {
    await transport?.close();
  }
}
