/**
 * `game.wrapper.command_pipe` against a real server that reads its commands from a named pipe: Debian's
 * armagetronad-dedicated 0.2.9 with `-d --input <fifo>`, wrapped with the generic preset. It opens the pipe
 * blocking at start (it would hang until a writer appears: hub-agent opens it first), repeats each line it read
 * (`[0] <fifo> : <line>`), and has no echo command: `echo = "{marker}"`, answered `Command HUBAGENT_END_… unknown.`.
 * It binds a UDP port on every interface whatever SERVER_IP says, so it runs in a network namespace of its own
 * (`ip netns exec`), with only loopback up and the master server off. No client is installed: its player list is
 * empty here, and the row pattern is unverified.
 *
 * Needs root (the namespace); skipped with the reason when not root or not installed (`.ci/run` installs it).
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { systemClock } from "../../lib/clock.ts";
import { loadConfig } from "../../lib/app/config.ts";
import type { GameBridge } from "../../lib/game/bridge.ts";
import { createBridge } from "../../lib/game/index.ts";
import { memoryLogger } from "../../lib/log.ts";

const SERVER = "/usr/games/armagetronad-dedicated.real";
const IP = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].find((p) => existsSync(p));
const STDBUF = ["/usr/bin/stdbuf", "/bin/stdbuf"].find((p) => existsSync(p));
const skip = !existsSync(SERVER)
  ? `${SERVER} is missing (Debian package armagetronad-dedicated; .ci/run installs it)`
  : process.getuid?.() !== 0
    ? "it needs root (a network namespace: the server binds every interface)"
    : !IP || !STDBUF
      ? "ip (iproute2) or stdbuf (coreutils) is missing"
      : "";
if (skip) console.warn(`SKIPPED: the armagetronad-dedicated test: ${skip}`);

const ns = `hubaa${Math.random().toString(36).slice(2, 8)}`;
let dir = "";
let bridge: GameBridge | undefined;
afterEach(async () => {
  await bridge?.stop();
  bridge = undefined;
});

describe.skipIf(!!skip)(
  "armagetronad-dedicated reading a named pipe, wrapped with the generic preset (real server)",
  () => {
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), "hub-armagetron-"));
      for (const d of ["config", "data", "var"]) mkdirSync(join(dir, d));
      writeFileSync(join(dir, "config", "settings_custom.cfg"), "SERVER_IP 127.0.0.1\nTALK_TO_MASTER 0\n");
      for (const args of [
        ["netns", "add", ns],
        ["netns", "exec", ns, IP as string, "link", "set", "lo", "up"],
      ]) {
        const r = spawnSync(IP as string, args, { encoding: "utf8" });
        if (r.status !== 0) throw new Error(`ip ${args.join(" ")}: ${r.stderr}`);
      }
    });
    afterAll(() => {
      spawnSync(IP as string, ["netns", "delete", ns]);
    });

    test("commands and replies through the pipe hub-agent created; the list answers; `quit` through the pipe stops it", async () => {
      const fifo = join(dir, "console.fifo");
      const dirs = ["--userconfigdir", "config", "--userdatadir", "data", "--vardir", "var"].map((a) =>
        a.startsWith("--") ? a : join(dir, a),
      );
      const data = ["--datadir", "/usr/share/games/armagetronad", "--configdir", "/etc/armagetronad", ...dirs];
      const command = [IP, "netns", "exec", ns, STDBUF, "-oL", SERVER, ...data, "-d", "--input", fifo];
      const file = join(dir, "hub-agent.toml");
      writeFileSync(
        file,
        `[game]
bridge = "wrapper"
preset = "generic"

[game.wrapper]
command = ${JSON.stringify(command)}
command_pipe = "console.fifo"

[game.overrides]
list_command = "players"
list_row = '^\\[0\\] PLAYERS: +(?<slot>\\d+): (?<name>.+)$'
echo = "{marker}"

[game.overrides.lines]
ready = '^\\[0\\] Bound socket to 127\\.0\\.0\\.1:\\d+\\.$'

[game.overrides.commands]
stop = "quit"
`,
      );
      const r = await loadConfig({
        env: {
          HUB_API_URL: "https://api.vyhub.app/demo/v1",
          HUB_API_KEY: "k-0123456789",
          HUB_API_SERVER_ID: "541d1c41-1b58-40fc-8780-70c400ea5686",
        },
        cwd: dir,
        file,
      });
      if (!r.ok) throw new Error(r.problems.join("\n"));
      const logger = memoryLogger();
      bridge = await createBridge(r.config, { clock: systemClock, logger, input: new PassThrough(), output: null });
      await bridge.start();
      expect(statSync(fifo).isFIFO()).toBe(true);
      expect(statSync(fifo).mode & 0o777).toBe(0o600);
      expect(await bridge.exec("say hello from hub-agent")).toContain("[0] Admin: hello from hub-agent");
      expect(await bridge.status()).toMatchObject({ players: [] });
      await bridge.stop();
      bridge = undefined;
      expect(logger.lines.map((l) => l.msg)).toContain("stopped by hub-agent (exited with code 0)");
    }, 60_000);
  },
);
