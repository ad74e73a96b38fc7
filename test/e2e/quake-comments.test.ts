/**
 * ioquake3's comments, on the real console (Debian's OpenArena server, wrapped): its command buffer ends a command
 * at the `*\/` that closes a `/*` comment, so whatever follows runs as a command of its own. The Quake console
 * model of the escaping tests (test/game/presets/consoles.ts) reads lines that way, and a template that puts a
 * value after such a comment is refused (lib/game/presets/quoting.ts): a nick there would be a command.
 * Loopback only, no master servers; skipped, with the reason, when the server is not installed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fillTemplate } from "../../lib/rewards/replace.ts";
import { parseQuakeConsole } from "../game/presets/consoles.ts";
import { OPENARENA_SKIP_REASON, openarenaCommand, openarenaInstalled } from "../support/openarena.ts";
import { freePort, startWorld, stopWorld, type World } from "./world.ts";

if (!openarenaInstalled) console.warn(`SKIPPED: the ioquake3 comment test ${OPENARENA_SKIP_REASON}`);

describe.skipIf(!openarenaInstalled)("comments on a real ioquake3 console (OpenArena, wrapped)", () => {
  let w: World;

  beforeAll(async () => {
    const home = mkdtempSync(join(tmpdir(), "hub-q3-comments-"));
    w = await startWorld(home, {
      HUB_GAME_BRIDGE: "wrapper",
      HUB_GAME_PRESET: "openarena",
      HUB_GAME_WRAPPER_COMMAND: JSON.stringify(openarenaCommand(await freePort("udp"), home)),
    });
  }, 60_000);

  afterAll(() => stopWorld(w));

  test("the `*/` closing a comment ends the command: what follows runs, a quoted word as the command's name", async () => {
    for (const [line, said] of [
      ["echo AAA /* a note */ echo BBB", ["AAA", "BBB"]],
      ['echo CCC /* a note */ "echo" DDD', ["CCC", "DDD"]],
      ['echo "x /* y" */ echo EEE', ["x /* y */ echo EEE"]],
    ] as const) {
      // The probe's own lines: a loaded machine may print others meanwhile ("Hitch warning: … msec frame time").
      const reply = (await w.bridge.exec(line)).split("\n").filter((l) => /AAA|BBB|CCC|DDD|EEE/.test(l));
      expect(reply).toEqual([...said]);
      expect(parseQuakeConsole(line).map((args) => args.slice(1).join(" "))).toEqual([...said]);
    }
  }, 30_000);

  test("a reward's %nick% after such a comment is refused, naming the token and the fix", () => {
    expect(() => fillTemplate("say thanks /* VIP */ %nick%", { nick: "quit" }, w.bridge)).toThrow(
      "%nick% comes after the /* at column 12: the console ends the command where that comment closes",
    );
    // Inside quotes a `/*` is text, on the console and here.
    expect(fillTemplate('say "thanks /* VIP */ %nick%"', { nick: "a;quit" }, w.bridge).text).toBe(
      'say "thanks /* VIP */ a;quit"',
    );
  });
});
