/**
 * Teeworlds 0.7 and DDNet through econ (docs/game-consoles.md §2.7, §3.6). Players have no account: the name is
 * the identity (as in OpenArena), the client id the slot. Console lines arrive as `[category]: text`. Seen on a
 * real teeworlds-server 0.7.5 here: econ's login, `echo`, `say` (`[chat]: *** text`) and an empty `status`; the
 * join, leave, chat and status-row formats follow the game's source (no headless client can join here).
 */
import { knownByName, trimmed } from "./by-name.ts";
import { quoteForTeeworldsConsole, teeworldsQuoting } from "./escape.ts";
import type { ListedPlayer, PlayerList, Preset } from "./types.ts";

/** `status`: `id=0 addr=1.2.3.4:8303 name='nick' …` (a client still connecting prints `connecting` instead). */
export const ROW = /^(?:\[server\]: )?id=(\d+) addr=\S+ name='(.*)' (?:client|score)=/;

export function parseTeeworldsStatus(reply: string): PlayerList {
  const players: ListedPlayer[] = [];
  for (const line of reply.split(/\r?\n/)) {
    const m = ROW.exec(line);
    if (m?.[2]) players.push({ id: m[2], name: m[2], slot: m[1]! });
  }
  return { players };
}

export const teeworlds: Preset = {
  name: "teeworlds",
  title: "Teeworlds / DDNet",
  ...knownByName(trimmed),
  colours: "strip",
  commandPrefix: "/",
  maxPlayers: 16,
  consoles: {
    econ: {
      port: 8303,
      enable: "set ec_port, ec_password and ec_bindaddr 127.0.0.1 in the server's config (econ is off without ec_port)",
    },
  },
  lines: {
    // `player='<id>:<name>'`: the name runs to the last quote, so a quote in it can't end it early.
    connect: [/^\[game\]: team_join player='(?<slot>\d+):(?<name>.+)' team=/],
    disconnect: [/^\[game\]: leave player='(?<slot>\d+):(?<name>.+)'$/],
    // `<id>:<team>:<name>: <text>`. The name is the player (the preset's identity), so it runs to the last ": ", as
    // on OpenArena: a player named `Alice: /ban x` can't speak as Alice (a text with ": " garbles only its own line).
    // The server's own messages (`say`) are `*** …`, never a player.
    chat: [/^\[chat\]: (?<slot>\d+):-?\d+:(?<name>.+): (?<text>.*)$/],
  },
  list: { command: "status", parse: parseTeeworldsStatus },
  commands: {
    kick: "kick {slot}",
    broadcast: "say {text}",
    stop: "shutdown",
  },
  echo: (marker) => `echo ${marker}`,
  escape: quoteForTeeworldsConsole,
  quoting: teeworldsQuoting,
};
