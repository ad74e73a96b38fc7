/**
 * Several servers on one host (lib/config/servers.ts): servers.d beside the shared file, one `<name>.toml` a server,
 * each laid over the shared file and the environment; each server's own store; paths relative to the file that set
 * them; problems that name the server's file.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../lib/app/config.ts";
import { serverChoice } from "../../lib/app/servers.ts";
import { listServers, overlay } from "../../lib/config/servers.ts";

const root = mkdtempSync(join(tmpdir(), "servers-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const SERVER_A = "541d1c41-1b58-40fc-8780-70c400ea5686";
const SERVER_B = "0f7b5a5e-9c1e-4a44-8f6c-3d2b1a0e9f11";
const SHARED = `[api]\nurl = "https://api.example.org/inst/v1"\nkey = "shared-key"\n\n[game]\nbridge = "sim"\n\n[intervals]\nstatus = 90\n`;

/** A host directory: hub-agent.toml and servers.d/<name>.toml for each entry of `servers`. */
function host(servers: Record<string, string>, shared = SHARED): string {
  const dir = mkdtempSync(join(root, "host-"));
  writeFileSync(join(dir, "hub-agent.toml"), shared);
  mkdirSync(join(dir, "servers.d"));
  for (const [name, text] of Object.entries(servers)) writeFileSync(join(dir, "servers.d", name), text);
  return dir;
}

const load = (cwd: string, server?: string, env: Record<string, string> = {}) =>
  loadConfig({ env, cwd, ...(server ? { server } : {}) });

test("a server's file over the shared file, table by table; its own store under the shared one", async () => {
  const cwd = host({
    "alpha.toml": `[api]\nserver_id = "${SERVER_A}"\n\n[intervals]\ngroups = 120\n`,
    "beta.toml": `[api]\nserver_id = "${SERVER_B}"\nkey = "beta-key"\n`,
  });
  const a = await load(cwd, "alpha");
  const b = await load(cwd, "beta");
  if (!a.ok || !b.ok) throw new Error(JSON.stringify([a, b]));
  expect([a.config.api.server_id, a.config.api.key, a.config.api.url]).toEqual([
    SERVER_A,
    "shared-key",
    "https://api.example.org/inst/v1",
  ]);
  expect([a.config.intervals.status, a.config.intervals.groups]).toEqual([90, 120]); // both tables' keys
  expect([b.config.api.server_id, b.config.api.key]).toEqual([SERVER_B, "beta-key"]);
  expect(a.config.storage.dir).toBe(join(cwd, "data", "servers", "alpha"));
  expect(b.config.storage.dir).toBe(join(cwd, "data", "servers", "beta"));
  expect(b.secrets).toContain("beta-key");
  expect(a.file).toBe(join(cwd, "servers.d", "alpha.toml"));
});

test("the environment overrides the shared file, a server's own file overrides both", async () => {
  const cwd = host({ "alpha.toml": `[api]\nserver_id = "${SERVER_A}"\nkey = "alpha-key"\n` });
  const env = { HUB_API_KEY: "env-key", HUB_INTERVALS_STATUS: "75", HUB_STORAGE_DIR: join(cwd, "state") };
  const a = await load(cwd, "alpha", env);
  if (!a.ok) throw new Error(a.problems.join("\n"));
  expect(a.config.api.key).toBe("alpha-key");
  expect(a.config.intervals.status).toBe(75);
  // The unit's HUB_STORAGE_DIR is the host's: each server gets its own folder under it.
  expect(a.config.storage.dir).toBe(join(cwd, "state", "servers", "alpha"));
});

test("paths in a server's file are relative to servers.d; its storage.dir is its own", async () => {
  const cwd = host(
    { "alpha.toml": `[api]\nserver_id = "${SERVER_A}"\nkey_file = "alpha.key"\n\n[storage]\ndir = "../alpha-store"\n` },
    SHARED.replace('key = "shared-key"\n', ""),
  );
  writeFileSync(join(cwd, "servers.d", "alpha.key"), "from-a-file\n", { mode: 0o600 });
  const a = await load(cwd, "alpha");
  if (!a.ok) throw new Error(a.problems.join("\n"));
  expect(a.config.api.key).toBe("from-a-file");
  expect(a.config.storage.dir).toBe(join(cwd, "alpha-store"));
});

test("a server's problem names its file: a missing key, a TOML error with its line, a file that is gone", async () => {
  const cwd = host(
    { "alpha.toml": `[api]\nkey = "k"\n`, "beta.toml": `[api]\nserver_id = "${SERVER_B}"\nkey = k\n` },
    SHARED.replace('key = "shared-key"\n', ""),
  );
  const a = await load(cwd, "alpha");
  expect(a.ok).toBe(false);
  if (a.ok) return;
  expect(a.problems.join("\n")).toContain(
    `api.server_id is missing: set server_id under [api] in ${join(cwd, "servers.d", "alpha.toml")}`,
  );
  expect(a.storage?.dir).toBe(join(cwd, "data", "servers", "alpha")); // status still finds its store
  const b = await load(cwd, "beta");
  expect(b.ok).toBe(false);
  if (!b.ok) expect(b.problems[0]).toStartWith(`${join(cwd, "servers.d", "beta.toml")}:3:`);
  const gone = await load(cwd, "gamma");
  expect(gone.ok).toBe(false);
  if (!gone.ok) expect(gone.problems[0]).toContain(`${join(cwd, "servers.d", "gamma.toml")} not found`);
});

test("servers.d: every <name>.toml, sorted; other files said once each and skipped; none without the folder", async () => {
  const cwd = host({
    "b.toml": "",
    "a.toml": "",
    "Bad Name.toml": "",
    "notes.txt": "",
    ".a.toml.swp": "",
    "c.toml~": "",
  });
  const list = await listServers({ env: {}, cwd }, async (dir) => readdirSync(dir));
  expect(list.names).toEqual(["a", "b"]);
  expect(list.ignored).toEqual([
    `${join(cwd, "servers.d", "Bad Name.toml")} is not read: a server's name is lower-case letters, digits, - and _, at most 40, starting with a letter or digit; rename it`,
    `${join(cwd, "servers.d", "notes.txt")} is not read: only <name>.toml files are servers`,
  ]);
  const none = await listServers({ env: {}, cwd: mkdtempSync(join(root, "none-")) }, async (dir) => readdirSync(dir));
  expect(none.names).toEqual([]);
});

test("which server a command is for: --server, HUB_SERVER, the only one, or every one", async () => {
  const two = host({ "alpha.toml": "", "beta.toml": "" });
  const one = host({ "alpha.toml": "" });
  const none = mkdtempSync(join(root, "single-"));
  expect(await serverChoice({ env: {}, cwd: two, server: "beta" })).toEqual({ kind: "one", name: "beta" });
  expect(await serverChoice({ env: { HUB_SERVER: "alpha" }, cwd: two })).toEqual({ kind: "one", name: "alpha" });
  expect(await serverChoice({ env: {}, cwd: two })).toMatchObject({ kind: "all", names: ["alpha", "beta"] });
  expect(await serverChoice({ env: {}, cwd: one })).toEqual({ kind: "one", name: "alpha", implied: true });
  expect(await serverChoice({ env: {}, cwd: none })).toEqual({ kind: "single" });
  expect(await serverChoice({ env: {}, cwd: two, server: "gamma" })).toEqual({
    kind: "problem",
    line: `no server is named gamma: there is no ${join(two, "servers.d")}/gamma.toml (its servers: alpha, beta)`,
  });
  expect(await serverChoice({ env: {}, cwd: two, server: "../etc" })).toMatchObject({ kind: "problem" });
});

test("overlay: tables merged key by key, other values (arrays too) replaced, the inputs untouched", () => {
  const base = { api: { url: "u", key: "k" }, game: { sim: { players: ["a"] } }, lang: "en" };
  const over = { api: { key: "k2" }, game: { sim: { players: ["b"] } } };
  expect(overlay(base, over)).toEqual({ api: { url: "u", key: "k2" }, game: { sim: { players: ["b"] } }, lang: "en" });
  expect(base.api.key).toBe("k");
});

test("docs/configuration.md's example server file loads over a shared file", async () => {
  const doc = await Bun.file(join(import.meta.dir, "..", "..", "docs", "configuration.md")).text();
  const section = doc.slice(doc.indexOf("## Several servers"));
  const example = /```toml\n([\s\S]*?)```/.exec(section)?.[1] as string;
  expect(example).toContain("servers.d/ttt-1.toml");
  const cwd = host(
    { "ttt-1.toml": example },
    SHARED.replace('key = "shared-key"\n', "").replace('bridge = "sim"\n', ""),
  );
  writeFileSync(join(cwd, "servers.d", "ttt-1.key"), "ttt-key\n", { mode: 0o600 });
  writeFileSync(join(cwd, "servers.d", "ttt-1.rcon"), "rcon-pass\n", { mode: 0o600 });
  const r = await load(cwd, "ttt-1");
  if (!r.ok) throw new Error(r.problems.join("\n"));
  expect([r.config.api.key, r.config.game.preset, r.config.game.rcon.port, r.config.game.rcon.password]).toEqual([
    "ttt-key",
    "gmod",
    27015,
    "rcon-pass",
  ]);
});

test("a servers.d or a file every user may change is refused in one line naming the fix", async () => {
  const cwd = host({ "alpha.toml": `[api]\nserver_id = "${SERVER_A}"\n` });
  const { chmodSync } = await import("node:fs");
  chmodSync(join(cwd, "servers.d"), 0o777); // anyone could add a server, with its commands
  const planted = await load(cwd, "alpha");
  expect(planted.ok).toBe(false);
  if (!planted.ok)
    expect(planted.problems).toEqual([
      `${join(cwd, "servers.d")} can be changed by every user on this machine (mode 0777); what it holds runs with the rights of the user running hub-agent: \`chmod o-w ${join(cwd, "servers.d")}\``,
    ]);
  chmodSync(join(cwd, "servers.d"), 0o755);
  chmodSync(join(cwd, "servers.d", "alpha.toml"), 0o666);
  const r = await load(cwd, "alpha");
  expect(r.ok || r.problems[0]).toContain("alpha.toml can be changed by every user");
  chmodSync(join(cwd, "servers.d", "alpha.toml"), 0o644);
  chmodSync(join(cwd, "hub-agent.toml"), 0o646);
  const shared = await load(cwd, "alpha");
  expect(shared.ok || shared.problems[0]).toContain("hub-agent.toml can be changed by every user");
  chmodSync(join(cwd, "hub-agent.toml"), 0o644);
  expect((await load(cwd, "alpha")).ok).toBe(true);
});

test("a server's key_file (password_file) wins over the shared key (password), as the key itself would", async () => {
  const cwd = host({
    "alpha.toml": `[api]\nserver_id = "${SERVER_A}"\nkey_file = "alpha.key"\n\n[game]\nbridge = "rcon"\npreset = "minecraft"\n\n[game.rcon]\nport = 25575\npassword_file = "alpha.rcon"\n`,
    "beta.toml": `[api]\nserver_id = "${SERVER_B}"\n`,
  });
  writeFileSync(join(cwd, "servers.d", "alpha.key"), "alpha-key\n", { mode: 0o600 });
  writeFileSync(join(cwd, "servers.d", "alpha.rcon"), "alpha-rcon\n", { mode: 0o600 });
  const env = { HUB_GAME_RCON_PASSWORD: "env-rcon" };
  const a = await load(cwd, "alpha", env);
  if (!a.ok) throw new Error(a.problems.join("\n"));
  expect([a.config.api.key, a.config.game.rcon.password]).toEqual(["alpha-key", "alpha-rcon"]);
  // The other server keeps the shared key (and the environment's password).
  const b = await load(cwd, "beta", env);
  if (!b.ok) throw new Error(b.problems.join("\n"));
  expect([b.config.api.key, b.config.game.rcon.password]).toEqual(["shared-key", "env-rcon"]);
  // Both in one file is still a mistake of that file.
  writeFileSync(
    join(cwd, "servers.d", "beta.toml"),
    `[api]\nserver_id = "${SERVER_B}"\nkey = "k"\nkey_file = "alpha.key"\n`,
  );
  const both = await load(cwd, "beta");
  expect(both.ok ? [] : both.problems[0]).toContain("api.key and api.key_file are both set");
});
