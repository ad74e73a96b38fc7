/**
 * `game.wrapper.user` and `group`: a server that refuses to run as root (the fake with --refuse-root, as
 * freeciv-server does) started as a temporary user. Needs root (to add the user and to switch to it); skipped
 * with the reason otherwise.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { wrapper } from "../../../lib/game/kinds/wrapper.ts";
import { PRESETS } from "../../../lib/game/presets/index.ts";
import { systemClock } from "../../../lib/clock.ts";
import { memoryLogger } from "../../../lib/log.ts";
import { cleanup, wrap } from "./harness.ts";

const root = process.getuid?.() === 0;
const tools = ["useradd", "userdel", "groupadd", "groupdel", "getent"].filter(
  (t) => spawnSync("sh", ["-c", `command -v ${t}`]).status !== 0,
);
const skip = !root
  ? "they need root (to add a temporary user, and to start a server as it)"
  : tools.length
    ? `${tools.join(", ")} missing`
    : "";
if (skip) console.warn(`SKIPPED: the game.wrapper.user tests: ${skip}`);

const suffix = Math.random().toString(36).slice(2, 8);
const user = `hubtest${suffix}`;
const group = `hubgrp${suffix}`;
let home = "";
const id = (flag: string, name = user) => Number(spawnSync("id", [flag, name], { encoding: "utf8" }).stdout.trim());
const gidOf = (name: string) => Number(spawnSync("getent", ["group", name], { encoding: "utf8" }).stdout.split(":")[2]);

afterEach(cleanup);

describe.skipIf(!!skip)("a wrapped server run as another user (hub-agent as root)", () => {
  beforeAll(() => {
    const dir = mkdtempSync(join(tmpdir(), "hub-runas-"));
    chmodSync(dir, 0o755);
    home = join(dir, "home");
    const add = spawnSync("useradd", ["--create-home", "--home-dir", home, "--shell", "/bin/sh", "--user-group", user]);
    if (add.status !== 0) throw new Error(`useradd: ${add.stderr}`);
    if (spawnSync("groupadd", [group]).status !== 0) throw new Error("groupadd failed");
  });
  afterAll(() => {
    spawnSync("userdel", ["--remove", user]);
    spawnSync("groupdel", [group]);
  });

  test("a server that refuses root starts as the user, with its HOME, USER, LOGNAME and SHELL, no supplementary groups", async () => {
    const refused = await wrap(["--refuse-root"]);
    await refused.server.whenReady().catch(() => {});
    expect(refused.has("Fatal error: you're trying to run me as superuser!")).toBe(true);
    expect(refused.exits[0]?.code).toBe(1);

    const saved = process.env.TMPDIR;
    process.env.TMPDIR = "/root/hub-agent-only"; // hub-agent's own: not the server's
    try {
      const w = await wrap(["--refuse-root"], { user });
      expect(await w.transport.send("whoami")).toBe(
        `uid=${id("-u")} gid=${id("-g")} groups= HOME=${home} USER=${user} LOGNAME=${user} SHELL=/bin/sh TMPDIR=`,
      );
      expect(w.logger.lines.some((l) => l.msg.endsWith(` as ${user}`))).toBe(true);
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
  });

  test("game.wrapper.group: the server's group instead of the user's own", async () => {
    const w = await wrap([], { user, group });
    expect(await w.transport.send("whoami")).toStartWith(`uid=${id("-u")} gid=${gidOf(group)} groups= `);
  });

  test("its command pipe is created for it (0600, its owner) and read by it", async () => {
    const fifo = join(mkdtempSync(join(tmpdir(), "hub-runas-fifo-")), "console.fifo");
    chmodSync(join(fifo, ".."), 0o755);
    const w = await wrap([`--command-pipe=${fifo}`, "--refuse-root"], { user, commandPipe: fifo });
    const st = statSync(fifo);
    expect([st.uid, st.gid, st.mode & 0o777]).toEqual([id("-u"), id("-g"), 0o600]);
    expect(await w.transport.send("join Alice")).toBe("Alice joined the game");
  });

  test("a user or group that does not exist: the start fails with one line naming the key and the fix", async () => {
    await expect(wrap([], { user: "nosuchuser-hub" })).rejects.toThrow(
      'game.wrapper.user = "nosuchuser-hub" is not a user on this machine: create it (useradd --system nosuchuser-hub) or name an existing one',
    );
    await expect(wrap([], { user, group: "nosuchgroup-hub" })).rejects.toThrow(
      `game.wrapper.group = "nosuchgroup-hub" is not a group on this machine: create it (groupadd --system nosuchgroup-hub), name an existing one, or remove the key to use ${user}'s own group`,
    );
    const check = await wrapper.check(
      {
        section: { command: [process.execPath], user: "nosuchuser-hub", env: {}, restart: false },
        preset: PRESETS.generic,
        deps: { clock: systemClock, logger: memoryLogger() },
        consoleCommands: [],
      },
      { timeoutMs: 1000 },
    );
    expect(check).toMatchObject({
      status: "fail",
      message: 'game.wrapper.user = "nosuchuser-hub" is not a user on this machine',
      fix: "create it (useradd --system nosuchuser-hub) or name an existing one",
    });
  });

  test("hub-agent not root: another user is refused with one line; its own user is fine", () => {
    const script = join(mkdtempSync(join(tmpdir(), "hub-runas-script-")), "resolve.ts");
    chmodSync(join(script, ".."), 0o755);
    const lib = new URL("../../../lib/game/wrap/run-as.ts", import.meta.url).pathname;
    writeFileSync(
      script,
      `import { resolveRunAs } from ${JSON.stringify(lib)};
for (const name of ["root", ${JSON.stringify(user)}]) {
  console.log(await resolveRunAs(name).then((r) => "ok " + r.name, (e) => e.message));
}`,
    );
    const r = spawnSync(process.execPath, [script], {
      uid: id("-u"),
      gid: id("-g"),
      cwd: home,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home },
      encoding: "utf8",
    });
    expect(r.stdout.trim().split("\n")).toEqual([
      `game.wrapper.user = "root": hub-agent runs as uid ${id("-u")}, not root, and can't start the server as root (uid 0, gid 0): run hub-agent as root (docs/games.md, "Wrapping the server"), or as root itself, or remove game.wrapper.user`,
      `ok ${user}`,
    ]);
  });
});
