/**
 * The first hour of an operator, its mistakes (first-hour.test.ts has the rest), through the CLI (run in this process;
 * the compiled binary where a process of its own matters) against the in-memory service: configuration mistakes named with their fix (no silent simulated game, TOML errors with
 * line and column), a refused API key or an unknown server id (exit 3 from every command, nothing lost, `run`
 * enforcing from its cache meanwhile), storage errors (exit 8) and quarantined records counted.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Sandbox } from "../../lib/sandbox/index.ts";
import { actionsLog, jsonLines, logged, ready, startRun } from "../support/agent-run.ts";
import { useSandbox } from "../support/sandbox.ts";
import { until } from "../support/until.ts";
import { runToEnd } from "../support/procs.ts";
import { binary, hub, type Run } from "./binary.ts";
import { sandboxEnv } from "../support/sandbox-env.ts";

let sb: Sandbox;
useSandbox((s) => (sb = s));
afterEach(() => sb.control.reset());

const BOB = { id: "76561198087654322", user: "f82e6399-324e-49a6-a411-09f621b77325" };
const ALICE = "76561198012345671";
const UNKNOWN_SERVER = "00000000-0000-4000-8000-000000000000";

const tmp = (name: string) => mkdtempSync(join(tmpdir(), `hub-${name}-`));
const apiTable = () => ["[api]", `url = "${sb.url}"`, `key = "${sb.key}"`, `server_id = "${sb.serverId}"`];

describe("configuration", () => {
  test("a config file without game.bridge is refused, naming the key and every kind (no silent simulated game)", async () => {
    const cwd = tmp("nobridge");
    writeFileSync(join(cwd, "hub-agent.toml"), apiTable().join("\n") + "\n");
    for (const args of [["doctor"], ["run", "--once"]]) {
      const r = await hub(args, { cwd });
      expect(r.code).toBe(3);
      const out = r.stdout + r.stderr;
      expect(out).toContain(
        `game.bridge is missing: set bridge under [game] in ${join(cwd, "hub-agent.toml")}, or export HUB_GAME_BRIDGE (how hub-agent talks to the game: sim (simulated), rcon (`,
      );
      for (const kind of ["q3rcon", "dprcon", "webrcon", "econ", "wrapper"]) expect(out).toContain(kind);
      expect(sb.control.requests({ method: "PATCH" })).toEqual([]); // no sim_island reported
    }
    // The environment alone is held to the same rule; saying sim is enough.
    const env = { HUB_API_URL: sb.url, HUB_API_KEY: sb.key, HUB_API_SERVER_ID: sb.serverId };
    const envOnly = await hub(["run", "--once"], { env: { ...env, HUB_STORAGE_DIR: tmp("store") } });
    expect(envOnly.code).toBe(3);
    expect(envOnly.stderr).toContain("game.bridge is missing");
    const sim = await hub(["queue", "status"], {
      env: { ...env, HUB_STORAGE_DIR: tmp("store"), HUB_GAME_BRIDGE: "sim" },
    });
    expect([sim.code, sim.stderr]).toEqual([0, ""]);
    // `queue status` reads only the store: without game.bridge it says so in one line and lists the queues (issue 21;
    // it exited 3 before).
    const read = await hub(["queue", "status"], { env: { ...env, HUB_STORAGE_DIR: tmp("store") } });
    expect(read.code).toBe(0);
    expect(read.stderr).toContain(
      "the configuration is incomplete (no config file; environment only): game.bridge is missing",
    );
    expect(read.stdout).toContain("ban");
  });

  test("a TOML syntax error in a long file names the file, line and column, and shows the line", async () => {
    const cwd = tmp("toml");
    const file = join(cwd, "hub-agent.toml");
    const filler = Array.from({ length: 120 }, (_, i) => `# comment line ${i + 1}`);
    const lines = [...apiTable(), "[game]", 'bridge = "sim"', ...filler, "[intervals]", "status = 60 bans = 60"];
    writeFileSync(file, lines.join("\n") + "\n");
    const r = await hub(["doctor"], { cwd });
    expect(r.code).toBe(3);
    expect(r.stdout).toContain(
      `${file}:${lines.length}:13: not valid TOML: Expected a newline or end of file after a key/value pair`,
    );
    const json = await hub(["dashboard", "--json"], { cwd });
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stdout).error.details).toEqual([
      `${file}:${lines.length}:13: not valid TOML: Expected a newline or end of file after a key/value pair`,
      "| status = 60 bans = 60",
      "|             ^",
    ]);
  });
  test("doctor fails the config check on a language run can't load (a name it lacks, a broken file): exit 3", async () => {
    const cwd = tmp("lang");
    writeFileSync(join(cwd, "fr.json"), '{"ban": {');
    const told = { fr: 'lang: unknown language "fr": the built-in ones are en, de', "./fr.json": "is not valid JSON" };
    for (const [lang, line] of Object.entries(told)) {
      const r = await hub(["doctor"], { cwd, env: { ...sandboxEnv(sb, tmp("store")), HUB_LANG: lang } });
      expect([lang, r.code]).toEqual([lang, 3]);
      expect(r.stdout).toContain(`✘ config   lang: `);
      expect(r.stdout).toContain(line);
      expect(r.stdout).not.toContain("✔ config");
    }
  });
});

describe("a refused API key or an unknown server id", () => {
  const env = (dir: string, over: Record<string, string> = {}) => ({
    HUB_API_URL: sb.url,
    HUB_API_KEY: sb.key,
    HUB_API_SERVER_ID: sb.serverId,
    HUB_GAME_BRIDGE: "sim",
    HUB_STORAGE_DIR: join(dir, "store"),
    ...over,
  });
  const KEY_LINE =
    /^error: API key refused by the service \((GET|POST) \S+: 401 .*\): put the server's current API key \(the service's server settings\) in api\.key \/ HUB_API_KEY/;
  const oneLine = (r: Run) => {
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    return r.stderr.trim();
  };

  test("every command exits 3 with one line and the fix, with no cache and with one; a ban stays queued", async () => {
    const fresh = tmp("key");
    const wrong = env(fresh, { HUB_API_KEY: "not-the-key-0000" });
    for (const args of [
      ["ban", ALICE, "30m", "griefing"],
      ["unban", ALICE],
      ["warn", ALICE, "spam"],
      ["warns", ALICE],
      ["dashboard"],
      ["run", "--once"],
    ]) {
      const r = await hub([...args, "--log-format", "json"], { env: wrong });
      expect([args.join(" "), r.code]).toEqual([args.join(" "), 3]);
      const last = r.stderr.trim().split("\n").at(-1) as string;
      expect(last).toMatch(KEY_LINE);
      if (args[0] !== "run") expect(oneLine(r)).toBe(last);
      if (["ban", "unban", "warn"].includes(args[0] as string)) expect(last).toEndWith("; nothing was queued");
    }
    const once = await hub(["run", "--once", "--json"], { env: wrong });
    expect(once.code).toBe(3);
    expect(JSON.parse(once.stdout)).toMatchObject({
      exit_code: 3,
      result: "refused",
      error: expect.stringMatching(/^API key refused by the service/),
    });
    const json = await hub(["warns", ALICE, "--json"], { env: wrong });
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stdout).error).toMatchObject({
      code: 3,
      message: expect.stringMatching(/^API key refused/),
    });

    // With the server record cached (a run with the right key), the ban is queued first: nothing is lost.
    const cached = tmp("key-cached");
    expect((await hub(["run", "--once"], { env: env(cached) })).code).toBe(0);
    const wrongCached = env(cached, { HUB_API_KEY: "not-the-key-0000" });
    const ban = await hub(["ban", ALICE, "30m", "griefing"], { env: wrongCached });
    expect(ban.code).toBe(3);
    const line = oneLine(ban);
    expect(line).toMatch(
      /^error: API key refused by the service \((GET|POST) \S+: 401 .*\): put the server's current API key/,
    );
    const id = /queue retry (\S+)`$/.exec(line)?.[1] as string;
    expect(line).toContain(
      "; the ban stays queued (nothing is lost): `hub-agent run` sends it once the service accepts",
    );
    const status = JSON.parse((await hub(["queue", "status", "--json"], { env: wrongCached })).stdout);
    expect(JSON.stringify(status)).toContain(id);
    const retry = await hub(["queue", "retry", id], { env: wrongCached });
    expect(retry.code).toBe(3);
    expect(oneLine(retry)).toContain("the ban stays queued");
    for (const args of [["warns", ALICE], ["dashboard"], ["run", "--once"], ["run", "--once", "--json"]]) {
      const r = await hub(args, { env: wrongCached });
      expect([args.join(" "), r.code]).toEqual([args.join(" "), 3]);
      const said = args.includes("--json")
        ? `error: ${JSON.parse(r.stdout).error}`
        : r.stderr.trim().split("\n").at(-1);
      expect(said).toMatch(/^error: API key refused by the service/);
    }
    // The right key again: the queued ban is delivered.
    const delivered = await hub(["queue", "retry", id], { env: env(cached) });
    expect(delivered.code).toBe(0);
    expect([...sb.state.bans.values()].some((b) => b.reason === "griefing")).toBe(true);
  }, 60_000);

  // (`dashboard` never asks for the server record: it prints the link it was asked for.)
  test("an unknown server id: exit 3 naming the id and the fix", async () => {
    const wrong = env(tmp("server"), { HUB_API_SERVER_ID: UNKNOWN_SERVER });
    for (const args of [["ban", ALICE, "30m", "griefing"], ["warns", ALICE], ["run", "--once"], ["doctor"]]) {
      const r = await hub(args, { env: wrong });
      expect([args.join(" "), r.code]).toEqual([args.join(" "), 3]);
      expect(r.stdout + r.stderr).toContain(`the service knows no server ${UNKNOWN_SERVER}`);
      expect(r.stdout + r.stderr).toContain("api.server_id / HUB_API_SERVER_ID");
    }
  }, 60_000);

  test("a wrong instance path in api.url: exit 3 naming the path, not the server id", async () => {
    const wrong = env(tmp("path"), { HUB_API_URL: sb.url.replace(/\/sandbox\/v1$/, "/wrong/v1") });
    for (const args of [["ban", ALICE, "30m", "griefing"], ["warns", ALICE], ["run", "--once"], ["doctor"]]) {
      const r = await hub(args, { env: wrong });
      expect([args.join(" "), r.code]).toEqual([args.join(" "), 3]);
      const out = r.stdout + r.stderr;
      expect([args.join(" "), out]).toEqual([args.join(" "), expect.stringContaining("the service has no such path")]);
      expect(out).toContain("check the path of api.url / HUB_API_URL");
      expect(out).not.toContain("knows no server");
      expect(out).not.toContain("api.server_id");
    }
  }, 60_000);

  test("a wrong instance path with the server record cached: no entry dropped, no player without warnings", async () => {
    // After a first run the server record is cached, so a one-shot command goes straight to the user lookup: the
    // routing's 404 there ({"detail": "Not Found"}, no error code) says nothing of the player.
    const dir = tmp("path-cached");
    expect((await hub(["run", "--once"], { env: env(dir) })).code).toBe(0);
    const down = await hub(["warn", ALICE, "queued-while-down"], {
      env: env(dir, { HUB_API_URL: "http://127.0.0.1:1/sandbox/v1" }),
    });
    expect(down.code).toBe(6);
    const wrong = env(dir, { HUB_API_URL: sb.url.replace(/\/sandbox\/v1$/, "/wrong/v1") });
    const ban = await hub(["ban", ALICE, "30m", "path-typo"], { env: wrong });
    expect(ban.stderr).not.toContain("not known to VyHub");
    expect(ban.code).toBe(6);
    const warns = await hub(["warns", ALICE], { env: wrong });
    expect(warns.stdout).not.toContain("has no warnings");
    expect(warns.code).not.toBe(0);
    const byUser = await hub(["warns", "user:6d608cd3-155d-4344-b9e8-7c0280165d73"], { env: wrong }); // Alice
    expect(byUser.stderr).not.toContain("knows no user");
    expect(byUser.code).not.toBe(5);
    const status = (await hub(["queue", "status"], { env: wrong })).stdout;
    expect(status).toContain('"path-typo"');
    expect(status).toContain('"queued-while-down"');
    // The right path again: each delivered, once.
    expect((await hub(["run", "--once"], { env: env(dir) })).code).toBe(0);
    expect([...sb.state.bans.values()].filter((b) => b.reason === "path-typo")).toHaveLength(1);
    expect([...sb.state.warnings.values()].filter((w) => w.reason === "queued-while-down")).toHaveLength(1);
  }, 60_000);

  test("run: says so once, keeps kicking from the cached ban list, backs off, and says when the key is accepted again", async () => {
    const dir = tmp("run-key");
    sb.state.addBan({ user_id: BOB.user, serverbundle_id: sb.bundleId, reason: "cached ban" });
    expect((await hub(["run", "--once"], { env: env(dir) })).code).toBe(0);
    sb.control.failNext({}, 100_000, 401, { detail: "Invalid token" });
    sb.control.clearRequests();
    const intervals = {
      HUB_INTERVALS_STATUS: "0.3",
      HUB_INTERVALS_BANS: "0.3",
      HUB_INTERVALS_QUEUES: "0.3",
      HUB_INTERVALS_USER_RETRY: "1",
    };
    const run = await startRun({ sb, dir, name: "run", players: [{ id: BOB.id, name: "Bob" }], env: intervals });
    try {
      await ready(run);
      const kicked = () =>
        jsonLines(actionsLog(dir))
          .filter((a) => a.type === "kick")
          .map((a) => a.player);
      await until(() => kicked().includes(BOB.id), "Bob kicked from the cached ban list", { timeoutMs: 15_000 });
      const refused = (l: Record<string, unknown>) => String(l.msg).startsWith("API key refused by the service");
      await logged(run, refused, "the refused key named");
      // Jobs every 0.3 s for 4 s would be dozens of requests; with the pauses doubling from 1 s, a handful.
      const started = performance.now();
      await until(() => performance.now() - started > 4_000, "4 s of refusals", { timeoutMs: 10_000 });
      expect(sb.control.requests().length).toBeLessThanOrEqual(6);
      expect(run.lines().filter(refused)).toHaveLength(1);
      expect(String(run.lines().find(refused)?.msg)).toContain("bans are enforced from the cached ban list");

      sb.control.reset();
      const again = (l: Record<string, unknown>) => l.msg === "the service accepts the API key again";
      await logged(run, again, "the key accepted again", 20_000);
      await until(
        () => sb.control.requests({ method: "PATCH" }).some((r) => r.status === 200),
        "a status round accepted",
        { timeoutMs: 10_000 },
      );
      run.proc.kill("SIGTERM");
      expect(await run.proc.exited).toBe(0);
      expect(run.lines().filter(refused)).toHaveLength(1);
    } finally {
      run.proc.kill("SIGKILL");
    }
  }, 60_000);
});

describe("the storage directory", () => {
  const env = (storage: string) => ({
    ...sandboxEnv(sb, storage),
  });
  const COMMANDS = [
    ["run"],
    ["run", "--once"],
    ["ban", ALICE, "30m", "griefing"],
    ["warns", ALICE],
    ["dashboard"],
    ["queue", "status"],
    ["status"],
  ];

  /** Every command, doctor too, on `storage`: exit 8 and one line (doctor: its report) naming it with `fix`. */
  async function refusedEverywhere(storage: string, fix: RegExp): Promise<string[]> {
    const outs: string[] = [];
    for (const args of [...COMMANDS, ["doctor"]]) {
      const r = await hub(args, { env: env(storage) });
      expect([args.join(" "), r.code]).toEqual([args.join(" "), 8]);
      const out = args[0] === "doctor" ? r.stdout : r.stderr;
      expect(out).toContain(storage);
      expect(out).toMatch(fix);
      if (args[0] !== "doctor") expect(r.stderr.trim().split("\n")).toHaveLength(1);
      outs.push(out);
    }
    return outs;
  }
  /** What `run`'s instance lock says when a part of the storage path is a file. */
  const LOCK_ON_A_FILE = "a part of the path is a file, not a directory; make .* a directory this user can write";

  test("a file in the way: every command exits 8 with one line naming the path and the fix", async () => {
    const dir = tmp("enotdir");
    writeFileSync(join(dir, "afile"), "x");
    const storage = join(dir, "afile", "store");
    const fix = `a file is where a directory belongs on its path \\(ENOTDIR\\): move that file away|${LOCK_ON_A_FILE}`;
    await refusedEverywhere(storage, new RegExp(fix));
  }, 60_000);

  test("storage.dir names a file: every command exits 8, says to move it or set storage.dir, and leaves it as it was", async () => {
    const dir = tmp("eexist");
    const storage = join(dir, "notes.txt");
    writeFileSync(storage, "the operator's own file");
    const fix = `is a file \\(or a link to nowhere\\) where hub-agent needs a directory \\(EEXIST\\): move it away|${LOCK_ON_A_FILE}`;
    for (const out of await refusedEverywhere(storage, new RegExp(fix))) expect(out).not.toContain("remove");
    expect(readFileSync(storage, "utf8")).toBe("the operator's own file");
  }, 60_000);

  test("storage.dir is itself a link to nowhere (a disk not mounted): every command exits 8 and says to mount it", async () => {
    const dir = tmp("dangling");
    const storage = join(dir, "store");
    symlinkSync(join(dir, "mnt", "store"), storage);
    const fix =
      /or a link to nowhere\) where hub-agent needs a directory \(EEXIST\): move it away, mount what it links to|storage\.dir is a file, or a link to nowhere \(a disk not mounted\?\)/;
    for (const out of await refusedEverywhere(storage, fix)) expect(out).not.toContain("unexpected");
  }, 60_000);

  test("a link to nowhere on the path (a disk not mounted): every command exits 8, naming the path and the fix", async () => {
    const dir = tmp("enoent");
    symlinkSync(join(dir, "mnt", "games"), join(dir, "games"));
    const storage = join(dir, "games", "hub-agent");
    const fix =
      /a part of its path leads nowhere \(ENOENT: a link to a missing directory, a disk not mounted\): mount it or fix the link|a part of the path leads nowhere .*; make .* a directory this user can write/;
    for (const out of await refusedEverywhere(storage, fix)) expect(out).not.toContain("unexpected");
  }, 60_000);

  // As root, permissions are not checked: the commands run as nobody (setpriv), the store belonging to root.
  const asNobody = process.getuid?.() === 0 && Bun.which("setpriv") !== null;
  test.skipIf(!asNobody)(
    "no permission (EACCES): every command exits 8 with one line naming the path and the fix",
    async () => {
      const dir = tmp("eacces");
      chmodSync(dir, 0o755);
      const bin = join(dir, "hub-agent");
      copyFileSync(await binary(), bin);
      chmodSync(bin, 0o755);
      const storage = join(dir, "store");
      mkdirSync(storage, { mode: 0o700 });
      for (const args of [...COMMANDS, ["doctor"]]) {
        const { stdout, stderr, code } = await runToEnd(
          ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", bin, ...args],
          { cwd: dir, env: { PATH: process.env.PATH ?? "", ...env(storage) } },
        );
        expect([args.join(" "), code]).toEqual([args.join(" "), 8]);
        const out = args[0] === "doctor" ? stdout : stderr;
        expect(out).toContain(storage);
        expect(out).toMatch(
          /can't be written by this user \(EACCES\): give the user running hub-agent write access|permission denied; make .* a directory this user can write/,
        );
        if (args[0] !== "doctor") expect(stderr.trim().split("\n")).toHaveLength(1);
      }
    },
    60_000,
  );

  test("quarantined records are counted in queue status (human and --json) and doctor warns with the fix", async () => {
    const storage = join(tmp("corrupt"), "store");
    const e = env(storage);
    expect((await hub(["queue", "status"], { env: e })).stdout).toContain(
      `quarantine       none (${join(storage, "corrupt")})`,
    );
    mkdirSync(join(storage, "queue", "ban"), { recursive: true });
    writeFileSync(join(storage, "queue", "ban", "001795635553378-d7230e7a-72aa-4641-8fdf-c81765751dec"), "{not json");
    const first = await hub(["queue", "status"], { env: e }); // reads it: moved aside, reported once in the log
    expect(first.code).toBe(0);
    for (let i = 0; i < 2; i++) {
      const human = await hub(["queue", "status"], { env: e });
      expect(human.stdout).toContain(
        `quarantine       1 unreadable record(s) in ${join(storage, "corrupt")}: each file is named after the record it was`,
      );
      expect(human.stdout).toContain("  queue:ban:001795635553378-d7230e7a-72aa-4641-8fdf-c81765751dec  moved ");
      const json = JSON.parse((await hub(["queue", "status", "--json"], { env: e })).stdout);
      expect(json.quarantine).toMatchObject({
        dir: join(storage, "corrupt"),
        count: 1,
        files: [{ key: "queue:ban:001795635553378-d7230e7a-72aa-4641-8fdf-c81765751dec" }],
      });
    }
    const doctor = await hub(["doctor"], { env: e });
    expect(doctor.code).toBe(0); // a warning
    expect(doctor.stdout).toContain(
      `! storage  1 unreadable record(s) quarantined in ${join(storage, "corrupt")}: queue:ban:001795635553378`,
    );
    expect(doctor.stdout).toContain("  fix: each file is named after the record it was");
    const checks = JSON.parse((await hub(["doctor", "--json"], { env: e })).stdout) as {
      name: string;
      status: string;
    }[];
    expect(checks.filter((c) => c.name === "storage").map((c) => c.status)).toEqual(["ok", "warn"]);
  }, 60_000);
});
