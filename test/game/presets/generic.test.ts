/**
 * The generic preset and the console overrides every preset takes (`list_row`, `list_end`, `echo`, `reply_quiet`,
 * `escape`): what they change, and that a wrong one is one line naming the key and the fix, at load time.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../../lib/app/config.ts";
import { ESCAPE_MODE_NAMES } from "../../../lib/game/presets/escape.ts";
import { PRESETS, resolvePreset } from "../../../lib/game/presets/index.ts";
import { ioq3Status } from "../../support/ioq3-status.ts";
import { lineBridge, playerEvents } from "./recording.ts";

const OPENTTD_ROW = String.raw`^Client #(?<slot>\d+)  name: '(?<name>.*)'  company: \d+  IP: (?!server$)`;
const CLIENTS = [
  "Client #1  name: 'server'  company: 255  IP: server",
  "Client #2  name: 'Alice'  company: 1  IP: 127.0.0.1",
  "Client #5  name: 'Bob O'Neil'  company: 255  IP: ::1",
  "(not a row)",
].join("\n");

describe("the generic preset", () => {
  test("is named as such, and reads the player list with the operator's row pattern", () => {
    const p = resolvePreset("generic", { list_command: "clients", list_row: OPENTTD_ROW });
    expect(p.name).toBe("generic");
    expect(p.title).toBe("generic console");
    expect(p.userType).toBe("CENTRAL");
    expect(p.list.command).toBe("clients");
    expect(p.list.parse(CLIENTS).players).toEqual([
      { id: "Alice", name: "Alice", slot: "2" },
      { id: "Bob O'Neil", name: "Bob O'Neil", slot: "5" },
    ]);
    expect(p.escape('a "b";c')).toBe("a bc"); // strip until the operator picks a mode
  });

  test("an `id` group is the player's id as printed; a row with only an id names the player by it", () => {
    const p = resolvePreset("generic", {
      list_command: "players",
      list_row: String.raw`^(?<id>[0-9a-f-]{36})(?: (?<name>.+))?$`,
      user_type: "MINECRAFT",
    });
    expect(p.userType).toBe("MINECRAFT");
    expect(
      p.list.parse("069a79f4-44e9-4726-a5be-fca90e38aaf5 Notch\n61699b2e-d327-4a01-9f1e-0ea8c3f06bc6").players,
    ).toEqual([
      { id: "069a79f4-44e9-4726-a5be-fca90e38aaf5", name: "Notch" },
      { id: "61699b2e-d327-4a01-9f1e-0ea8c3f06bc6", name: "61699b2e-d327-4a01-9f1e-0ea8c3f06bc6" },
    ]);
  });

  test("joins and leaves by polling alone: the list is all it needs", async () => {
    const preset = resolvePreset("generic", { list_command: "clients", list_row: OPENTTD_ROW });
    let list = CLIENTS;
    const { bridge, events } = await lineBridge(preset, () => list);
    list = "Client #1  name: 'server'  company: 255  IP: server\nClient #2  name: 'Alice'  company: 1  IP: 127.0.0.1";
    expect((await bridge.status()).players.map((p) => p.name)).toEqual(["Alice"]);
    expect(playerEvents(events).map((e) => `${e.type} ${"player" in e ? e.player.name : ""}`)).toEqual([
      "player_connect Alice",
      "player_connect Bob O'Neil",
      "player_disconnect Bob O'Neil",
    ]);
    await bridge.stop();
  });
});

describe("console overrides on any preset", () => {
  test("list_row replaces a preset's parser (what no override could change before)", () => {
    const p = resolvePreset("xonotic", { list_row: String.raw`^#(?<slot>\d+) (?<name>.+)$` });
    expect(p.list.command).toBe("status 1");
    expect(p.list.parse("#3 ^1Red^7Baron\nnoise").players).toEqual([{ id: "RedBaron", name: "RedBaron", slot: "3" }]);
  });

  test("list_row replaces the rows only: the map, the player limit and a row's score and ping the preset read stay", () => {
    // DarkPlaces `status 1` (Nexuiz 2.5.2), one row in a form the preset's own row pattern does not take.
    const reply = [
      "map:      aggressor",
      "players:  2 active (8 max)",
      "",
      "IP                                             %pl ping  time   frags  no   name",
      "127.0.0.1:42000                                  2   48  1:03:09   12  #4   Alice",
      "?                                                               #6   Bob",
    ].join("\n");
    const p = resolvePreset("xonotic", { list_row: String.raw`#(?<slot>\d+)\s+(?<name>.+)$` });
    expect(p.list.parse(reply)).toEqual({
      map: "aggressor",
      maxPlayers: 8,
      players: [
        { id: "Alice", name: "Alice", slot: "4", extra: { Frags: 12, Ping: 48 } },
        { id: "Bob", name: "Bob", slot: "6" },
      ],
    });
    // ioquake3's `status` (as the real server prints it): the map line above the table.
    const oa = resolvePreset("openarena", { list_row: String.raw`^\s*(?<slot>\d+)\s+-?\d+\s+\d+\s+(?<name>\S+)` });
    const status = ioq3Status("oa_dm4", [{ slot: 0, score: 5, ping: 48, name: "^1Hank", address: "127.0.0.1" }]);
    expect(oa.list.parse(status)).toMatchObject({
      map: "oa_dm4",
      players: [{ name: "Hank", slot: "0" }],
    });
  });

  test("list_start: the line after which list_end counts, refused without a list_end", () => {
    const p = resolvePreset("generic", { list_row: "(?<name>.+)", list_start: "^-+$", list_end: "^-+$" });
    expect(p.list.start?.test("-----")).toBe(true);
    expect(p.list.until?.test("-----")).toBe(true);
    expect(() => resolvePreset("openarena", { list_start: "^-+$" })).toThrow(
      "game.overrides.list_start needs game.overrides.list_end: the list's last line, which counts only after the start line",
    );
    expect(() => resolvePreset("minecraft", { list_start: "[" })).toThrow(
      "game.overrides.list_start is not a valid regular expression",
    );
  });

  test("echo, list_end and reply_quiet say where a wrapped console's reply ends", () => {
    expect(resolvePreset("openarena", { echo: "print {marker}" }).echo?.("m1")).toBe("print m1");
    expect(resolvePreset("openarena", { echo: "" }).echo).toBeUndefined();
    expect(resolvePreset("minecraft", { echo: "say {marker} {marker}" }).echo?.("m")).toBe("say m m");
    expect(resolvePreset("gmod", { list_end: "^end$" }).list.until?.test("end")).toBe(true);
    expect(resolvePreset("minecraft", { list_end: "" }).list.until).toBeUndefined();
    expect(PRESETS.minecraft.list.until).toBeDefined(); // the preset itself is untouched
    expect(resolvePreset("minecraft", { reply_quiet: 0.25 }).replyQuietMs).toBe(250);
  });

  test("escape picks one of the documented modes", () => {
    expect(ESCAPE_MODE_NAMES).toEqual(["quote", "line", "strip"]);
    const value = 'a "b" \\ c;d';
    expect(resolvePreset("openarena", { escape: "quote" }).escape(value)).toBe(`"a 'b' / c;d"`);
    expect(resolvePreset("openarena", { escape: "line" }).escape(`${value}\nquit`)).toBe(`${value} quit`);
    expect(resolvePreset("openarena", { escape: "strip" }).escape(value)).toBe("a b  cd");
    expect(() => resolvePreset("openarena", { escape: "shell" as never })).toThrow(
      'game.overrides.escape = "shell" is not an escaping: use quote, line, strip',
    );
  });

  test("bad values are one line naming the key and the fix", () => {
    const bad: [Parameters<typeof resolvePreset>[1], string][] = [
      [{ list_row: "(" }, "game.overrides.list_row is not a valid regular expression"],
      [{ list_row: String.raw`^(\d+) (.+)$` }, "game.overrides.list_row needs a named group (?<name>…) or (?<id>…)"],
      [{ list_end: "[" }, "game.overrides.list_end is not a valid regular expression"],
      [{ echo: "echo done" }, 'game.overrides.echo = "echo done" must contain {marker}, e.g. "echo {marker}"'],
      [{ echo: "echo {marker}\nquit" }, "game.overrides.echo must be one line"],
    ];
    for (const [overrides, message] of bad) expect(() => resolvePreset("openarena", overrides)).toThrow(message);
  });
});

describe("loading a configuration with the generic preset", () => {
  const env = {
    HUB_API_URL: "https://api.vyhub.app/demo/v1",
    HUB_API_KEY: "k-0123456789",
    HUB_API_SERVER_ID: "541d1c41-1b58-40fc-8780-70c400ea5686",
  };
  async function problems(toml: string): Promise<string[]> {
    const dir = mkdtempSync(join(tmpdir(), "hub-generic-"));
    const file = join(dir, "hub-agent.toml");
    writeFileSync(file, toml);
    const r = await loadConfig({ env, cwd: dir, file });
    return r.ok ? [] : r.problems;
  }
  const list = `list_command = "clients"\nlist_row = '^(?<slot>\\d+) (?<name>.+)$'\n`;

  test("a wrapped console needs a way to find a reply's end", async () => {
    const head = '[game]\nbridge = "wrapper"\npreset = "generic"\n[game.wrapper]\ncommand = ["/bin/true"]\n';
    const [p] = await problems(`${head}[game.overrides]\n${list}`);
    expect(p).toContain('game.bridge = "wrapper"');
    expect(p).toContain(
      'set game.overrides.echo (e.g. "echo {marker}"), game.overrides.list_end (the list\'s last line) or game.overrides.reply_quiet (seconds of silence)',
    );
    for (const end of ['echo = "echo {marker}"', "list_end = '^end$'", "reply_quiet = 0.5"]) {
      expect(await problems(`${head}[game.overrides]\n${list}${end}\n`)).toEqual([]);
    }
  });

  test("a console needs the list command and its row pattern; a plugin, which says who is online, doesn't", async () => {
    const wrapper = '[game]\nbridge = "wrapper"\npreset = "generic"\n[game.wrapper]\ncommand = ["/bin/true"]\n';
    const ps = await problems(`${wrapper}[game.overrides]\necho = "echo {marker}"\n`);
    expect(ps).toHaveLength(2);
    expect(ps[0]).toStartWith("game.overrides.list_command is missing: set list_command under [game.overrides] in ");
    expect(ps[0]).toContain(': game.preset = "generic" (in ');
    expect(ps[0]).toContain('needs the console\'s player list (e.g. list_command = "clients"');
    expect(ps[1]).toStartWith("game.overrides.list_row is missing");
    const plugin = '[game]\nbridge = "plugin"\npreset = "generic"\n[game.rcon]\npassword = "a-long-random-token"\n';
    expect(await problems(plugin)).toEqual([]);
  });

  test("a network console needs its port (generic has no default)", async () => {
    const head = '[game]\nbridge = "econ"\npreset = "generic"\n[game.rcon]\npassword = "x"\n';
    const [p] = await problems(`${head}[game.overrides]\n${list}`);
    expect(p).toStartWith("game.rcon.port is missing: set port under [game.rcon]");
    expect(p).toContain("the generic preset has no default");
    expect(await problems(`${head}port = 8303\n[game.overrides]\n${list}`)).toEqual([]);
  });

  test("schema checks name the key, the value and the fix", async () => {
    const head = '[game]\nbridge = "wrapper"\npreset = "generic"\n[game.wrapper]\ncommand = ["/bin/true"]\n';
    const ps = await problems(
      `${head}[game.overrides]\n${list}echo = "echo {marker}"\nescape = "shell"\nreply_quiet = 9\n`,
    );
    expect(ps).toHaveLength(2);
    ps.sort();
    expect(ps[0]).toStartWith('game.overrides.escape = "shell" (in ');
    expect(ps[0]).toContain("must be one of: quote, line, strip (how text values are escaped");
    expect(ps[1]).toStartWith("game.overrides.reply_quiet = 9 (in ");
    expect(ps[1]).toContain("must be at most 5 seconds");
    const [row] = await problems(
      `${head}[game.overrides]\nlist_command = "clients"\nlist_row = 'no groups'\necho = "echo {marker}"\n`,
    );
    expect(row).toMatch(
      /^game\.overrides\.list_row needs a named group \(\?<name>…\) or \(\?<id>…\).* \(in .*hub-agent\.toml\)$/,
    );
  });
});
