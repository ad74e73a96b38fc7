/**
 * The pretty log as a terminal shows it: written to a real pseudo-terminal (Bun.spawn's `terminal`), with the
 * colours on as they are for an operator (no CI, no NO_COLOR). A log line's time is dim, never red (red reads as an
 * error), and only a level's label is coloured.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";

const LOG = join(import.meta.dir, "..", "..", "cli", "log.ts");
const STDIO = join(import.meta.dir, "..", "..", "cli", "stdio.ts");

async function onTerminal(source: string): Promise<string> {
  let out = "";
  const decoder = new TextDecoder();
  const env: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin", TERM: "xterm-256color" };
  const proc = Bun.spawn([process.execPath, "-e", source], {
    env,
    terminal: { cols: 200, rows: 24, data: (_t, bytes) => void (out += decoder.decode(bytes, { stream: true })) },
  });
  await proc.exited;
  return out;
}

test("on a terminal, each line's time is dim and only the level is coloured", async () => {
  const out = await onTerminal(`
    const { createLogger } = await import(${JSON.stringify(LOG)});
    const { processIo } = await import(${JSON.stringify(STDIO)});
    const io = processIo(); // the process's own stderr, as a command line's log has it
    const log = createLogger({ format: "pretty", quiet: false, redact: (t) => t, env: io.env, write: io.stderr, tty: io.stderrIsTty });
    log.info("ready");
    log.warn("slow", { ms: 1200 });
    log.withTag("bans").error("refused");
  `);
  const lines = out.split("\r\n").filter(Boolean);
  const ESC = "\x1b";
  expect(lines).toEqual([
    expect.stringMatching(
      new RegExp(`^${ESC}\\[2m\\d\\d:\\d\\d:\\d\\d${ESC}\\[0m ${ESC}\\[36mINFO ${ESC}\\[0m ready$`),
    ),
    expect.stringMatching(
      new RegExp(`^${ESC}\\[2m\\d\\d:\\d\\d:\\d\\d${ESC}\\[0m ${ESC}\\[33mWARN ${ESC}\\[0m slow ms=1200$`),
    ),
    expect.stringMatching(
      new RegExp(`^${ESC}\\[2m\\d\\d:\\d\\d:\\d\\d${ESC}\\[0m ${ESC}\\[31mERROR${ESC}\\[0m \\[bans\\] refused$`),
    ),
  ]);
});
