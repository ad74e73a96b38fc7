/**
 * A real human player beside the bots of the real-server tests: Hank, a game's own client (Debian's OpenArena or
 * Nexuiz client on a virtual display). He is asserted what the bots are, and seen from his side too (the client's
 * console): listed by the server's player list and counted; his chat command answered to him alone (on OpenArena,
 * a `!` line is left to the game's own admin system); an advert readable on his console; a reward run for him once;
 * `hub-agent ban Hank …` (the compiled CLI) kicks him while he plays, and again when he comes back. The steps run in
 * order, after the file's others, and leave him kicked. Skipped, with the reason, when the client is missing.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { advertLines } from "../../lib/features/adverts.ts";
import { sendStatus } from "../../lib/features/status.ts";
import { binary, hubBinary } from "../cli/binary.ts";
import {
  clientMissing,
  type GameClient,
  NEXUIZ_CLIENT,
  nexuizClient,
  OPENARENA_CLIENT,
  openarenaClient,
  startDisplay,
  XDOTOOL,
} from "../support/game-client.ts";
import { until } from "../support/until.ts";
import { bansOf, freePort, online, userOf, type World } from "./world.ts";

/** Software GL on a busy 2-core machine: loading the game and a map takes a while. */
const CLIENT = { timeoutMs: 120_000 };

/** How one game's client joins, chats and comes back, and what its console shows of the agent's doing. */
export interface HumanGame {
  title: string;
  /** Why the client can't run here, or undefined. */
  missing: string | undefined;
  /** Starts Hank's client; resolves once he is in the game and his chat reaches the server. */
  join(o: { display: string; home: string; host: string; port: number }): Promise<GameClient>;
  /** The console command that says `text` in chat. */
  say(text: string): string;
  /** The least time between two chat lines: the server drops faster ones, unanswered. */
  chatGapMs: number;
  /** Hank's address as the server's player list prints it. */
  listedAddress(host: string): string;
  dashboard: string;
  /** A `!` line the game answers itself, and its answer: the agent must leave it alone. */
  ownCommand?: { text: string; answer: string };
  /** His console's lines: the agent's private message, the advert, the former advert prefix, the reward, the kick. */
  sees: { tell: string; advert: string; formerPrefix: string; reward: string; kicked: string };
  /** The agent's kick command and what the server answers to it. */
  kick: { command: string; reply: string };
  /** Hank comes back after a kick. */
  rejoin(client: GameClient): void;
}

export const OPENARENA_HUMAN: HumanGame = {
  title: "OpenArena",
  missing: clientMissing(OPENARENA_CLIENT, "openarena"),
  async join(o) {
    const client = openarenaClient({ ...o, name: "Hank", clientPort: await freePort("udp") });
    await client.sees("Hank^7 entered the game", "Hank's client to enter the game", CLIENT);
    // A line typed as he enters reaches nobody: his chat works once his own line comes back to him.
    await client.retype('say "hello"', "Hank^7: ^2hello", "Hank's first chat line to come back", CLIENT.timeoutMs);
    return client;
  },
  say: (text) => `say "${text}"`,
  chatGapMs: 1500, // ioq3's flood protection: one client command a second
  listedAddress: (host) => `^7${host} `, // a human's address has no port in ioq3's status
  dashboard: ".dashboard",
  ownCommand: { text: "!ban Sarge 10 spam", answer: "!ban: ^7permission denied" },
  sees: {
    tell: "console_tell: Server dashboard: ",
    advert: "console: [*] Join our Discord: ^4discord.gg/example^7",
    formerPrefix: "console: [...] the former prefix",
    reward: "console: reward for Hank",
    kicked: "Hank^7 was kicked",
  },
  kick: { command: "clientkick ", reply: "Hank^7 was kicked" },
  rejoin: (client) => client.type("reconnect"),
};

export const NEXUIZ_HUMAN: HumanGame = {
  title: "Nexuiz",
  missing: clientMissing(NEXUIZ_CLIENT, "nexuiz", { [XDOTOOL]: "xdotool" }),
  async join(o) {
    const client = nexuizClient({ ...o, name: "Hank" });
    await client.sees(
      "Hank is spectating now",
      "Hank's client to join (as a spectator, as Nexuiz starts everyone)",
      CLIENT,
    );
    // Into the game, as a player pressing fire would; then his chat comes back to him.
    await client.retype("cmd join", "Hank is playing now", "Hank to play", CLIENT.timeoutMs);
    await client.retype("say hello", "Hank: hello", "Hank's first chat line to come back", CLIENT.timeoutMs);
    return client;
  },
  say: (text) => `say ${text}`,
  chatGapMs: 3500, // Nexuiz's g_chat_flood_spl: a chat line every 3 s
  // DarkPlaces prints the port, and IPv6 in brackets with all eight groups.
  listedAddress: (host) => `${host === "::1" ? "[0:0:0:0:0:0:0:1]" : host}:`,
  dashboard: "!dashboard",
  sees: {
    tell: "<Nexuiz 2.5.2 Server tells you> Server dashboard: ",
    advert: "<Nexuiz 2.5.2 Server> [*] Join our Discord: discord.gg/example",
    formerPrefix: "<Nexuiz 2.5.2 Server> [b6.] the former prefix",
    reward: '<Nexuiz 2.5.2 Server> reward for "Hank"',
    // Before it, the reason: `Kicked by Console: "You are banned …"`, which once did not arrive (the server drops him
    // right after sending it).
    kicked: "Server disconnected",
  },
  kick: { command: "kick # ", reply: 'Client "Hank" dropped' },
  // The console is down once he is disconnected; a key bind would not run there.
  rejoin: (client) => (client as ReturnType<typeof nexuizClient>).typeAtConsole("reconnect"),
};

/** What the agent sent the game lately (player lists left out), what it read and logged, for a failed wait. */
const recent = (w: World) =>
  [
    "the agent's last commands:",
    ...w.exchanges
      .filter((x) => x.command !== w.bridge.preset.list.command)
      .slice(-12)
      .map((x) => `${x.command} → ${JSON.stringify(x.reply ?? x.error)}`),
    "the last lines it read:",
    ...w.lines.slice(-20),
    "its last log lines:",
    ...w.logger.lines.slice(-15).map((l) => `${l.level} ${l.msg}`),
    "its players:",
    online(w).join(", "),
  ].join("\n");

/** Registers Hank's steps for `game`; `o.host` is the address he connects to. */
export function humanSteps(game: HumanGame, o: { world: () => World; port: () => number; host: string }): void {
  if (game.missing) console.warn(`SKIPPED: the ${game.title} human client steps ${game.missing}`);
  describe.skipIf(game.missing !== undefined)(`Hank, a real ${game.title} client over ${o.host}`, () => {
    let hank: GameClient | undefined;
    let stopDisplay: (() => Promise<void>) | undefined;
    let before = 0;
    const client = () => hank!;
    let saidAt = 0;
    const say = async (text: string) => {
      await Bun.sleep(Math.max(0, saidAt + game.chatGapMs - performance.now()));
      client().type(game.say(text));
      saidAt = performance.now();
    };
    const waitFor = (w: World) => ({ ...CLIENT, diagnostics: () => recent(w) });

    beforeAll(async () => {
      before = online(o.world()).length;
      const display = await startDisplay();
      stopDisplay = display.stop;
      const home = mkdtempSync(join(tmpdir(), "hub-client-"));
      hank = await game.join({ display: display.display, home, host: o.host, port: o.port() });
      saidAt = performance.now();
    }, 3 * CLIENT.timeoutMs);

    afterAll(async () => {
      await hank?.stop();
      await stopDisplay?.();
    });

    test(
      "Hank is in the server's player list, registered as a user and counted",
      async () => {
        const w = o.world();
        const status = await w.bridge.status();
        expect(status.players.map((p) => p.name)).toContain("Hank");
        // His row is a human's, with the address he came from.
        const list = w.exchanges.findLast(
          (x) => x.command === w.bridge.preset.list.command && x.reply?.includes("Hank"),
        );
        expect(list?.reply).toContain(game.listedAddress(o.host));
        await until(() => online(w).includes("Hank"), "Hank among the agent's players", CLIENT);
        // Every line that told of him named him right: no other player appeared for him.
        const joined = w.events.flatMap((e) => (e.type === "player_connect" ? [e.player.name] : []));
        expect(joined.filter((name) => name.includes("Hank"))).toEqual(["Hank"]);
        await until(() => w.agent.users.get("Hank") !== undefined, "the service user of Hank", CLIENT);
        expect(w.sb.state.findUser("Hank", "CENTRAL")).toMatchObject({ identifier: "Hank", username: "Hank" });
        await sendStatus(w.agent);
        expect(w.sb.state.servers.get(w.sb.serverId)?.users_current).toBe(before + 1);
      },
      CLIENT.timeoutMs,
    );

    test(
      `Hank's \`${game.dashboard}\` is answered to him alone, once`,
      async () => {
        const w = o.world();
        const commands = () => w.events.filter((e) => e.type === "chat_command" && e.player.name === "Hank");
        const bans = () => w.sb.control.requests({ method: "POST", path: "/ban/" }).length;
        const bansBefore = bans();
        if (game.ownCommand) {
          // The game's own `!` command answers him itself; the agent leaves it alone.
          await say(game.ownCommand.text);
          await say("!dashboard");
          await client().sees(game.ownCommand.answer, "the game's own answer", waitFor(w));
        }
        await say(game.dashboard);
        await client().sees(game.sees.tell, "the dashboard link in Hank's console", waitFor(w));
        expect(commands().map((e) => e.type === "chat_command" && e.command)).toEqual(["dashboard"]);
        expect(client().count(game.sees.tell)).toBe(1);
        expect(bans()).toBe(bansBefore);
      },
      CLIENT.timeoutMs,
    );

    test(
      "an advert reaches him readable (`[*] `), where the UTF-8 `[★] ` did not",
      async () => {
        const w = o.world();
        const content = "Join our Discord: <blue>discord.gg/example</blue>";
        for (const line of advertLines(content, w.agent.deps.messages, w.bridge.caps.colours ?? "strip")) {
          await w.bridge.message(null, line);
        }
        await client().sees(game.sees.advert, "the advert in Hank's console", waitFor(w));
        // Why: the former prefix, said as it is, reaches him garbled.
        await w.bridge.message(null, "[★] the former prefix");
        await client().sees(game.sees.formerPrefix, "the UTF-8 prefix in Hank's console", waitFor(w));
      },
      CLIENT.timeoutMs,
    );

    test(
      "a reward for Hank runs on the server, once, and he sees it",
      async () => {
        const w = o.world();
        const applied = w.sb.state.addReward({
          user_id: userOf(w, "Hank").id,
          reward: { name: "Greeting", type: "COMMAND", data: { command: "say reward for %nick%" }, on_event: "DIRECT" },
        });
        await client().sees(game.sees.reward, "the reward's say in Hank's console", waitFor(w));
        const reported = () => applied.executed_on.includes(w.sb.serverId);
        await until(reported, "the reward reported (PATCH executed_on)", CLIENT);
        const patches = w.sb.control.requests({ method: "PATCH", path: `/packet/reward/applied/${applied.id}` });
        expect(patches).toHaveLength(1);
        expect(client().count(game.sees.reward)).toBe(1);
      },
      CLIENT.timeoutMs,
    );

    test(
      "`hub-agent ban Hank 10 griefing` (the compiled CLI) kicks him while he plays, and again when he comes back",
      async () => {
        const w = o.world();
        const count = online(w).length;
        await binary();
        const r = await hubBinary(["ban", "Hank", "10", "griefing"], { env: w.env });
        expect(r, r.stderr).toMatchObject({ code: 0 });
        // Delivered by the CLI, or (when the running agent's queue round took it at that moment) by the agent.
        expect(r.stdout).toMatch(
          /^Hank( has been banned for 10m\. Reason: griefing|: sent by another hub-agent process)/,
        );
        await until(() => bansOf(w, "Hank").length > 0, "Hank's ban at the service", CLIENT);
        expect(bansOf(w, "Hank")).toMatchObject([{ reason: "griefing", length: 600, status: "ACTIVE" }]);
        const kicks = () =>
          w.exchanges.filter((x) => x.command.startsWith(game.kick.command) && x.reply?.includes(game.kick.reply))
            .length;
        // Playing, he sees the kick, and is dropped from the game.
        await client().sees(game.sees.kicked, "Hank's client to be kicked", waitFor(w));
        await until(() => kicks() === 1, "the agent's kick of Hank answered", CLIENT);
        await until(() => !online(w).includes("Hank"), "Hank to leave the agent's players", CLIENT);
        // Back under the banned name: dropped as he connects, before he is in the game.
        game.rejoin(client());
        await until(() => kicks() === 2, "the server to kick Hank again as he comes back", waitFor(w));
        await until(() => !online(w).includes("Hank"), "Hank to leave the agent's players again", CLIENT);
        await sendStatus(w.agent);
        expect(w.sb.state.servers.get(w.sb.serverId)?.users_current).toBe(count - 1);
      },
      2 * CLIENT.timeoutMs,
    );
  });
}
