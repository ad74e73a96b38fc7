/**
 * The real OpenArena dedicated server (Debian package `openarena-server`, ioquake3) as the tests start it: loopback
 * only (IPv4 and IPv6), no master servers, its files under the test's directory (docs/game-consoles.md §7).
 * `.ci/run` installs it as root; a test that needs it reports itself skipped, with SKIP_REASON, when it is missing.
 */
import { Buffer } from "node:buffer";
import * as dgram from "node:dgram";
import { existsSync } from "node:fs";
import { until } from "./until.ts";

export const OPENARENA_SERVER = process.env.HUB_OPENARENA_SERVER ?? "/usr/games/openarena-server";
export const openarenaInstalled = existsSync(OPENARENA_SERVER);
export const OPENARENA_SKIP_REASON =
  `needs ${OPENARENA_SERVER} (Debian package openarena-server; .ci/run installs it as root, or run ` +
  "`apt-get install openarena-server`, or set HUB_OPENARENA_SERVER)";

const set = (name: string, value: string) => ["+set", name, value];

/**
 * What a test adds to an operator's command line: the game on 127.0.0.1:<port> and [::1]:<port> only (net_enabled
 * 11 = IPv4 + IPv6 + no LAN multicast socket), every master server blank (a LAN server sends no heartbeat anyway),
 * its files under <home> (instead of ~/.openarena).
 */
export function openarenaTestSettings(port: number, home: string): string[] {
  return [
    ...set("net_enabled", "11"),
    ...set("net_ip", "127.0.0.1"),
    ...set("net_ip6", "::1"),
    ...set("net_port", String(port)),
    ...set("net_port6", String(port)),
    ...[1, 2, 3, 4, 5].flatMap((n) => set(`sv_master${n}`, "")),
    ...set("sv_hostname", "hub-agent-e2e"),
    ...set("fs_homepath", home),
  ];
}

/**
 * An operator's command line (the docs') as a test runs it: the test's launcher and settings, put before the
 * first `+map` (ioq3 applies every `+set` at start-up anyway).
 */
export function forTest(command: string[], port: number, home: string): string[] {
  const [launcher, ...args] = command;
  if (launcher !== "/usr/games/openarena-server") throw new Error(`not the OpenArena server: ${launcher}`);
  const map = args.indexOf("+map");
  const at = map < 0 ? args.length : map;
  return [OPENARENA_SERVER, ...args.slice(0, at), ...openarenaTestSettings(port, home), ...args.slice(at)];
}

/** A wrapped server's command line: console on the piped stdin (`ttycon 0`), bots allowed, map oa_dm1. */
export function openarenaCommand(port: number, home: string): string[] {
  return forTest(
    ["/usr/games/openarena-server", ...set("ttycon", "0"), ...set("dedicated", "1"), ...set("bot_enable", "1")].concat([
      "+map",
      "oa_dm1",
    ]),
    port,
    home,
  );
}

/**
 * Waits until the server at 127.0.0.1:<port> answers `rcon <password> echo up`, asking from 127.0.0.2: ioq3 counts
 * rcon requests per address (burst 10, then one a second), and the requests sent while the map loads are all read at
 * once when it is up, so a probe from hub-agent's own address would leave it no burst.
 */
export async function rconAnswers(
  port: number,
  password: string,
  opts: { timeoutMs: number; abort?: () => string | undefined },
): Promise<void> {
  const socket = dgram.createSocket("udp4");
  let up = false;
  socket.on("message", (msg) => (up ||= msg.subarray(4).toString("latin1") === "print\nup\n"));
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.2", () => resolve()));
  const request = Buffer.concat([Buffer.from([0xff, 0xff, 0xff, 0xff]), Buffer.from(`rcon ${password} echo up`)]);
  let next = 0;
  try {
    await until(
      () => {
        if (!up && performance.now() >= next) {
          next = performance.now() + 1000;
          socket.send(request, port, "127.0.0.1");
        }
        return up;
      },
      "the server to answer rcon",
      opts,
    );
  } finally {
    socket.close();
  }
}
