/**
 * A real human player on the real OpenArena server, for both end-to-end tests (./openarena.test.ts wrapped,
 * ./openarena-rcon.test.ts over rcon): Hank, Debian's OpenArena client on a virtual display. He is asserted what
 * the bots are, seen from his side too (the client's console): listed by `status` (where ioq3 prints a human's
 * address without its port) and counted; his `.dashboard` is answered to him alone, while a `!` line is left to
 * OpenArena's own admin system; a reward runs for him and he sees it; `hub-agent ban Hank …` (the compiled CLI)
 * kicks him while he plays, and again when he reconnects. The steps run in order and leave him kicked.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { advertLines } from "../../lib/features/adverts.ts";
import { sendStatus } from "../../lib/features/status.ts";
import { binary, hub } from "../cli/binary.ts";
import {
  clientMissing,
  type GameClient,
  OPENARENA_CLIENT,
  openarenaClient,
  startDisplay,
} from "../support/game-client.ts";
import { until } from "../support/until.ts";
import { bansOf, freePort, online, userOf, type World } from "./world.ts";

export const OPENARENA_CLIENT_MISSING = clientMissing(OPENARENA_CLIENT, "openarena");

/** Software GL on a busy 2-core machine: loading the game and a map takes a while. */
const CLIENT = { timeoutMs: 120_000 };

/** What the agent sent the game lately and what it saw, for a failed wait. */
const recent = (w: World) =>
  `the agent's last commands:\n${w.exchanges
    .slice(-12)
    .map((x) => `${x.command} → ${JSON.stringify(x.reply ?? x.error)}`)
    .join("\n")}\nthe last lines it read:\n${w.lines.slice(-20).join("\n")}`;

/**
 * Registers Hank's steps; `o.host` is the address he connects to (127.0.0.1 or ::1). Reported skipped, with the
 * reason, when the client or Xvfb is missing.
 */
export function openarenaHumanSteps(o: { world: () => World; port: () => number; host: string }): void {
  if (OPENARENA_CLIENT_MISSING) console.warn(`SKIPPED: the OpenArena human client steps ${OPENARENA_CLIENT_MISSING}`);
  describe.skipIf(OPENARENA_CLIENT_MISSING !== undefined)(`Hank, a real OpenArena client over ${o.host}`, () => {
    let hank: GameClient | undefined;
    let stopDisplay: (() => Promise<void>) | undefined;
    let before = 0;
    const client = () => hank!;
    let saidAt = 0;
    /** Says `text` in chat; ioq3's flood protection drops a client's second command within a second, unanswered. */
    const say = async (text: string) => {
      await Bun.sleep(Math.max(0, saidAt + 1500 - performance.now()));
      client().type(`say "${text}"`);
      saidAt = performance.now();
    };

    beforeAll(
      async () => {
        before = online(o.world()).length;
        const display = await startDisplay();
        stopDisplay = display.stop;
        const home = mkdtempSync(join(tmpdir(), "hub-oa-client-"));
        const clientPort = await freePort("udp");
        hank = openarenaClient({
          display: display.display,
          home,
          host: o.host,
          port: o.port(),
          name: "Hank",
          clientPort,
        });
        await client().sees("Hank^7 entered the game", "Hank's client to enter the game", CLIENT);
        // What he types right after entering may be dropped: his chat works once his line comes back to him.
        await client().retype(
          'say "hello"',
          "Hank^7: ^2hello",
          "Hank's first chat line to come back",
          CLIENT.timeoutMs,
        );
        saidAt = performance.now();
      },
      2 * CLIENT.timeoutMs + 10_000,
    );

    afterAll(async () => {
      await hank?.stop();
      await stopDisplay?.();
    });

    test(
      `Hank is in the server's status, registered as a user and counted`,
      async () => {
        const w = o.world();
        // The status row is a human's: `^7<address>` without a port.
        const status = await w.bridge.status();
        expect(status.players.map((p) => p.name)).toContain("Hank");
        const row = w.exchanges.findLast((x) => x.command === "status" && x.reply?.includes(" Hank "))?.reply;
        expect(row).toContain(`^7${o.host} `);
        await until(() => online(w).includes("Hank"), "Hank among the agent's players", CLIENT);
        await until(() => w.agent.users.get("Hank") !== undefined, "the service user of Hank", CLIENT);
        expect(w.sb.state.findUser("Hank", "CENTRAL")).toMatchObject({ identifier: "Hank", username: "Hank" });
        await sendStatus(w.agent);
        expect(w.sb.state.servers.get(w.sb.serverId)?.users_current).toBe(before + 1);
      },
      CLIENT.timeoutMs,
    );

    test(
      "Hank's `.dashboard` is answered to him alone; his `!` lines are OpenArena's own admin commands, not the agent's",
      async () => {
        const w = o.world();
        const commands = () => w.events.filter((e) => e.type === "chat_command" && e.player.name === "Hank");
        const bans = () => w.sb.control.requests({ method: "POST", path: "/ban/" }).length;
        const bansBefore = bans();
        await say("!ban Sarge 10 spam");
        await say("!dashboard");
        await say(".dashboard");
        // OpenArena's g_admin answers the `!ban` itself (to him only); the agent leaves it alone.
        await client().sees("!ban: ^7permission denied", "OpenArena's own answer to !ban", {
          ...CLIENT,
          diagnostics: () => recent(w),
        });
        // The agent's answer: `tell <slot>`, which the client prints as the console's private message.
        await client().sees("console_tell: Server dashboard: ", "the dashboard link in Hank's console", {
          ...CLIENT,
          diagnostics: () => recent(w),
        });
        expect(commands().map((e) => e.type === "chat_command" && e.command)).toEqual(["dashboard"]);
        expect(client().count("Server dashboard: ")).toBe(1);
        expect(bans()).toBe(bansBefore);
      },
      CLIENT.timeoutMs,
    );

    test(
      "an advert reaches him readable: `[*] ` on this console, where the UTF-8 `[★] ` shows as `[...] `",
      async () => {
        const w = o.world();
        const content = "Join our Discord: <blue>discord.gg/example</blue>";
        for (const line of advertLines(content, w.agent.deps.messages, w.bridge.caps.colours ?? "strip")) {
          await w.bridge.message(null, line);
        }
        await client().sees("console: [*] Join our Discord: ^4discord.gg/example^7", "the advert in Hank's console", {
          ...CLIENT,
          diagnostics: () => recent(w),
        });
        // Why: the former prefix, said as it is, reaches him as dots.
        await w.bridge.message(null, "[★] the former prefix");
        await client().sees("console: [...] the former prefix", "the UTF-8 prefix in Hank's console", CLIENT);
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
        await client().sees("console: reward for Hank", "the reward's say in Hank's console", {
          ...CLIENT,
          diagnostics: () => recent(w),
        });
        await until(
          () => applied.executed_on.includes(w.sb.serverId),
          "the reward reported (PATCH executed_on)",
          CLIENT,
        );
        expect(w.sb.control.requests({ method: "PATCH", path: `/packet/reward/applied/${applied.id}` })).toHaveLength(
          1,
        );
        expect(client().count("console: reward for Hank")).toBe(1);
      },
      CLIENT.timeoutMs,
    );

    test(
      "`hub-agent ban Hank 10 griefing` (the compiled CLI) kicks him while he plays, and again when he reconnects",
      async () => {
        const w = o.world();
        const count = online(w).length;
        await binary();
        const r = await hub(["ban", "Hank", "10", "griefing"], { env: w.env });
        expect(r, r.stderr).toMatchObject({ code: 0 });
        expect(r.stdout).toContain("Hank has been banned for 10m. Reason: griefing");
        expect(bansOf(w, "Hank")).toMatchObject([{ reason: "griefing", length: 600, status: "ACTIVE" }]);
        // The agent's `clientkick <slot>`: ioq3 answers with the line it tells everyone.
        const kicks = () =>
          w.exchanges.filter((x) => x.command.startsWith("clientkick ") && x.reply?.includes("Hank^7 was kicked"))
            .length;
        // Playing, he sees that line too, and is dropped to the menu.
        await client().sees("Hank^7 was kicked", "Hank's client to be kicked", {
          ...CLIENT,
          diagnostics: () => recent(w),
        });
        await until(() => kicks() === 1, "the agent's kick of Hank answered", CLIENT);
        await until(() => !online(w).includes("Hank"), "Hank to leave the agent's players", CLIENT);
        // Back under the banned name: dropped as he connects, before he is in (his client, still connecting or
        // loading the map, shows nothing of it; it waits for a snapshot that never comes).
        client().type("reconnect");
        await until(() => kicks() === 2, "the server to kick Hank again as he reconnects", {
          ...CLIENT,
          diagnostics: () => recent(w),
        });
        await until(() => !online(w).includes("Hank"), "Hank to leave the agent's players again", CLIENT);
        await sendStatus(w.agent);
        expect(w.sb.state.servers.get(w.sb.serverId)?.users_current).toBe(count - 1);
      },
      2 * CLIENT.timeoutMs,
    );
  });
}
