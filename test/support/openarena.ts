/**
 * The real OpenArena dedicated server (Debian package `openarena-server`, ioquake3) as the tests start it: loopback
 * only, no master servers, console on the piped stdin, bots allowed (docs/game-consoles.md §7). `.ci/run` installs
 * it as root; a test that needs it reports itself skipped, with SKIP_REASON, when it is missing.
 */
import { existsSync } from "node:fs";

export const OPENARENA_SERVER = process.env.HUB_OPENARENA_SERVER ?? "/usr/games/openarena-server";
export const openarenaInstalled = existsSync(OPENARENA_SERVER);
export const OPENARENA_SKIP_REASON =
  `needs ${OPENARENA_SERVER} (Debian package openarena-server; .ci/run installs it as root, or run ` +
  "`apt-get install openarena-server`, or set HUB_OPENARENA_SERVER)";

/** The server's command line: listening on 127.0.0.1:<port>, its files under <home> (instead of ~/.openarena). */
export function openarenaCommand(port: number, home: string): string[] {
  const set = (name: string, value: string) => ["+set", name, value];
  return [
    OPENARENA_SERVER,
    ...set("ttycon", "0"),
    ...set("dedicated", "1"),
    ...set("net_enabled", "1"),
    ...set("net_ip", "127.0.0.1"),
    ...set("net_port", String(port)),
    ...set("sv_master1", ""),
    ...set("sv_master2", ""),
    ...set("sv_master3", ""),
    ...set("bot_enable", "1"),
    ...set("sv_hostname", "hub-agent-e2e"),
    ...set("fs_homepath", home),
    "+map",
    "oa_dm1",
  ];
}
