/**
 * Teeworlds 0.7 through econ (docs/game-consoles.md §2.7, §3.6, §5.9). DDNet has a preset of its own (./ddnet.ts):
 * its rows, chat and join lines differ, and it runs every chat line starting with `/` as its own command. Players
 * have no account: the name is the identity (as in OpenArena), the client id the slot. Every pattern is anchored at
 * the console's own `[category]: ` (the econ transport turns both servers' lines into that form), and the formats
 * are those a real teeworlds-server 0.7.5 printed with Debian's 0.7.5 client on it (test/fixtures/econ/).
 */
import { knownByName, trimmed } from "./by-name.ts";
import { quoteForTeeworldsConsole, teeworldsQuoting } from "./escape.ts";
import type { ListedPlayer, PlayerList, Preset } from "./types.ts";

/**
 * `status`: `id=0 addr=127.0.0.1:58943 client=705 name='Jack' score=0 ` (`(Admin)` or `(Mod)` after the space for a
 * player logged in to rcon); a client still connecting is `id=1 addr=… connecting`, not a player yet. The name is
 * quoted as it is: it may hold `'`, so it runs to the last `' score=`. Releases before 0.7.5 printed `[Server]`.
 */
export const ROW =
  /^\[[Ss]erver\]: id=(\d+) addr=\S+ client=[0-9a-f]+ name='(.*)' score=-?\d+ ?(?:\((?:Admin|Mod)\))?$/;

/** The players of a `status` reply: every line `row` matches, its first group the slot, its second the name. */
export function statusParser(row: RegExp): (reply: string) => PlayerList {
  return (reply) => {
    const players: ListedPlayer[] = [];
    for (const line of reply.split(/\r?\n/)) {
      const m = row.exec(line);
      const name = m?.[2]?.trim();
      if (m && name) players.push({ id: name, name, slot: m[1]! });
    }
    return { players };
  };
}

export const parseTeeworldsStatus = statusParser(ROW);

/** What Teeworlds 0.7 and DDNet share: the console, its escaping, the commands. */
export const econGame = {
  ...knownByName(trimmed),
  colours: "strip",
  commands: {
    // The player sees `Kicked (<reason>)`.
    kick: "kick {slot} {reason}",
    broadcast: "say {text}",
    stop: "shutdown",
  },
  echo: (marker: string) => `echo ${marker}`,
  escape: quoteForTeeworldsConsole,
  quoting: teeworldsQuoting,
} as const satisfies Partial<Preset>;

export const teeworlds: Preset = {
  ...econGame,
  name: "teeworlds",
  title: "Teeworlds",
  commandPrefix: "/",
  maxPlayers: 16,
  consoles: {
    econ: {
      port: 8303,
      enable:
        "set ec_port, ec_password and ec_bindaddr 127.0.0.1 in the server's config (econ is off without ec_port; 0.7.5 then listens on 127.0.0.1 only)",
    },
  },
  lines: {
    // `player='<id>:<name>'`: the name runs to the last quote, so a quote in it can't end it early. A team change
    // prints `team=0->-1`: the player is online already, so it changes nothing.
    connect: [/^\[game\]: team_join player='(?<slot>\d+):(?<name>.+)' team=-?\d+(?:->-?\d+)?$/],
    disconnect: [/^\[game\]: leave player='(?<slot>\d+):(?<name>.+)'$/],
    // `<mode>:<id>:<name>: <text>`, mode 1 (all; team chat is `[teamchat]`, whispers are not printed). The server's
    // own messages (`say`) are `*** …`, never a player. The name ends at the first ": "; the bridge takes the
    // speaker from the slot and ignores a line whose name is not theirs (a name holding ": ").
    chat: [/^\[chat\]: \d+:(?<slot>\d+):(?<name>.+?): (?<text>.*)$/],
  },
  list: { command: "status", parse: parseTeeworldsStatus },
};
