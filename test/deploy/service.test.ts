/**
 * deploy/hub-agent.service, taken at its word: the compiled binary started as the unit starts it (its
 * Environment=, EnvironmentFile=, WorkingDirectory= and ExecStart=, the state and configuration directories under
 * a temporary root), wrapping a (fake) game server, stopped as KillMode=mixed stops it (SIGTERM to the main process
 * only); the exit codes the unit does not restart on are the ones hub-agent gives for those cases; and, where strace
 * and the OpenArena server are installed, every system call hub-agent and a wrapped real game server make is one
 * the unit's SystemCallFilter= allows. `systemd-analyze verify` of the unit runs in .ci/run (.ci/verify-unit). The
 * template deploy/hub-agent@.service has every setting of this unit but Description= and ExecStart= (template.test.ts).
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Sandbox } from "../../lib/sandbox/index.ts";
import { binary } from "../cli/binary.ts";
import { OPENARENA_SKIP_REASON, openarenaCommand, openarenaInstalled } from "../support/openarena.ts";
import { spawn } from "../support/procs.ts";
import { useSandbox } from "../support/sandbox.ts";
import { until } from "../support/until.ts";
import { environmentFile, readUnit, specifiers, unitEnvironment } from "./unit-file.ts";

const FAKE = join(import.meta.dir, "..", "fixtures", "fake-game-server.ts");
const unit = readUnit();
const service = (key: string) => unit.get("Service", key);
const noRestart = (service("RestartPreventExitStatus") ?? "").split(/\s+/).map(Number);

let sb: Sandbox;
useSandbox((s) => (sb = s));

/** Appends everything a stream says to a string, as it arrives. */
function collect(stream: ReadableStream<Uint8Array>): () => string {
  let text = "";
  const decoder = new TextDecoder();
  void (async () => {
    for await (const chunk of stream) text += decoder.decode(chunk, { stream: true });
  })();
  return () => text;
}

interface Machine {
  root: string;
  state: string;
  /** What the fake server printed (its --log copy) and the pid of each start (--starts). */
  console: () => string;
  serverPids: () => number[];
}

/** A machine root with the unit's directories, a configuration file and an environment file. */
function machine(toml: (m: Machine) => string, environment = ""): Machine {
  const root = mkdtempSync(join(tmpdir(), "hub-unit-"));
  const env = unitEnvironment(unit, root);
  // What systemd creates before the start: StateDirectory= (the user's, 0700) and ConfigurationDirectory=.
  const state = join(root, "var/lib", service("StateDirectory") as string);
  mkdirSync(state, { recursive: true, mode: Number.parseInt(service("StateDirectoryMode") ?? "0755", 8) });
  mkdirSync(join(root, "etc", service("ConfigurationDirectory") as string), { recursive: true });
  const m: Machine = {
    root,
    state,
    console: () => (existsSync(join(root, "console.log")) ? readFileSync(join(root, "console.log"), "utf8") : ""),
    serverPids: () =>
      existsSync(join(root, "starts")) ? readFileSync(join(root, "starts"), "utf8").trim().split("\n").map(Number) : [],
  };
  writeFileSync(env.HUB_CONFIG as string, toml(m), { mode: 0o640 });
  const envFile = specifiers((service("EnvironmentFile") as string).replace(/^-/, ""), root);
  if (environment) writeFileSync(envFile, environment);
  return m;
}

/** Starts `hub-agent run` as the unit does: its environment, working directory and arguments; stdin /dev/null. */
async function start(m: Machine) {
  const env = unitEnvironment(unit, m.root);
  const envFile = specifiers((service("EnvironmentFile") as string).replace(/^-/, ""), m.root);
  Object.assign(env, existsSync(envFile) ? environmentFile(readFileSync(envFile, "utf8")) : {});
  const [exe, ...args] = (service("ExecStart") as string).split(/\s+/);
  expect(exe).toBe("/usr/local/bin/hub-agent");
  const proc = spawn([await binary(), ...args], {
    cwd: specifiers(service("WorkingDirectory") as string, m.root),
    env: { PATH: process.env.PATH ?? "", ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  return { proc, stderr: collect(proc.stderr), stdout: collect(proc.stdout) };
}

/** The configuration's [api] table: the sandbox. */
const api = () => ["[api]", `url = "${sb.url}"`, `key = "${sb.key}"`, `server_id = "${sb.serverId}"`];

/** The sandbox's settings and a wrapped fake server that passes for OpenArena (its ready line and `quit`). */
const wrapping =
  (...serverFlags: string[]) =>
  (m: Machine) =>
    [
      ...api(),
      "[game]",
      'bridge = "wrapper"',
      "[game.wrapper]",
      `command = ${JSON.stringify([
        process.execPath,
        FAKE,
        "--ready-line=AAS initialized.",
        `--log=${join(m.root, "console.log")}`,
        `--starts=${join(m.root, "starts")}`,
        ...serverFlags,
      ])}`,
    ].join("\n");

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("hub-agent run as deploy/hub-agent.service starts it", () => {
  test("the store is the StateDirectory; a second run exits 7 (not restarted); KillMode=mixed's SIGTERM stops the wrapped server through its console, exit 0", async () => {
    // The preset comes from the EnvironmentFile: HUB_* overrides work there as in a shell.
    const m = machine(wrapping(), "# overrides\nHUB_GAME_PRESET=openarena\n");
    const run = await start(m);
    await until(() => /\bINFO +ready$/m.test(run.stderr()) && m.console().includes("AAS initialized."), "ready", {
      timeoutMs: 20_000,
      diagnostics: run.stderr,
    });
    expect(existsSync(join(m.state, "instance.lock"))).toBe(true);

    const second = await start(m);
    expect(await second.proc.exited).toBe(7);
    expect(second.stderr()).toContain("another hub-agent run holds this storage directory");
    expect(noRestart).toContain(7);

    expect(service("KillMode")).toBe("mixed");
    run.proc.kill("SIGTERM"); // the main process only, as KillMode=mixed does
    expect(await run.proc.exited).toBe(0);
    expect(m.console()).toContain("Shutting down"); // the server was told `quit`, not signalled by systemd
    expect(m.console()).not.toContain("got SIGTERM");
    const [pid] = m.serverPids();
    expect(pid === undefined ? true : alive(pid)).toBe(false); // nothing left for the final SIGKILL
  }, 60_000);

  test("a configuration error exits 3, which the unit does not restart; a wrapped server that dies exits 1, which it does", async () => {
    const bad = machine(() => "[api]\nurl = 5\n");
    const r = await start(bad);
    expect(await r.proc.exited).toBe(3);
    expect(r.stderr()).toContain(join(bad.root, "etc/hub-agent/hub-agent.toml"));
    expect(noRestart).toContain(3);

    const crashing = machine(wrapping("--crash-on-start=1"), "HUB_GAME_PRESET=openarena\n");
    const c = await start(crashing);
    expect(await c.proc.exited).toBe(1);
    expect(c.stderr()).toContain("the game server exited with code 3");
    expect(service("Restart")).toBe("on-failure");
    expect(noRestart).not.toContain(1);
    // A crash loop ends: systemd stops restarting after StartLimitBurst= starts in StartLimitIntervalSec=.
    expect(Number(unit.get("Unit", "StartLimitBurst"))).toBeGreaterThan(0);
  }, 60_000);
});

/** `systemd-analyze syscall-filter` expands a group (@system-service) into its calls, groups within included. */
async function expand(group: string, seen = new Set<string>()): Promise<Set<string>> {
  const p = spawn(["systemd-analyze", "syscall-filter", group], { stderr: "ignore" });
  const [text] = await Promise.all([new Response(p.stdout).text(), p.exited]);
  const lines = text.split("\n").slice(1);
  const out = new Set<string>();
  for (const line of lines.map((l) => l.trim()).filter((l) => l && !l.startsWith("#"))) {
    if (!line.startsWith("@")) out.add(line);
    else if (!seen.has(line)) for (const call of await expand(line, seen.add(line))) out.add(call);
  }
  return out;
}

/** The calls the unit's SystemCallFilter= lines allow: the allow lists, minus the ~ deny lists. */
async function allowedCalls(): Promise<Set<string>> {
  const allowed = new Set<string>();
  const denied = new Set<string>();
  for (const line of unit.all("Service", "SystemCallFilter")) {
    const deny = line.startsWith("~");
    for (const item of line.replace(/^~/, "").split(/\s+/)) {
      const calls = item.startsWith("@") ? await expand(item) : new Set([item]);
      for (const c of calls) (deny ? denied : allowed).add(c);
    }
  }
  return new Set([...allowed].filter((c) => !denied.has(c)));
}

const strace = Bun.which("strace");
const analyze = Bun.which("systemd-analyze");
/** strace needs ptrace, which some containers forbid. */
const canTrace =
  strace !== null && (await spawn(["strace", "-qq", "-o", "/dev/null", "true"], { stdout: "ignore" }).exited) === 0;
const missing = !strace
  ? "strace (apt-get install strace)"
  : !canTrace
    ? "ptrace, which this machine refuses (strace true failed)"
    : !analyze
      ? "systemd-analyze (apt-get install systemd)"
      : !openarenaInstalled
        ? `the OpenArena server: ${OPENARENA_SKIP_REASON}`
        : undefined;
if (missing) console.warn(`SKIPPED: the SystemCallFilter test needs ${missing}`);

describe.skipIf(missing !== undefined)("SystemCallFilter= against real processes", () => {
  test("every system call of hub-agent and a wrapped OpenArena server (start, players polled, stop) is allowed", async () => {
    const m = machine((m) =>
      [
        ...api(),
        "[game]",
        'bridge = "wrapper"',
        'preset = "openarena"',
        "[game.wrapper]",
        `command = ${JSON.stringify(openarenaCommand(20_000 + Math.floor(Math.random() * 30_000), m.root))}`,
        "[intervals]",
        "player_poll = 1",
      ].join("\n"),
    );
    const env = unitEnvironment(unit, m.root);
    const trace = join(m.root, "trace");
    const args = (service("ExecStart") as string).split(/\s+/).slice(1);
    const proc = spawn(["strace", "-f", "-qq", "-o", trace, await binary(), ...args], {
      cwd: specifiers(service("WorkingDirectory") as string, m.root),
      env: { PATH: process.env.PATH ?? "", ...env },
      stdin: "ignore",
      stdout: "ignore",
      stderr: "pipe",
    });
    const stderr = collect(proc.stderr);
    // The map loaded and its name read from the player list: the server's steady state, not only its start.
    await until(() => /status sent .*map=oa_dm1/.test(stderr()), "a status with the map", {
      timeoutMs: 60_000,
      diagnostics: stderr,
    });
    const lock = JSON.parse(readFileSync(join(m.state, "instance.lock"), "utf8")) as { pid: number };
    process.kill(lock.pid, "SIGTERM");
    expect(await proc.exited).toBe(0);
    const used = new Set(
      [...readFileSync(trace, "utf8").matchAll(/^\d+ +([a-z_0-9]+)\(/gm)].map((x) => x[1] as string),
    );
    const allowed = await allowedCalls();
    expect(used.size).toBeGreaterThan(30);
    expect([...used].filter((c) => !allowed.has(c)).sort()).toEqual([]);
  }, 120_000);
});
