/**
 * The generic console knobs against a real server no preset names: Debian's freeciv-server 3.0, wrapped with the
 * generic preset. It refuses to run as root (`game.wrapper.user`), has no echo command but answers
 * `help <marker>` with `No match for help argument '<marker>'.` after repeating the line it read (`> help …`), and
 * frames its `list` between two equal lines of dashes (`list_start`, `list_end`). Its players here are the AI
 * nations it adds (no client is installed); `set aifill <n>` changes them. It binds 127.0.0.1 only (checked from
 * /proc) and announces nothing (`--Announce none`; the metaserver is off unless asked for).
 *
 * Needs root (a temporary user to run the server as); skipped with the reason when not root or not installed
 * (`.ci/run` installs freeciv-server).
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { systemClock } from "../../lib/clock.ts";
import { loadConfig } from "../../lib/app/config.ts";
import type { GameBridge } from "../../lib/game/bridge.ts";
import { createBridge } from "../../lib/game/index.ts";
import type { PresetBridge } from "../../lib/game/preset-bridge.ts";
import { memoryLogger } from "../../lib/log.ts";
import { docBlock } from "../support/docs.ts";
import { socketsOf } from "../support/sockets.ts";
import { freePort } from "./world.ts";

const FREECIV = "/usr/games/freeciv-server";
const STDBUF = ["/usr/bin/stdbuf", "/bin/stdbuf"].find((p) => existsSync(p)); // the docs' command runs it
const root = process.getuid?.() === 0;
const skip = !existsSync(FREECIV)
  ? `${FREECIV} is missing (Debian package freeciv-server; .ci/run installs it)`
  : !root
    ? "it needs root (a temporary user to run freeciv-server as, which refuses root)"
    : !STDBUF
      ? "stdbuf (coreutils) is missing"
      : "";
if (skip) console.warn(`SKIPPED: the freeciv-server test: ${skip}`);

const user = `hubfc${Math.random().toString(36).slice(2, 8)}`;
let dir = "";
let bridge: GameBridge | undefined;
afterEach(async () => {
  await bridge?.stop();
  bridge = undefined;
});

/** The docs' freeciv configuration, word for word but for the port, the directory and the user; started. */
async function wrapped(edit: (toml: string) => string = (t) => t): Promise<GameBridge> {
  const port = await freePort("tcp");
  const readme = docBlock("docs/games/your-own-game.md", "toml", 1, "## The generic preset");
  const toml = edit(
    readme
      .replace('"--bind", "127.0.0.1",', `"--bind", "127.0.0.1", "--port", "${port}",`)
      .replace(/^cwd = .*$/m, `cwd = ${JSON.stringify(join(dir, "server"))}`)
      .replace(/^user = "freeciv" .*$/m, `user = "${user}"`),
  );
  expect(toml).toContain(`"--port", "${port}"`);
  expect(toml).toContain(`user = "${user}"`);
  const file = join(dir, "hub-agent.toml");
  writeFileSync(file, toml);
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
  bridge = await createBridge(r.config, {
    clock: systemClock,
    logger: memoryLogger(),
    input: new PassThrough(),
    output: null,
  });
  await bridge.start();
  return bridge;
}

const names = async (b: GameBridge) => (await b.status()).players.map((p) => p.name);
const pidOf = () => Number(spawnSync("pgrep", ["-u", user, "-x", "freeciv-server"], { encoding: "utf8" }).stdout);

describe.skipIf(!!skip)("freeciv-server 3.0 wrapped with the generic preset (real server)", () => {
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "hub-freeciv-"));
    chmodSync(dir, 0o755);
    const add = spawnSync("useradd", ["--create-home", "--home-dir", join(dir, "home"), "--user-group", user]);
    if (add.status !== 0) throw new Error(`useradd: ${add.stderr}`);
    mkdirSync(join(dir, "server"));
    const uid = Number(spawnSync("id", ["-u", user], { encoding: "utf8" }).stdout);
    const gid = Number(spawnSync("id", ["-g", user], { encoding: "utf8" }).stdout);
    chownSync(join(dir, "server"), uid, gid);
  });
  afterAll(() => {
    spawnSync("userdel", ["--remove", user]);
  });

  test("as root it refuses to start", () => {
    const r = spawnSync(FREECIV, ["--bind", "127.0.0.1", "--port", "1", "--Announce", "none"], {
      encoding: "utf8",
      timeout: 20_000,
    });
    expect(`${r.stdout}${r.stderr}`).toContain("Fatal error: you're trying to run me as superuser!");
    expect(r.status).not.toBe(0);
  }, 30_000);

  test("run as a user, `help {marker}` as its echo: the framed list read, loopback only", async () => {
    const b = await wrapped();
    expect(await names(b)).toEqual(["AI*1", "AI*2", "AI*3", "AI*4", "AI*5", "AI*6"]);
    expect(await b.exec("set aifill 2")).toContain("Console: 'aifill' has been set to 2.");
    expect(await names(b)).toEqual(["AI*1", "AI*2"]);
    const sockets = socketsOf(pidOf());
    expect(sockets.length).toBeGreaterThan(0);
    expect(sockets.filter((s) => !s.startsWith("127.0.0.1:"))).toEqual([]);
  }, 60_000);

  test("without echo: the list ends at its second line of dashes (list_start = list_end)", async () => {
    const b = await wrapped((toml) =>
      toml.replace(/^echo = .*$/m, "").replace(/^# (list_start|list_end) = /gm, "$1 = "),
    );
    expect((b as PresetBridge).preset.echo).toBeUndefined();
    expect(await names(b)).toEqual(["AI*1", "AI*2", "AI*3", "AI*4", "AI*5", "AI*6"]);
  }, 60_000);
});
