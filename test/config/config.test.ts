import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { configKeys, envName, loadConfig } from "../../lib/app/config.ts";
import { renderTemplate } from "../../lib/app/config.ts";
import { TomlError, parseToml, parseTomlSubset } from "../../lib/config/toml.ts";
import { PRESET_NAMES } from "../../lib/game/presets/index.ts";

/** Every preset, as the messages list them. */
const PRESET_LIST = PRESET_NAMES.join(", ");

const SERVER = "541d1c41-1b58-40fc-8780-70c400ea5686";
const good = {
  HUB_API_URL: "https://api.vyhub.app/demo/v1",
  HUB_API_KEY: "k-0123456789",
  HUB_API_SERVER_ID: SERVER,
  HUB_GAME_BRIDGE: "sim",
};
const dir = () => mkdtempSync(join(tmpdir(), "hub-config-"));

async function problems(env: Record<string, string>, file?: string, cwd = dir()) {
  const r = await loadConfig({ env, cwd, file });
  if (r.ok) throw new Error("expected the configuration to be refused");
  return r.problems;
}

describe("configuration", () => {
  test("runs from the environment alone, with the spec's intervals as defaults", async () => {
    const cwd = dir();
    const r = await loadConfig({ env: good, cwd });
    if (!r.ok) throw new Error(r.problems.join("\n"));
    expect(r.config.api).toEqual({
      url: good.HUB_API_URL,
      key: good.HUB_API_KEY,
      server_id: SERVER,
      timeout: 10,
      allow_insecure: false,
      max_response_bytes: 16 * 1024 * 1024,
    });
    expect(r.config.intervals).toEqual({
      status: 60,
      groups: 300,
      bans: 60,
      queues: 60,
      playtime: 3600,
      rewards: 60,
      adverts: 180,
      user_retry: 60,
      player_poll: 10,
    });
    expect(r.config.storage.dir).toBe(join(cwd, "data"));
    expect(r.config.game.bridge).toBe("sim");
    expect(r.warnings).toEqual([]);
  });

  test("every key has an environment variable HUB_ + its path", () => {
    expect(configKeys()).toContain("api.server_id");
    expect(envName("api.server_id")).toBe("HUB_API_SERVER_ID");
    expect(envName("intervals.user_retry")).toBe("HUB_INTERVALS_USER_RETRY");
  });

  test("the environment overrides the file key by key; relative paths follow the file", async () => {
    const d = dir();
    const file = join(d, "agent.toml");
    writeFileSync(
      file,
      `[api]\nurl = "https://a.example/x/v1"\nkey = "file-key-123"\nserver_id = "${SERVER}"\n[game]\nbridge = "sim"\n[intervals]\nstatus = 30\n[storage]\ndir = "state"\n`,
    );
    const r = await loadConfig({
      env: { HUB_INTERVALS_STATUS: "2", HUB_API_URL: "https://b.example/y/v1" },
      cwd: "/",
      file,
    });
    if (!r.ok) throw new Error(r.problems.join("\n"));
    expect(r.config.api.url).toBe("https://b.example/y/v1");
    expect(r.config.api.key).toBe("file-key-123");
    expect(r.config.intervals.status).toBe(2);
    expect(r.config.storage.dir).toBe(join(d, "state"));
    expect(r.warnings).toEqual([expect.stringContaining("intervals.status = 2 s is below the spec's 60 s")]);
  });

  test("HUB_CONFIG names the file; ./hub-agent.toml is used when present", async () => {
    const d = dir();
    writeFileSync(
      join(d, "hub-agent.toml"),
      `[api]\nurl = "https://a.example/x/v1"\nkey = "abcd-key"\nserver_id = "${SERVER}"\n[game]\nbridge = "sim"\n`,
    );
    const found = await loadConfig({ env: {}, cwd: d });
    expect(found.ok && found.file).toBe(join(d, "hub-agent.toml"));
    const named = await loadConfig({ env: { HUB_CONFIG: join(d, "hub-agent.toml") }, cwd: "/" });
    expect(named.ok).toBe(true);
  });

  test("missing keys are named one per line with where to set them", async () => {
    const p = await problems({});
    expect(p).toHaveLength(4);
    expect(p[0]).toStartWith("api.url is missing: set url under [api] in hub-agent.toml, or export HUB_API_URL");
    expect(p[1]).toStartWith("api.server_id is missing");
    // No silent simulated game: the bridge is named with every kind to choose from.
    expect(p[2]).toStartWith(
      "game.bridge is missing: set bridge under [game] in hub-agent.toml, or export HUB_GAME_BRIDGE",
    );
    for (const kind of ["sim", "rcon", "q3rcon", "dprcon", "webrcon", "econ", "wrapper"]) expect(p[2]).toContain(kind);
    expect(p[3]).toContain("api.key is missing");
    expect(p[3]).toContain("HUB_API_KEY_FILE");
  });

  test("a bad value is shown as typed, with its source and the fix", async () => {
    const p = await problems({
      ...good,
      HUB_INTERVALS_STATUS: "abc",
      HUB_API_SERVER_ID: "nope",
      HUB_API_URL: "ftp://x/v1",
    });
    expect(p).toContain(
      'intervals.status = "abc" (from HUB_INTERVALS_STATUS) must be a number of seconds (seconds between status updates (spec: 60))',
    );
    expect(p.some((l) => l.startsWith('api.server_id = "nope" (from HUB_API_SERVER_ID) is not a server id'))).toBe(
      true,
    );
    expect(p.some((l) => l.startsWith('api.url = "ftp://x/v1" (from HUB_API_URL) must start with https://'))).toBe(
      true,
    );
    expect(await problems({ ...good, HUB_INTERVALS_BANS: "-5" })).toEqual([
      expect.stringContaining("must be a positive number"),
    ]);
  });

  test("intervals have an upper bound (a week): one line naming the key, the value and the limit", async () => {
    const cwd = dir();
    writeFileSync(join(cwd, "hub-agent.toml"), "[intervals]\nadverts = 3000000\n");
    expect(await problems(good, undefined, cwd)).toEqual([
      `intervals.adverts = 3000000 (in ${join(cwd, "hub-agent.toml")}) must be at most 604800 seconds (7 days) (seconds between adverts; 0 switches adverts off)`,
    ]);
    expect(await problems({ ...good, HUB_INTERVALS_PLAYTIME: "1e12" })).toEqual([
      'intervals.playtime = "1e12" (from HUB_INTERVALS_PLAYTIME) must be at most 604800 seconds (7 days) (seconds between playtime reports (spec: 3600))',
    ]);
    const week = await loadConfig({ env: { ...good, HUB_INTERVALS_PLAYTIME: "604800" }, cwd: dir() });
    expect(week.ok && week.config.intervals.playtime).toBe(604_800);
  });

  test("intervals.adverts = 0 switches adverts off (no warning); 0 elsewhere is refused", async () => {
    const off = await loadConfig({ env: { ...good, HUB_INTERVALS_ADVERTS: "0" }, cwd: dir() });
    if (!off.ok) throw new Error(off.problems.join("\n"));
    expect(off.config.intervals.adverts).toBe(0);
    expect(off.warnings).toEqual([]);
    expect(await problems({ ...good, HUB_INTERVALS_ADVERTS: "-1" })).toEqual([
      expect.stringContaining("must be a number of seconds, or 0 to switch adverts off"),
    ]);
    expect(await problems({ ...good, HUB_INTERVALS_STATUS: "0" })).toEqual([
      expect.stringContaining("must be a positive number of seconds"),
    ]);
  });

  test("a value of the wrong kind gets its key's sentence, not the schema's type names", async () => {
    const file = (toml: string) => {
      const d = dir();
      writeFileSync(join(d, "hub-agent.toml"), `[game]\nbridge = "sim"\n${toml}\n`);
      return join(d, "hub-agent.toml");
    };
    const cases: [string, string][] = [
      ["[api]\ntimeout = true", "api.timeout = true (in <file>) must be a number of seconds"],
      ['[intervals]\nbans = ""', 'intervals.bans = "" (in <file>) must be a number of seconds'],
      ["[intervals]\nadverts = [1]", "intervals.adverts = [1] (in <file>) must be a number of seconds"],
      ["[game.overrides]\nmax_players = true", "game.overrides.max_players = true (in <file>) must be a number"],
      ["[game.overrides]\nmulti_group = 2", "game.overrides.multi_group = 2 (in <file>) must be true or false"],
      ['[http]\nallow_remote = "maybe"', 'http.allow_remote = "maybe" (in <file>) must be true or false'],
    ];
    for (const [toml, line] of cases) {
      const f = file(toml);
      const env = { HUB_API_URL: good.HUB_API_URL, HUB_API_KEY: good.HUB_API_KEY, HUB_API_SERVER_ID: SERVER };
      expect(await problems(env, f)).toEqual([expect.stringContaining(line.replace("<file>", f))]);
    }
    expect(await problems({ ...good, HUB_API_ALLOW_INSECURE: "maybe" })).toEqual([
      expect.stringContaining('api.allow_insecure = "maybe" (from HUB_API_ALLOW_INSECURE) must be true or false ('),
    ]);
    expect(await problems({ ...good, HUB_GAME_RCON_PORT: " " })).toEqual([
      expect.stringContaining('game.rcon.port = " " (from HUB_GAME_RCON_PORT) must be a port number ('),
    ]);
  });

  test("api.max_response_bytes: a whole number of bytes within 64 KiB to 1 GiB", async () => {
    const set = await loadConfig({ env: { ...good, HUB_API_MAX_RESPONSE_BYTES: "1048576" }, cwd: dir() });
    expect(set.ok && set.config.api.max_response_bytes).toBe(1_048_576);
    expect(await problems({ ...good, HUB_API_MAX_RESPONSE_BYTES: "100" })).toEqual([
      expect.stringContaining(
        'api.max_response_bytes = "100" (from HUB_API_MAX_RESPONSE_BYTES) must be at least 65536',
      ),
    ]);
  });

  test("plain http is refused unless the host is loopback or allow_insecure is set", async () => {
    expect((await problems({ ...good, HUB_API_URL: "http://vyhub.example/x/v1" }))[0]).toContain("unencrypted");
    for (const url of ["http://127.0.0.1:8080/x/v1", "http://localhost/x/v1"])
      expect((await loadConfig({ env: { ...good, HUB_API_URL: url }, cwd: dir() })).ok).toBe(true);
    const insecure = await loadConfig({
      env: { ...good, HUB_API_URL: "http://vyhub.example/x/v1", HUB_API_ALLOW_INSECURE: "true" },
      cwd: dir(),
    });
    expect(insecure.ok).toBe(true);
  });

  test("http.listen: off by default; a loopback address and port; another address only with http.allow_remote", async () => {
    const off = await loadConfig({ env: good, cwd: dir() });
    if (!off.ok) throw new Error(off.problems.join("\n"));
    expect(off.config.http).toEqual({ allow_remote: false });
    for (const listen of ["127.0.0.1:9187", "[::1]:9187", "localhost:0", "127.0.0.2:80"]) {
      const r = await loadConfig({ env: { ...good, HUB_HTTP_LISTEN: listen }, cwd: dir() });
      expect(r.ok ? r.config.http.listen : r.problems).toBe(listen);
    }
    expect(await problems({ ...good, HUB_HTTP_LISTEN: "0.0.0.0:9187" })).toEqual([
      'http.listen = "0.0.0.0:9187" (from HUB_HTTP_LISTEN) is not a loopback address, and the status page and /metrics have no password: use 127.0.0.1:9187, or set http.allow_remote = true if you mean to expose them',
    ]);
    for (const listen of ["9187", "127.0.0.1", "127.0.0.1:99999", "::1:9187", "a b:1"])
      expect(await problems({ ...good, HUB_HTTP_LISTEN: listen })).toEqual([
        `http.listen = "${listen}" (from HUB_HTTP_LISTEN) is not an address and port: use e.g. 127.0.0.1:9187 or [::1]:9187`,
      ]);
    const remote = await loadConfig({
      env: { ...good, HUB_HTTP_LISTEN: "0.0.0.0:9187", HUB_HTTP_ALLOW_REMOTE: "true" },
      cwd: dir(),
    });
    expect(remote.ok).toBe(true);
  });

  test("unknown keys in the file are refused, naming them", async () => {
    const d = dir();
    const file = join(d, "c.toml");
    writeFileSync(
      file,
      `[api]\nurl = "https://a.example/v1"\nkey = "abcd-key"\nserver_id = "${SERVER}"\nserverid = "x"\n[game]\nbridge = "sim"\n`,
    );
    expect(await problems({}, file)).toEqual([expect.stringContaining("unknown key api.serverid")]);
  });

  test("the key can come from a file; never both; an empty or missing file is named", async () => {
    const d = dir();
    writeFileSync(join(d, "key"), "from-file-key\n");
    writeFileSync(join(d, "empty"), "\n");
    const env = { HUB_API_URL: good.HUB_API_URL, HUB_API_SERVER_ID: SERVER, HUB_GAME_BRIDGE: "sim" };
    const r = await loadConfig({ env: { ...env, HUB_API_KEY_FILE: "key" }, cwd: d });
    expect(r.ok && r.config.api.key).toBe("from-file-key");
    expect(r.secrets).toContain("from-file-key");
    expect((await problems({ ...env, HUB_API_KEY_FILE: "empty" }, undefined, d))[0]).toContain("is empty");
    expect((await problems({ ...env, HUB_API_KEY_FILE: "nope" }, undefined, d))[0]).toContain(
      "cannot be read (ENOENT)",
    );
    expect((await problems({ ...env, HUB_API_KEY: "a-key", HUB_API_KEY_FILE: "key" }, undefined, d))[0]).toContain(
      "keep only one",
    );
  });

  test("a key with a bad value never appears in a problem line", async () => {
    const d = dir();
    const file = join(d, "c.toml");
    writeFileSync(file, `[api]\nurl = "https://a.example/v1"\nkey = ["secret-in-array"]\nserver_id = "${SERVER}"\n`);
    const p = await problems({}, file);
    expect(p.join("\n")).not.toContain("secret-in-array");
    expect(p[0]).toContain("api.key = [redacted]");
  });

  test("an explicit file that is missing or not TOML is one clear line", async () => {
    expect((await problems({}, "/nonexistent/hub.toml"))[0]).toContain(
      "not found: create it with `hub-agent init --config /nonexistent/hub.toml`",
    );
    const d = dir();
    expect(await problems({}, d)).toEqual([`config file ${d} is a directory: give the configuration file's path`]);
    writeFileSync(join(d, "bad.toml"), "[api\nurl = 1");
    expect(await problems({}, join(d, "bad.toml"))).toEqual([
      `${join(d, "bad.toml")}:1:1: not valid TOML: Expected ']' to close a table header but found (0x0A)`,
      "| [api",
      "| ^",
    ]);
  });

  test("a TOML error on a line setting a secret never prints the secret (a typo must not put it in the journal)", async () => {
    const d = dir();
    const file = join(d, "s.toml");
    for (const [text, shown] of [
      ["[api]\nkey = Sk_live_SECRET_0123\n", "| key = [hidden: a secret]"],
      ['[api]\nkey = "Sk_live_SECRET_0123\n', "| key = [hidden: a secret]"],
      ["[game.rcon]\n password = Sk_live_SECRET_0123 # x\n", "|  password = [hidden: a secret]"],
      ["api.key = Sk_live_SECRET_0123\n", "| api.key = [hidden: a secret]"],
    ] as const) {
      writeFileSync(file, text);
      const p = await problems({}, file);
      expect(p.join("\n")).not.toContain("SECRET_0123");
      expect(p[0]).toStartWith(`${file}:`);
      expect(p[1]).toBe(shown);
    }
    // Any other line is shown as written, with the value the parser quotes.
    writeFileSync(file, "[game]\nbridge = sim\n");
    expect(await problems({}, file)).toContain("| bridge = sim");
  });

  test("the caret points at the bad value, not at the start of its line", async () => {
    const d = dir();
    const file = join(d, "c.toml");
    for (const [line, caret] of [
      ["bridge = sim", "|          ^"],
      ["  bridge = sim", "|            ^"],
      ['url = "https://a.example/v1', "|       ^"],
      ["rewards = 10 x", "|              ^"],
    ] as const) {
      writeFileSync(file, `[game]\n${line}\n`);
      const p = await problems({}, file);
      expect([line, p.slice(1)]).toEqual([line, [`| ${line}`, caret]]);
      expect(p[0]).toStartWith(`${file}:2:${caret.length - 2}: not valid TOML: `);
    }
  });
});

describe("game bridge configuration", () => {
  const rcon = {
    ...good,
    HUB_GAME_BRIDGE: "rcon",
    HUB_GAME_PRESET: "minecraft",
    HUB_GAME_RCON_PASSWORD: "rc-secret-1",
  };

  test("an RCON bridge from the environment; the password is a secret; polling every 10 s by default", async () => {
    const r = await loadConfig({ env: { ...rcon, HUB_GAME_RCON_PORT: "25576" }, cwd: dir() });
    if (!r.ok) throw new Error(r.problems.join("\n"));
    expect(r.config.game).toMatchObject({
      bridge: "rcon",
      preset: "minecraft",
      rcon: { host: "127.0.0.1", port: 25576, password: "rc-secret-1" },
    });
    expect(r.secrets).toContain("rc-secret-1");
    expect(r.config.intervals.player_poll).toBe(10);
    const fast = await loadConfig({ env: { ...rcon, HUB_INTERVALS_PLAYER_POLL: "2" }, cwd: dir() });
    expect(fast.ok && fast.config.intervals.player_poll).toBe(2);
    expect(fast.ok && fast.warnings).toEqual([]); // not one of the service's intervals
    expect(envName("game.rcon.password_file")).toBe("HUB_GAME_RCON_PASSWORD_FILE");
  });

  test("what a bridge needs is named, one line each", async () => {
    const { HUB_GAME_RCON_PASSWORD: _pw, HUB_GAME_PRESET: _p, ...bare } = rcon;
    const p = await problems(bare);
    expect(p).toEqual([
      expect.stringContaining(
        "game.preset is missing: set preset under [game] in hub-agent.toml, or export HUB_GAME_PRESET",
      ),
      expect.stringContaining("game.rcon.password is missing: set password under [game.rcon]"),
    ]);
    expect(p[0]).toContain(`game.bridge = "rcon" (from HUB_GAME_BRIDGE) needs to know the game (${PRESET_LIST})`);
    expect(await problems({ ...rcon, HUB_GAME_PRESET: "quake" })).toEqual([
      `game.preset = "quake" (from HUB_GAME_PRESET) must be one of: ${PRESET_LIST} (the game: ${PRESET_LIST} (see the README for each game's settings))`,
    ]);
    expect(await problems({ ...rcon, HUB_GAME_BRIDGE: "telnet" })).toEqual([
      expect.stringContaining(
        'game.bridge = "telnet" (from HUB_GAME_BRIDGE) must be one of: sim, rcon, wrapper, q3rcon, webrcon',
      ),
    ]);
    expect(await problems({ ...rcon, HUB_GAME_PRESET: "openarena" })).toEqual([
      expect.stringContaining('needs Source RCON, which openarena doesn\'t speak: use game.bridge = "q3rcon"'),
    ]);
    expect(await problems({ ...rcon, HUB_GAME_BRIDGE: "q3rcon" })).toEqual([
      expect.stringContaining("needs Quake 3 rcon, which minecraft doesn't speak"),
    ]);
    expect(await problems({ ...rcon, HUB_GAME_RCON_PORT: "70000" })).toEqual([
      expect.stringContaining('game.rcon.port = "70000" (from HUB_GAME_RCON_PORT) must be a port number (1-65535)'),
    ]);
  });

  test("a bad RCON password value or a q3rcon password with spaces is never shown", async () => {
    const p = await problems({
      ...rcon,
      HUB_GAME_BRIDGE: "q3rcon",
      HUB_GAME_PRESET: "openarena",
      HUB_GAME_RCON_PASSWORD: "my secret",
    });
    expect(p).toEqual([expect.stringContaining("game.rcon.password = [redacted] contains spaces")]);
    expect(p.join("\n")).not.toContain("my secret");
  });

  test("the password can come from a file (relative to the config file); never both", async () => {
    const d = dir();
    writeFileSync(join(d, "rcon.pw"), "from-file-pw\n");
    const file = join(d, "agent.toml");
    writeFileSync(file, `[game]\nbridge = "rcon"\npreset = "gmod"\n[game.rcon]\npassword_file = "rcon.pw"\n`);
    const { HUB_GAME_BRIDGE: _, ...api } = good; // the file's bridge
    const r = await loadConfig({ env: api, cwd: "/", file });
    if (!r.ok) throw new Error(r.problems.join("\n"));
    expect(r.config.game.rcon).toEqual({ host: "127.0.0.1", password: "from-file-pw", allow_remote: false });
    expect(r.secrets).toContain("from-file-pw");
    expect((await problems({ ...api, HUB_GAME_RCON_PASSWORD: "x-pw" }, file))[0]).toContain("keep only one");
    writeFileSync(join(d, "rcon.pw"), "");
    expect((await problems(api, file))[0]).toContain("is empty: put the RCON password in it");
  });

  test("the wrapper's command: a TOML array, or a JSON array in the environment; paths follow the file", async () => {
    const d = dir();
    const file = join(d, "agent.toml");
    writeFileSync(
      file,
      `[game]\nbridge = "wrapper"\npreset = "openarena"\nlog_file = "oa/games.log"\n[game.wrapper]\ncommand = ["/usr/games/openarena-server", "+set", "dedicated", "1"]\ncwd = "oa"\n`,
    );
    const r = await loadConfig({ env: good, cwd: "/", file });
    if (!r.ok) throw new Error(r.problems.join("\n"));
    expect(r.config.game.wrapper).toEqual({
      command: ["/usr/games/openarena-server", "+set", "dedicated", "1"],
      cwd: join(d, "oa"),
      restart: false,
      env: {},
    });
    expect(r.config.game.log_file).toBe(join(d, "oa", "games.log"));
    const env = { ...good, HUB_GAME_BRIDGE: "wrapper", HUB_GAME_PRESET: "minecraft" };
    const fromEnv = await loadConfig({
      env: { ...env, HUB_GAME_WRAPPER_COMMAND: '["java", "-jar", "server.jar", "nogui"]' },
      cwd: d,
    });
    expect(fromEnv.ok && fromEnv.config.game.wrapper.command).toEqual(["java", "-jar", "server.jar", "nogui"]);
    for (const bad of ["java -jar server.jar", "[]", '[""]', "[1, 2]"]) {
      expect(await problems({ ...env, HUB_GAME_WRAPPER_COMMAND: bad })).toEqual([
        expect.stringContaining(
          "(from HUB_GAME_WRAPPER_COMMAND) must be the server and its arguments as an array of strings",
        ),
      ]);
    }
    expect(await problems(env)).toEqual([
      expect.stringContaining(
        "game.wrapper.command is missing: set command under [game.wrapper] in hub-agent.toml, or export HUB_GAME_WRAPPER_COMMAND",
      ),
    ]);
  });

  test("the wrapper's command_pipe follows the file; user and group are account names or numbers; group needs user", async () => {
    const d = dir();
    const file = join(d, "agent.toml");
    writeFileSync(
      file,
      `[game]\nbridge = "wrapper"\npreset = "openarena"\n[game.wrapper]\ncommand = ["/srv/game"]\ncommand_pipe = "run/console.fifo"\nuser = "freeciv"\ngroup = "1000"\n`,
    );
    const r = await loadConfig({ env: good, cwd: "/", file });
    if (!r.ok) throw new Error(r.problems.join("\n"));
    expect(r.config.game.wrapper).toMatchObject({
      command_pipe: join(d, "run", "console.fifo"),
      user: "freeciv",
      group: "1000",
    });
    const env = {
      ...good,
      HUB_GAME_BRIDGE: "wrapper",
      HUB_GAME_PRESET: "openarena",
      HUB_GAME_WRAPPER_COMMAND: '["/srv/game"]',
    };
    for (const [key, bad] of [
      ["USER", "-x"],
      ["USER", "a:b"],
      ["GROUP", "games group"],
    ] as const) {
      const [p] = await problems({ ...env, HUB_GAME_WRAPPER_USER: "freeciv", [`HUB_GAME_WRAPPER_${key}`]: bad });
      expect(p).toStartWith(`game.wrapper.${key.toLowerCase()} = "${bad}" (from HUB_GAME_WRAPPER_${key}) must be a`);
    }
    expect(await problems({ ...env, HUB_GAME_WRAPPER_GROUP: "games" })).toEqual([
      "game.wrapper.group (from HUB_GAME_WRAPPER_GROUP) needs game.wrapper.user: set the user the server runs as, or remove the group",
    ]);
  });

  test("commands.trusted_groups: none by default; a TOML array, or comma-separated in the environment", async () => {
    const r = await loadConfig({ env: good, cwd: dir() });
    expect(r.ok && r.config.commands.trusted_groups).toEqual([]);
    const d = dir();
    const file = join(d, "agent.toml");
    writeFileSync(file, `[commands]\ntrusted_groups = ["admin", " superadmin "]\n`);
    const fromFile = await loadConfig({ env: good, cwd: d, file });
    expect(fromFile.ok && fromFile.config.commands.trusted_groups).toEqual(["admin", "superadmin"]);
    const fromEnv = await loadConfig({ env: { ...good, HUB_COMMANDS_TRUSTED_GROUPS: "admin, mod" }, cwd: d });
    expect(fromEnv.ok && fromEnv.config.commands.trusted_groups).toEqual(["admin", "mod"]);
    writeFileSync(file, `[commands]\ntrusted_groups = [1]\n`);
    expect(await problems(good, file)).toEqual([
      expect.stringContaining('must be a list of in-game group names, e.g. ["admin", "superadmin"]'),
    ]);
  });

  test("preset overrides are checked at load: regexes, named groups, templates, unknown keys", async () => {
    expect(
      await problems({
        ...rcon,
        HUB_GAME_OVERRIDES_LINES_CHAT: "(",
        HUB_GAME_OVERRIDES_COMMANDS_KICK: "kick {player}",
      }),
    ).toEqual([expect.stringContaining("game.overrides.lines.chat is not a valid regular expression")]);
    expect(await problems({ ...rcon, HUB_GAME_OVERRIDES_COMMANDS_KICK: "kick {player}" })).toEqual([
      expect.stringContaining("game.overrides.commands.kick: unknown placeholder {player}"),
    ]);
    const d = dir();
    const file = join(d, "agent.toml");
    writeFileSync(file, `[game.overrides.commands]\nbann = "ban {uuid}"\n`);
    expect(await problems(rcon, file)).toEqual([expect.stringContaining("unknown key game.overrides.commands.bann")]);
    const ok = await loadConfig({
      env: {
        ...rcon,
        HUB_GAME_OVERRIDES_COMMANDS_MESSAGE: "msg {name} {text}",
        HUB_GAME_OVERRIDES_MULTI_GROUP: "false",
      },
      cwd: d,
    });
    expect(ok.ok && ok.config.game.overrides).toEqual({
      commands: { message: "msg {name} {text}" },
      lines: {},
      multi_group: false,
    });
  });
});

test("the init template puts nested keys in their own tables, each once", () => {
  const text = renderTemplate({ "game.rcon.host": "10.0.0.5", "game.overrides.commands.kick": "kick {uuid} {reason}" });
  const tables = text.split("\n").filter((l) => l.startsWith("["));
  expect(new Set(tables).size).toBe(tables.length);
  expect(tables).toContain("[game.rcon]");
  expect(parseTomlSubset(text)).toMatchObject({
    game: { rcon: { host: "10.0.0.5" }, overrides: { commands: { kick: "kick {uuid} {reason}" } } },
  });
});

describe("TOML subset parser (used where Bun's parser is absent)", () => {
  test("agrees with Bun's parser on the init template and typical files", () => {
    const samples = [
      renderTemplate(),
      renderTemplate({ "api.url": "https://x/v1", "api.key": 'k"\\ey', "api.server_id": SERVER }),
      `lang = "de" # comment\n[api]\nurl = 'https://x/v1'\ntimeout = 2.5\nallow_insecure = true\n[game.wrapper]\ncommand = [\n  "oa_ded", "+set", # trailing\n  "dedicated 1",\n]\n[hooks]\n"hub ready" = "x"\na.b = 1_000\n`,
    ];
    for (const text of samples) expect(parseTomlSubset(text)).toEqual(Bun.TOML.parse(text) as Record<string, unknown>);
  });

  test("refuses what it does not support instead of misreading it", () => {
    expect(() => parseTomlSubset('a = """x"""')).toThrow("multi-line strings");
    expect(() => parseTomlSubset("a = bare")).toThrow("strings need quotes");
    expect(() => parseTomlSubset("a = 1\na = 2")).toThrow("set twice");
    expect(() => parseTomlSubset("[[x]]")).toThrow("arrays of tables");
  });
});

describe("TOML errors name the line and column", () => {
  const lines = renderTemplate().split("\n");
  const withAt = (at: number, bad: string) => [...lines.slice(0, at), bad, ...lines.slice(at)].join("\n");

  test("Bun's parser names no position: it is found by parsing prefixes", () => {
    const cases: [string, number, number][] = [
      ["port = 1 x", 61, 10], // junk after a value: at the junk
      ['  url = "open', 31, 9], // an unterminated string: its line, at its opening quote
      ["a = [1,", 101, 5], // an array never closed: where it opens, though the parser fails further down
      ["timeout = 1\ntimeout = 2", 41, 1], // a key set twice: the second one
    ];
    for (const [bad, line, column] of cases) {
      const text = withAt(line - 1, bad);
      let error: unknown;
      try {
        parseToml(text);
      } catch (e) {
        error = e;
      }
      if (bad.includes("\n")) {
        expect(error).toMatchObject({ line: line + 1, column, source: "timeout = 2" });
        continue;
      }
      expect(error).toBeInstanceOf(TomlError);
      expect(error).toMatchObject({ line, column, source: bad });
    }
  });

  test("CRLF line ends and a long file (bisected) are located as well", () => {
    const crlf = withAt(60, "port = 1 x").split("\n").join("\r\n");
    expect(() => parseToml(crlf)).toThrow("line 61, column 10: Expected a newline");
    const long = Array.from({ length: 5_000 }, (_, i) => (i % 10 ? `k${i} = ${i}` : `[t${i}]`));
    long.splice(4_321, 0, 'x = "open');
    expect(() => parseToml(long.join("\n"))).toThrow(/^line 4322, column 5: Unterminated string/);
  });

  test("the subset parser names them itself", () => {
    expect(() => parseTomlSubset("a = 1\nb = 2 x\n")).toThrow("line 2, column 7: unexpected");
    expect(() => parseTomlSubset("a = 1\nb = 2 x\n")).toThrow(TomlError);
  });
});

describe("a configuration that is not valid still tells its storage directory (status, queue status)", () => {
  const storageOf = async (text: string | undefined, env: Record<string, string> = {}) => {
    const cwd = dir();
    if (text !== undefined) writeFileSync(join(cwd, "hub-agent.toml"), text);
    const r = await loadConfig({ env, cwd });
    if (r.ok) throw new Error("expected the configuration to be refused");
    return { cwd, dir: r.storage?.dir };
  };

  test("from the keys read, the file's [storage] line when it does not parse, HUB_STORAGE_DIR over both", async () => {
    const missing = await storageOf(undefined);
    expect(missing.dir).toBe(join(missing.cwd, "data")); // the default, as a valid one would have it
    const unknown = await storageOf('[storage]\ndir = "store"\n[api]\nkee = "x"\n');
    expect(unknown.dir).toBe(join(unknown.cwd, "store"));
    const broken = await storageOf("[storage] # the store\ndir = '/srv/hub'\n[intervals]\nstatus = 6O\n");
    expect(broken.dir).toBe("/srv/hub");
    const dotted = await storageOf('storage.dir = "/srv/dotted"\n[api\n');
    expect(dotted.dir).toBe("/srv/dotted");
    const elsewhere = await storageOf('[game]\ndir = "/not/the/store"\n[api\n');
    expect(elsewhere.dir).toBe(join(elsewhere.cwd, "data"));
    expect((await storageOf("[api\n", { HUB_STORAGE_DIR: "/srv/env" })).dir).toBe("/srv/env");
  });
});
