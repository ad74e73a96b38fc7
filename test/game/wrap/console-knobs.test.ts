/**
 * The generic console knobs end to end: a configuration file (`game.preset = "generic"`, `game.bridge = "wrapper"`)
 * loaded and turned into a bridge, against the fake server behaving as the consoles they are for (see the flags in
 * test/fixtures/fake-game-server.ts): a list framed by the same line above and below its rows, consoles without
 * `echo` answering a bogus command with the marker inside a sentence or upper-cased, a server reading a named pipe.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { systemClock } from "../../../lib/clock.ts";
import { loadConfig } from "../../../lib/app/config.ts";
import { createBridge } from "../../../lib/game/index.ts";
import { memoryLogger } from "../../../lib/log.ts";
import { FAKE } from "./harness.ts";

const env = {
  HUB_API_URL: "https://api.vyhub.app/demo/v1",
  HUB_API_KEY: "k-0123456789",
  HUB_API_SERVER_ID: "541d1c41-1b58-40fc-8780-70c400ea5686",
};
const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

/** A wrapped fake with `flags`, the generic preset described by `overrides` (TOML lines); its status file. */
async function generic(flags: string[], overrides: string, wrapper = "") {
  const dir = mkdtempSync(join(tmpdir(), "hub-knobs-"));
  const status = join(dir, "status");
  writeFileSync(status, "");
  const command = JSON.stringify([process.execPath, FAKE, `--status-file=${status}`, ...flags]);
  const file = join(dir, "hub-agent.toml");
  writeFileSync(
    file,
    [
      '[game]\nbridge = "wrapper"\npreset = "generic"',
      `[game.wrapper]\ncommand = ${command}\n${wrapper}`,
      `[game.overrides]\nlist_command = "status"\n${overrides}`,
      '[game.overrides.lines]\nready = "^Server ready"',
      '[game.overrides.commands]\nstop = "quit"',
    ].join("\n"),
  );
  const r = await loadConfig({ env, cwd: dir, file });
  if (!r.ok) throw new Error(r.problems.join("\n"));
  const bridge = await createBridge(r.config, {
    clock: systemClock,
    logger: memoryLogger(),
    input: new PassThrough(),
    output: null,
  });
  stops.push(() => bridge.stop());
  await bridge.start();
  const names = async () => (await bridge.status()).players.map((p) => p.name);
  return { bridge, dir, names, setRows: (rows: string[]) => writeFileSync(status, rows.join("\n")) };
}

const ROW = `list_row = '^(?<slot>\\d+) (?<name>\\S+)$'`;

describe("a list framed by the same line above and below its rows (list_start)", () => {
  test("the reply ends at the second frame line, with rows or without", async () => {
    const g = await generic(["--list-frame", "--no-echo"], `${ROW}\nlist_start = '^-{10,}$'\nlist_end = '^-{10,}$'`);
    g.setRows(["1 Alice", "2 Bob"]);
    expect(await g.names()).toEqual(["Alice", "Bob"]);
    g.setRows([]);
    expect(await g.names()).toEqual([]); // an empty list, framed by two lines, still ends
    g.setRows(["3 Carol"]);
    expect(await g.names()).toEqual(["Carol"]);
  });

  test("without list_start, list_end alone ends the reply at the first frame line: the rows are lost", async () => {
    const g = await generic(["--list-frame", "--no-echo"], `${ROW}\nlist_end = '^-{10,}$'`);
    g.setRows(["1 Alice"]);
    expect(await g.names()).toEqual([]);
  });
});

describe("a console without echo: a reply marked by an answer that holds the marker", () => {
  test("anywhere in a line: `help {marker}` answered `No match for help argument '<marker>'.`, its input repeated before", async () => {
    // --prompt repeats every line as it is read (`> help hubagent_end_…`), before the command ahead of it ran.
    const g = await generic(["--no-echo", "--prompt"], `${ROW}\necho = "help {marker}"`);
    g.setRows(["1 Alice"]);
    expect(await g.names()).toEqual(["Alice"]);
    // The console repeats each line as it reads it, all three at once, before the begin marker's answer: the
    // repeated command is game output, the reply is what it printed.
    expect((await g.bridge.exec("slow 300 done")).split("\n")).toEqual(["working on it", "done"]);
  });

  test("the marker alone, answered upper-cased: `Command HUBAGENT_END_… unknown.`", async () => {
    const g = await generic(["--no-echo", "--unknown-upper"], `${ROW}\necho = "{marker}"`);
    g.setRows(["1 Alice", "2 Bob"]);
    expect(await g.names()).toEqual(["Alice", "Bob"]);
    expect(await g.bridge.exec("join Dave")).toBe("Dave joined the game");
  });
});

describe("game.wrapper.command_pipe in the configuration", () => {
  test("relative to the configuration file; the server reads its commands there", async () => {
    const g = await generic(
      ["--command-pipe=console.fifo"],
      `${ROW}\necho = "echo {marker}"`,
      `cwd = "."\ncommand_pipe = "console.fifo"`,
    );
    expect(statSync(join(g.dir, "console.fifo")).isFIFO()).toBe(true);
    g.setRows(["1 Alice"]);
    expect(await g.names()).toEqual(["Alice"]);
  });
});
