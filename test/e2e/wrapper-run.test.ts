/**
 * `hub-agent run` with `game.bridge = "wrapper"`, as an operator starts it in a terminal: the agent runs the
 * (fake) dedicated server, the operator types into the agent's stdin, and Ctrl-C or SIGTERM stop both cleanly.
 * The fake server passes for OpenArena (its ready line), so the openarena preset's stop command and echo apply.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { type ChildProcess, spawn } from "node:child_process";
import { track } from "../support/procs.ts";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSandbox, type Sandbox } from "../../lib/sandbox/index.ts";
import { until } from "../agent/harness.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const FAKE = join(ROOT, "test/fixtures/fake-game-server.ts");

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function run(serverFlags: string[] = [], agentArgs: string[] = [], env: Record<string, string> = {}) {
  const sb: Sandbox = await startSandbox();
  cleanups.push(() => sb.stop());
  const dir = mkdtempSync(join(tmpdir(), "hub-run-wrapper-"));
  const consoleLog = join(dir, "console.log");
  const agent = spawn(process.execPath, [join(ROOT, "cli/main.ts"), "run", ...agentArgs], {
    cwd: dir,
    env: {
      ...process.env,
      HUB_API_URL: sb.url,
      HUB_API_KEY: sb.key,
      HUB_API_SERVER_ID: sb.serverId,
      HUB_STORAGE_DIR: join(dir, "data"),
      HUB_GAME_BRIDGE: "wrapper",
      HUB_GAME_PRESET: "openarena",
      HUB_GAME_WRAPPER_COMMAND: JSON.stringify([
        process.execPath,
        FAKE,
        "--ready-line=AAS initialized.",
        `--log=${consoleLog}`,
        ...serverFlags,
      ]),
      ...env,
    },
    stdio: ["pipe", "pipe", "pipe"],
    detached: true, // its own process group, like a foreground job in a terminal
  });
  track(agent);
  let stderr = "";
  let stdout = "";
  agent.stderr?.on("data", (d) => (stderr += String(d)));
  agent.stdout?.on("data", (d) => (stdout += String(d)));
  const exited = new Promise<number | null>((r) => agent.once("exit", (code) => r(code)));
  cleanups.push(() => {
    if (agent.exitCode === null && agent.signalCode === null) process.kill(-agent.pid!, "SIGKILL");
  });
  const console = () => (existsSync(consoleLog) ? readFileSync(consoleLog, "utf8") : "");
  await until(
    () => /\bready\b/.test(stderr) && console().includes("AAS initialized."),
    "the agent to be ready",
    15_000,
  );
  return { agent: agent as ChildProcess, exited, console, stderr: () => stderr, stdout: () => stdout };
}

describe("hub-agent run, wrapping the server", () => {
  test("typed lines reach the server; Ctrl-C stops the server with its stop command, then the agent exits 0", async () => {
    const r = await run();
    r.agent.stdin?.write("say hello from the operator\n");
    await until(() => r.console().includes("Server: hello from the operator"), "the typed line at the server");
    process.kill(-r.agent.pid!, "SIGINT"); // a terminal's Ctrl-C: the whole foreground process group
    expect(await r.exited).toBe(0);
    expect(r.console()).toContain("Shutting down");
    expect(r.console()).not.toContain("got SIGINT"); // the server has its own group: only the agent got it
    expect(r.stderr()).toContain('stopping the server with "quit"');
  }, 30_000);

  test("the operator sees the server's console on stdout, without the replies to the agent's own commands", async () => {
    const r = await run();
    // The agent lists the players at start (`status`, which the fake server doesn't know).
    await until(() => r.console().includes('Unknown command "status"'), "the agent's status command");
    r.agent.stdin?.write("say hello from the operator\n");
    await until(() => r.stdout().includes("Server: hello from the operator"), "the server's answer on stdout");
    expect(r.stdout()).toContain("AAS initialized.");
    expect(r.stdout()).not.toContain('Unknown command "status"');
    expect(r.stdout()).not.toContain("hubagent_end_"); // the reply markers
    expect(r.stdout()).not.toMatch(/\bINFO\b/); // the log stays on stderr
    expect(r.stderr()).not.toContain("hello from the operator");
    process.kill(r.agent.pid!, "SIGTERM");
    expect(await r.exited).toBe(0);
  }, 30_000);

  test("--json: stdout stays for machine output (the console is not copied there)", async () => {
    const r = await run([], ["--json"]);
    r.agent.stdin?.write("say hello from the operator\n");
    await until(() => r.console().includes("Server: hello from the operator"), "the typed line at the server");
    process.kill(r.agent.pid!, "SIGTERM");
    expect(await r.exited).toBe(0);
    expect(r.stdout()).toBe("");
  }, 30_000);

  test("SIGTERM to the agent (a process manager's stop): the same clean stop, exit 0", async () => {
    const r = await run();
    process.kill(r.agent.pid!, "SIGTERM");
    expect(await r.exited).toBe(0);
    expect(r.console()).toContain("Shutting down");
    expect(r.console()).not.toContain("got SIGTERM");
  }, 30_000);

  test("the server exits on its own (no restart configured): the agent stops and exits 1, naming why", async () => {
    const r = await run();
    r.agent.stdin?.write("crash 3\n");
    expect(await r.exited).toBe(1);
    expect(r.stderr()).toContain("the game server exited with code 3 (game.wrapper.restart is off)");
    expect(r.stderr()).toContain("stopping (the server exited with code 3)");
    expect(r.stderr()).toMatch(/\bstopped\b/); // the agent's own clean stop ran
  }, 30_000);

  test("with game.wrapper.restart a crash restarts the server and the agent stays", async () => {
    const r = await run([], [], { HUB_GAME_WRAPPER_RESTART: "true" });
    r.agent.stdin?.write("crash 3\n");
    await until(() => r.console().split("AAS initialized.").length === 3, "the restarted server to be ready", 15_000);
    expect(r.agent.exitCode).toBeNull();
    process.kill(r.agent.pid!, "SIGTERM");
    expect(await r.exited).toBe(0);
  }, 30_000);

  test("`quit` typed at the console stops the server (even with restarts on) and the agent exits 0", async () => {
    const r = await run([], [], { HUB_GAME_WRAPPER_RESTART: "true" });
    r.agent.stdin?.write("quit\n");
    expect(await r.exited).toBe(0);
    expect(r.console()).toContain("Shutting down");
    expect(r.console().split("AAS initialized.")).toHaveLength(2); // not restarted
    expect(r.stderr()).toContain("stopping (the server was stopped from its console)");
  }, 30_000);
});
