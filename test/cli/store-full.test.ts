/**
 * A real full and a real read-only store: a small tmpfs holds the store `run --once` filled with a server record and
 * a ban list, then is filled to the last byte (or remounted read-only). `run` (the compiled binary, sim bridge) must
 * still start and kick banned players, from the cache with the service down and from the live list (which it can't
 * cache) with the service up, and log the store failure once, not every round. `ban` on the full store says what is
 * wrong in one line and exits 8: nothing was queued.
 */
import { afterEach, expect, test } from "bun:test";
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Sandbox } from "../../lib/sandbox/index.ts";
import { spawn } from "../support/procs.ts";
import { until } from "../support/until.ts";
import { binary, hub, hubBinary } from "./binary.ts";
import { useSandbox } from "../support/sandbox.ts";
import { jsonLines } from "../support/agent-run.ts";
import { sandboxEnv } from "../support/sandbox-env.ts";

const BOB = { id: "76561198087654322", user: "f82e6399-324e-49a6-a411-09f621b77325" };
const CAROL = { id: "76561198123456783", user: "6ed1a4df-15d7-47f0-a8b0-d3bf844fa2de" };

async function sh(cmd: string[]): Promise<{ code: number; stderr: string }> {
  const p = spawn(cmd, { stdout: "ignore", stderr: "pipe" });
  const [code, stderr] = await Promise.all([p.exited, new Response(p.stderr).text()]);
  return { code, stderr };
}

const mounts: string[] = [];
async function mountTmpfs(dir: string, size: string): Promise<string | undefined> {
  mkdirSync(dir, { recursive: true });
  const r = await sh(["mount", "-t", "tmpfs", "-o", `size=${size},mode=0700`, "tmpfs", dir]);
  if (r.code !== 0) return r.stderr.trim() || `mount exited ${r.code}`;
  mounts.push(dir);
  return undefined;
}
async function unmountAll() {
  for (const dir of mounts.splice(0).reverse()) await sh(["umount", "-l", dir]);
}

// Mounting needs root (or CAP_SYS_ADMIN); without it these tests can't make a real full disk.
const probeDir = mkdtempSync(join(tmpdir(), "hub-mount-probe-"));
const cannotMount = await mountTmpfs(probeDir, "64k");
await unmountAll();
if (cannotMount) console.warn(`store-full tests skipped: cannot mount a tmpfs (${cannotMount}); run them as root`);

let sb: Sandbox;
useSandbox((s) => (sb = s));
afterEach(async () => {
  await sb.control.up();
  await unmountAll();
});

/** Writes zeros until the disk refuses: afterwards not one more byte fits. */
function fill(dir: string) {
  const fd = openSync(join(dir, "filler"), "w");
  const chunk = new Uint8Array(4096);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOSPC") throw e;
  } finally {
    closeSync(fd);
  }
  // tmpfs may still take a few bytes into a page already allocated; one more small file proves it is full.
  expect(() => writeSync(openSync(join(dir, "probe"), "w"), "x".repeat(4096))).toThrow();
}

interface Setup {
  dir: string;
  mnt: string;
  env: Record<string, string>;
}

/** A store on its own tmpfs with the server record and the ban list (Bob banned) cached by `run --once`. */
async function cachedStore(): Promise<Setup> {
  const dir = mkdtempSync(join(tmpdir(), "hub-store-full-"));
  const mnt = join(dir, "mnt");
  expect(await mountTmpfs(mnt, "1m")).toBeUndefined();
  const env = {
    HUB_API_URL: sb.url,
    HUB_API_KEY: sb.key,
    HUB_API_SERVER_ID: sb.serverId,
    HUB_GAME_BRIDGE: "sim",
    HUB_STORAGE_DIR: join(mnt, "store"),
  };
  sb.state.addBan({ user_id: BOB.user, serverbundle_id: sb.bundleId, reason: "cached ban" });
  const once = await hub(["run", "--once"], { env });
  expect(once.code).toBe(0);
  expect(existsSync(join(mnt, "store", "cache", "bans"))).toBe(true);
  return { dir, mnt, env };
}

interface LogLine {
  level: string;
  msg: string;
  [k: string]: unknown;
}

/** `run` with simulated players online; its JSON log goes to a file beside (not on) the store's disk. */
async function run(s: Setup, players: { id: string; name: string }[], name: string) {
  const log = join(s.dir, `${name}.log`);
  const actions = join(s.dir, `${name}.actions.jsonl`);
  const proc = spawn([await binary(), "run", "--log-format", "json"], {
    cwd: s.dir,
    env: {
      PATH: process.env.PATH ?? "",
      ...s.env,
      HUB_LOG_LEVEL: "debug",
      HUB_GAME_SIM_PLAYERS: players.map((p) => `${p.id}:${p.name}`).join(","),
      HUB_GAME_SIM_ACTIONS_LOG: actions,
      HUB_INTERVALS_BANS: "0.2",
      HUB_INTERVALS_QUEUES: "0.2",
      HUB_INTERVALS_STATUS: "0.5",
      HUB_INTERVALS_USER_RETRY: "0.5",
      HUB_API_TIMEOUT: "2",
    },
    stdin: "ignore",
    stdout: "ignore",
    stderr: Bun.file(log),
  });
  // Complete lines only: the process may be writing the last one as it is read.
  const lines = () => jsonLines(log) as unknown as LogLine[];
  const kicked = () =>
    (jsonLines(actions) as { type?: string; player?: string }[]).filter((a) => a.type === "kick").map((a) => a.player);
  const opts = {
    timeoutMs: 30_000,
    abort: () => (proc.exitCode !== null ? `run exited with ${proc.exitCode}` : undefined),
    diagnostics: () => (existsSync(log) ? readFileSync(log, "utf8") : "(no log)"),
  };
  const count = (re: RegExp) => lines().filter((l) => re.test(l.msg)).length;
  return {
    lines,
    kicked,
    count,
    /** Waits for `n` more log lines matching `re` than there are now: proof that that many rounds went by. */
    async rounds(re: RegExp, n: number) {
      const start = count(re);
      await until(() => count(re) >= start + n, `${n} more "${re.source}" lines`, opts);
    },
    until: (cond: () => boolean, what: string) => until(cond, what, opts),
    async stop() {
      proc.kill("SIGTERM");
      expect(await proc.exited).toBe(0);
    },
  };
}

test.skipIf(!!cannotMount)(
  "a full store: run enforces the cached bans with the service down, applies the live list it can't cache, and logs the failure once; ban exits 8",
  async () => {
    const s = await cachedStore();
    fill(s.mnt);

    // The service down: the cached server record and ban list are what run has.
    await sb.control.down();
    const offline = await run(s, [{ id: BOB.id, name: "Bob" }], "offline");
    await offline.until(() => offline.kicked().includes(BOB.id), "Bob kicked from the cached ban list");
    await offline.rounds(/^ban list not refreshed/, 5);
    // Debug lines may repeat it (the jobs it failed); what an operator sees at the default level is one line.
    const shown = (r: typeof offline) => r.lines().filter((l) => l.level !== "debug");
    const full = (r: typeof offline) => shown(r).filter((l) => /ENOSPC/.test(l.msg));
    // Two lines in all, however many rounds: run can't hold its instance lock, and the store's writes fail.
    expect(full(offline).map((l) => [l.level, l.tag, l.msg.slice(0, l.msg.indexOf("; "))])).toEqual([
      ["error", undefined, `the store ${join(s.mnt, "store")} is full (ENOSPC): free space on that disk`],
      ["error", "store", `the store ${join(s.mnt, "store")} is full (ENOSPC): free space on that disk`],
    ]);
    expect(full(offline)[0]?.msg).toContain("rewards and playtime stay off until hub-agent is restarted");
    expect(shown(offline).filter((l) => l.level === "error")).toHaveLength(2);
    await offline.stop();

    // The service up, with a ban the cache has never seen: the live list is enforced although it can't be cached.
    await sb.control.up();
    sb.state.addBan({ user_id: CAROL.user, serverbundle_id: sb.bundleId, reason: "live ban" });
    const online = await run(
      s,
      [
        { id: BOB.id, name: "Bob" },
        { id: CAROL.id, name: "Carol" },
      ],
      "online",
    );
    await online.until(() => online.kicked().includes(CAROL.id), "Carol kicked from the live ban list");
    expect(online.kicked()).toContain(BOB.id);
    await online.rounds(/^ban list refreshed/, 5);
    expect(full(online)).toHaveLength(2);
    expect(shown(online).filter((l) => l.level === "error")).toHaveLength(2);
    await online.stop();

    // A one-shot ban can't be written: one line with the path and the fix, exit 8, nothing sent.
    const posts = () => sb.control.requests({ method: "POST", path: "/ban/" }).length;
    const before = posts();
    const ban = await hubBinary(["ban", CAROL.id, "30m", "griefing"], { env: s.env }); // exit 8 as the shell sees it
    expect(ban.code).toBe(8);
    expect(ban.stderr).toBe(
      `error: the store ${join(s.mnt, "store")} is full (ENOSPC): free space on that disk; nothing was queued\n`,
    );
    expect(posts()).toBe(before);
  },
  120_000,
);

test.skipIf(!!cannotMount)(
  "a read-only store: run enforces the cached bans and logs EROFS once",
  async () => {
    const s = await cachedStore();
    expect((await sh(["mount", "-o", "remount,ro", s.mnt])).code).toBe(0);

    await sb.control.down();
    const r = await run(s, [{ id: BOB.id, name: "Bob" }], "readonly");
    await r.until(() => r.kicked().includes(BOB.id), "Bob kicked from the cached ban list");
    await r.rounds(/^ban list not refreshed/, 5);
    const erofs = r.lines().filter((l) => l.level !== "debug" && /EROFS/.test(l.msg));
    expect(erofs).toHaveLength(2); // the instance lock, the store's writes: once each
    for (const l of erofs)
      expect(l.msg).toStartWith(`the store ${join(s.mnt, "store")} is on a read-only filesystem (EROFS):`);
    expect(r.lines().filter((l) => l.level === "error")).toHaveLength(2);
    await r.stop();

    const ban = await hub(["ban", BOB.id, "30m", "griefing"], { env: s.env });
    expect(ban.code).toBe(8);
    expect(ban.stderr).toContain(
      "(EROFS): remount it read-write or set storage.dir to a writable directory; nothing was queued",
    );
  },
  120_000,
);

test.skipIf(!!cannotMount)(
  "a second run on a store whose disk filled up exits 7 and leaves the first run its kick line",
  async () => {
    const s = await cachedStore();
    const bin = await binary();
    const env = { PATH: process.env.PATH ?? "", ...s.env };
    const log = join(s.dir, "first.log");
    const first = spawn([bin, "run"], { cwd: s.dir, env, stdin: "ignore", stdout: "ignore", stderr: Bun.file(log) });
    // Its first round done and its delivery lock released (a page freed): the disk then stays full for the second.
    const settled = () =>
      existsSync(log) &&
      readFileSync(log, "utf8").includes("status sent") &&
      !existsSync(join(s.mnt, "store", "locks", "sanctions.lock"));
    await until(settled, "the first run's first round", {
      abort: () => (first.exitCode !== null ? `run exited with ${first.exitCode}` : undefined),
    });
    const sock = join(s.mnt, "store", "kick.sock");
    const ino = statSync(sock).ino;
    // Frozen while the disk is full: a round's failed write would remove its temporary file and free a page (CI saw
    // the probe write fit). A stopped process is still alive to the instance lock's check.
    first.kill("SIGSTOP");
    fill(s.mnt);
    const second = spawn([bin, "run"], {
      cwd: s.dir,
      env,
      stdin: "ignore",
      stdout: "ignore",
      stderr: "pipe",
      timeout: 15_000,
    });
    const [code, stderr] = await Promise.all([second.exited, new Response(second.stderr).text()]);
    first.kill("SIGCONT");
    expect({ code, line: stderr.split(" (")[0] }).toEqual({
      code: 7,
      line: expect.stringMatching(/^error: another hub-agent run holds this storage directory: pid \d+ on host/),
    });
    expect(first.exitCode).toBeNull();
    expect(statSync(sock).ino).toBe(ino);
    first.kill("SIGTERM");
    expect(await first.exited).toBe(0);
  },
  120_000,
);

test("a ban written to the queue whose delivery lock is blocked exits 6 with the reason, and is sent once later", async () => {
  const dir = mkdtempSync(join(tmpdir(), "hub-lock-dir-"));
  const env = sandboxEnv(sb, dir);
  const lock = join(dir, "locks", "sanctions.lock");
  mkdirSync(lock, { recursive: true }); // something made a directory where the lock file goes
  const posts = () =>
    sb.control
      .requests({ method: "POST", path: "/ban/" })
      .filter((r) => (r.body as { reason?: string })?.reason === "lock test");
  const ban = await hubBinary(["ban", CAROL.id, "30m", "lock", "test"], { env }); // exit 6 as the shell sees it
  expect(ban.code).toBe(6);
  expect(ban.stdout).toContain("is queued");
  expect(ban.stdout).toContain(`${lock} is a directory where hub-agent keeps a file (EISDIR): remove that directory`);
  expect(posts()).toHaveLength(0);

  rmSync(lock, { recursive: true });
  expect((await hub(["run", "--once"], { env })).code).toBe(0);
  expect(posts()).toHaveLength(1);
}, 60_000);
