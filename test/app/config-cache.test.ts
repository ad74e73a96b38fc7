import { describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CACHE_FILE, type CachedLoadOptions, loadCachedConfig } from "../../lib/app/config-cache.ts";
import type { ConfigIo } from "../../lib/config/index.ts";
import * as fsio from "../../lib/fsio.ts";

const SERVER = "541d1c41-1b58-40fc-8780-70c400ea5686";

/** A configuration file with its key in a key file, and a store folder closed to others. */
function setup(extra = "") {
  const cwd = mkdtempSync(join(tmpdir(), "hub-config-cache-"));
  const file = join(cwd, "hub-agent.toml");
  writeFileSync(join(cwd, "key"), "k-first\n", { mode: 0o600 });
  const write = (more = "") =>
    writeFileSync(
      file,
      `[api]\nurl = "https://api.vyhub.app/demo/v1"\nkey_file = "key"\nserver_id = "${SERVER}"\n` +
        `[game]\nbridge = "sim"\n${extra}${more}`,
      { mode: 0o600 },
    );
  write();
  mkdirSync(join(cwd, "data"), { mode: 0o700 });
  return { cwd, file, write, store: join(cwd, "data") };
}

/** Loads through the cache; `checked` says whether the loader ran (a miss) or the entry served (a hit). */
async function load(opts: Omit<CachedLoadOptions, "env" | "build"> & { env?: CachedLoadOptions["env"] }, build = "b1") {
  let calls = 0;
  const io: ConfigIo = {
    readFile: (path) => (calls++, fsio.readFile(path, "utf8")),
    stat: (path) => (calls++, fsio.stat(path)),
  };
  const result = await loadCachedConfig({ env: {}, ...opts, io, build });
  return { result, checked: calls > 0 };
}

const config = (r: Awaited<ReturnType<typeof load>>) => {
  if (!r.result.ok) throw new Error(r.result.problems.join("\n"));
  return r.result.config;
};

describe("the configuration cache", () => {
  test("what the game says of its ids is kept with it: served by a hit, with no preset to load", async () => {
    const games: [string, { userType: string; byName: boolean }][] = [
      ['bridge = "sim"\n', { userType: "STEAM", byName: false }],
      ['bridge = "rcon"\npreset = "gmod"\n[game.rcon]\npassword = "pw-gmod-1"\n', { userType: "STEAM", byName: false }],
      [
        'bridge = "q3rcon"\npreset = "openarena"\n[game.rcon]\npassword = "pw-oa-1"\n',
        { userType: "CENTRAL", byName: true },
      ],
    ];
    for (const [game, facts] of games) {
      const { cwd, file } = setup();
      writeFileSync(file, readFileSync(file, "utf8").replace('bridge = "sim"\n', game));
      const first = await load({ cwd });
      expect(first.result.ok && first.result.game).toEqual(facts);
      const second = await load({ cwd });
      expect(second.checked).toBe(false);
      expect(second.result.ok && second.result.game).toEqual(facts);
    }
  });

  test("a second load is served from the cache, with the same result and warnings", async () => {
    const { cwd } = setup("[intervals]\nstatus = 5\n");
    const first = await load({ cwd });
    expect(first.checked).toBe(true);
    const second = await load({ cwd });
    expect(second.checked).toBe(false);
    expect(second.result).toEqual(first.result);
    expect(second.result.ok && second.result.warnings[0]).toContain("intervals.status = 5 s is below");
    expect(config(second).api.key).toBe("k-first");
  });

  test("a changed file, variable, key file or build is checked again", async () => {
    const { cwd, write } = setup();
    await load({ cwd });
    write("[storage]\ndir = 'data'\n# changed\n");
    expect((await load({ cwd })).checked).toBe(true);
    expect((await load({ cwd })).checked).toBe(false);

    const env = { HUB_API_TIMEOUT: "20" };
    const changed = await load({ cwd, env });
    expect(changed.checked).toBe(true);
    expect(config(changed).api.timeout).toBe(20);
    expect((await load({ cwd, env: { HUB_UNRELATED: "1" } })).checked).toBe(true);

    writeFileSync(join(cwd, "key"), "k-second\n");
    const rekeyed = await load({ cwd });
    expect(rekeyed.checked).toBe(true);
    expect(config(rekeyed).api.key).toBe("k-second");

    expect((await load({ cwd }, "b2")).checked).toBe(true);
    expect((await load({ cwd }, "b2")).checked).toBe(false);
  });

  test("a key file opened to others is said again, and no longer once it is closed", async () => {
    const { cwd } = setup();
    await load({ cwd });
    chmodSync(join(cwd, "key"), 0o644);
    const loose = await load({ cwd });
    expect(loose.checked).toBe(true);
    expect(loose.result.ok && loose.result.exposed.map((e) => e.fix)).toEqual([`chmod o-rwx ${join(cwd, "key")}`]);
    expect((await load({ cwd })).result).toEqual(loose.result);
    chmodSync(join(cwd, "key"), 0o600);
    const closed = await load({ cwd });
    expect(closed.checked).toBe(true);
    expect(closed.result.ok && closed.result.exposed).toEqual([]);
  });

  test("a bad configuration is never cached as good", async () => {
    const { cwd, write, store } = setup();
    write("[api.extra]\n");
    expect((await load({ cwd })).result.ok).toBe(false);
    expect(existsSync(join(store, CACHE_FILE))).toBe(false);
    write();
    expect((await load({ cwd })).result.ok).toBe(true);
    write("bridge_typo = 1\n");
    const bad = await load({ cwd });
    expect(bad.checked).toBe(true);
    expect(bad.result.ok).toBe(false);
    writeFileSync(join(cwd, "key"), "");
    write();
    expect((await load({ cwd })).result.ok).toBe(false);
  });

  test("a garbled or torn entry is a miss, never an error", async () => {
    const { cwd, store } = setup();
    await load({ cwd });
    const entry = join(store, CACHE_FILE);
    const text = readFileSync(entry, "utf8");
    for (const garbled of [text.replace("k-first", "k-fir5t"), text.slice(0, text.length / 2), "", "\n{}", "x"]) {
      writeFileSync(entry, garbled);
      const r = await load({ cwd });
      expect(r.checked).toBe(true);
      expect(config(r).api.key).toBe("k-first");
    }
  });

  test("nothing is kept in a store others can open, nor run from source (no build)", async () => {
    const { cwd, store } = setup();
    chmodSync(store, 0o755);
    await load({ cwd });
    expect(existsSync(join(store, CACHE_FILE))).toBe(false);
    chmodSync(store, 0o700);
    const r = await loadCachedConfig({ env: {}, cwd });
    expect(r.ok).toBe(true);
    expect(existsSync(join(store, CACHE_FILE))).toBe(false);
    await load({ cwd });
    expect(existsSync(join(store, CACHE_FILE))).toBe(true);
  });
});
