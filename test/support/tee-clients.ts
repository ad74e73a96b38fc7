/**
 * Debian's Teeworlds 0.7.5 and DDNet 16.4 clients as a human player in the end-to-end tests (./game-client.ts runs
 * them on a display of their own). Neither reads commands on stdin: the player chats through key binds written into
 * the client's config and pressed with xdotool. What the player sees (chat, the reason of a kick) is in the client's
 * console output, which both print on stdout.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { clientEnv, clientMissing, GameClient, XDOTOOL } from "./game-client.ts";
import { spawn } from "./procs.ts";
import { until } from "./until.ts";

export const TEEWORLDS_CLIENT = "/usr/games/teeworlds";
export const DDNET_CLIENT = "/usr/games/DDNet";

/** What the clients are told at start: a small window, few frames, no sound, no start menu, the binds. */
function settings(name: string, binds: Record<string, string>, extra: string[]): string {
  const quoted = (s: string) => `"${s.replace(/["\\]/g, "\\$&")}"`;
  return [
    `player_name ${quoted(name)}`,
    "snd_enable 0",
    "gfx_fullscreen 0",
    "gfx_screen_width 400",
    "gfx_screen_height 300",
    "gfx_vsync 0",
    "gfx_high_detail 0",
    "cl_show_welcome 0",
    ...extra,
    // The games name keys in lower case (`f5`); an unknown name binds nothing, silently.
    ...Object.entries(binds).map(([key, command]) => `bind ${key.toLowerCase()} ${quoted(command)}`),
  ].join("\n");
}

export interface TeeClientOptions {
  display: string;
  home: string;
  name: string;
  /** Where the server is, as the client's `connect` takes it. */
  server: string;
  /** X key name (`F5`) → console command, pressed with `press()`. */
  binds: Record<string, string>;
  /** A command line to run the client with (`ip netns exec <ns>` for a server in a network namespace). */
  prefix?: string[];
}

/** Debian's Teeworlds 0.7.5 client (it reads `settings07.cfg` from ~/.local/share/teeworlds). */
export function teeworldsClient(o: TeeClientOptions): GameClient {
  const dir = join(o.home, ".local", "share", "teeworlds");
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "settings07.cfg"),
    settings(o.name, o.binds, ["gfx_limitfps 1", "gfx_maxfps 10", "cl_skip_start_menu 1"]),
  );
  return new GameClient([...(o.prefix ?? []), TEEWORLDS_CLIENT, `connect ${o.server}`], clientEnv(o.display, o.home));
}

/** Debian's DDNet 16.4 client (it reads `settings_ddnet.cfg` from ~/.local/share/ddnet). */
export function ddnetClient(o: TeeClientOptions): GameClient {
  const dir = join(o.home, ".local", "share", "ddnet");
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "settings_ddnet.cfg"),
    settings(o.name, o.binds, ["gfx_refresh_rate 10", "cl_refresh_rate 10"]),
  );
  return new GameClient([...(o.prefix ?? []), DDNET_CLIENT, `connect ${o.server}`], clientEnv(o.display, o.home));
}

/** Presses a key (an X key name: `F5`) on the display, as the player would: the client runs what it is bound to. */
export async function press(display: string, key: string): Promise<void> {
  const p = spawn([XDOTOOL, "key", key], { env: { DISPLAY: display }, stdout: "ignore", stderr: "pipe" });
  if ((await p.exited) !== 0) throw new Error(`xdotool key ${key}: ${await new Response(p.stderr).text()}`);
}

/**
 * Presses a key until `done` (the client showing what the key did): a client that has just joined may still be
 * loading and drop a key, as a player would press it again. Once a second, for at most `timeoutMs`.
 */
export async function pressUntil(display: string, key: string, done: () => boolean, timeoutMs = 90_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!done()) {
    if (performance.now() > deadline) throw new Error(`pressing ${key} did nothing for ${timeoutMs} ms`);
    await press(display, key);
    await until(done, `${key} to take effect`, { timeoutMs: 1000, everyMs: 50 }).catch(() => {});
  }
}

/** Why these clients can't run here (xdotool too), or undefined. */
export function teeClientMissing(client: string, packageName: string): string | undefined {
  return clientMissing(client, packageName, { [XDOTOOL]: "xdotool" });
}
