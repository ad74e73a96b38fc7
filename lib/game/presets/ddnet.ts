/**
 * DDNet (DDraceNetwork) through econ (docs/game-consoles.md §2.7, §3.6, §5.9), its own preset because its console
 * differs from Teeworlds 0.7's: lines are `yyyy-mm-dd hh:mm:ss I category: text` (the econ transport reads both
 * forms), `status` rows and chat put other fields in another order, joins name no player, and every chat line
 * starting with `/` is run as one of DDNet's own commands and never printed, so chat commands use `!`. The formats
 * are those a real DDNet-Server 16.4 printed with Debian's DDNet 16.4 client on it (test/fixtures/econ/).
 */
import { econGame, statusParser } from "./teeworlds.ts";
import type { Preset } from "./types.ts";

/**
 * `status`: `id=0 addr=<{127.0.0.1:56887}> name='Dora' client=16040 secure=yes flags=1`, then ` dnsbl=…` and
 * ` key=<ident> (Admin)` where set; `id=0 addr=<{…}> connecting` before the player is in. The name may hold `'`: it
 * runs to the last `' client=…` (a key's ident comes after it, and only an admin names keys).
 */
export const ROW =
  /^\[server\]: id=(\d+) addr=<\{\S+\}> name='(.*)' client=(?:0\.7:)?\d+ secure=(?:yes|no) flags=\d+(?= |$)/;

export const parseDdnetStatus = statusParser(ROW);

export const ddnet: Preset = {
  ...econGame,
  name: "ddnet",
  title: "DDNet",
  commandPrefix: "!",
  maxPlayers: 64,
  consoles: {
    econ: {
      port: 8303,
      enable:
        "set ec_port and ec_password in the server's config; for loopback only, ec_bindaddr 127.0.0.1 and sysctl net.ipv6.ip_nonlocal_bind=1 (DDNet 16.4 binds IPv6 to the same address's bytes, 7f00:1::, and without that sysctl keeps econ closed: \"econ: couldn't open socket\"; ec_bindaddr ::1 opens IPv4 on every interface)",
    },
  },
  lines: {
    // The only join line naming a player is a chat line of the server's (`*** 'Dora' entered and joined the
    // game`), which hub-agent's own `say` could print: the server's line with the slot is taken, and the player
    // list names who it is.
    connect: [/^\[server\]: player has entered the game\. ClientID=(?<slot>\d+) /],
    disconnect: [/^\[game\]: leave player='(?<slot>\d+):(?<name>.+)'$/],
    // `<id>:<team>:<name>: <text>`, team -2 for all (team chat is `[teamchat]`). As on Teeworlds the bridge takes
    // the speaker from the slot; the server's own messages are `*** …`.
    chat: [/^\[chat\]: (?<slot>\d+):-?\d+:(?<name>.+?): (?<text>.*)$/],
  },
  list: { command: "status", parse: parseDdnetStatus },
};
