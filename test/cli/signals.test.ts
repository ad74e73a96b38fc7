/**
 * `run` as a service manager drives it: SIGINT/SIGTERM end it within 2 s with exit 0 whatever the game's console
 * does (nothing listening, a peer that takes the connection and never answers), with no error logged after
 * "stopping"; SIGHUP re-reads the configuration and says what a restart would change, without stopping. Real
 * processes of the compiled binary against the in-memory service.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { createServer, type Server, type Socket } from "node:net";
import { existsSync, linkSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Sandbox } from "../../lib/sandbox/index.ts";
import { binary } from "./binary.ts";
import { spawn } from "../support/procs.ts";
import { until } from "../support/until.ts";
import { useSandbox } from "../support/sandbox.ts";

let sb: Sandbox;
useSandbox((s) => (sb = s));

interface Agent {
  proc: ReturnType<typeof spawn>;
  log: () => string;
}

async function startRun(env: Record<string, string>, args: string[] = [], prefix: string[] = []): Promise<Agent> {
  const dir = mkdtempSync(join(tmpdir(), "hub-signals-"));
  const file = join(dir, "run.log");
  const proc = spawn([...prefix, await binary(), "run", ...args], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "", HUB_STORAGE_DIR: join(dir, "store"), ...env },
    stdin: "ignore",
    stdout: "ignore",
    stderr: Bun.file(file),
  });
  return { proc, log: () => (existsSync(file) ? readFileSync(file, "utf8") : "") };
}

const waitFor = (agent: Agent, what: string, cond: (log: string) => boolean) =>
  until(() => cond(agent.log()), what, {
    timeoutMs: 20_000,
    abort: () => (agent.proc.exitCode !== null ? `run exited with ${agent.proc.exitCode}` : undefined),
    diagnostics: () => `run's log:\n${agent.log()}`,
  });

/**
 * Sends the signal (to `pid`, the process's own by default) and measures until the process has exited, on the
 * monotonic clock.
 */
async function stopTimed(agent: Agent, signal: NodeJS.Signals, pid?: number): Promise<{ code: number; ms: number }> {
  const started = performance.now();
  if (pid === undefined) agent.proc.kill(signal);
  else process.kill(pid, signal);
  const code = await agent.proc.exited;
  return { code, ms: performance.now() - started };
}

const afterStopping = (log: string) => log.slice(log.indexOf("stopping ("));

const servers: Server[] = [];
const sockets: Socket[] = [];
afterEach(() => {
  for (const s of sockets.splice(0)) s.destroy();
  for (const s of servers.splice(0)) s.close();
});

/** A TCP peer that accepts every connection and never says a word. */
async function silentPeer(): Promise<{ port: number; connections: () => number }> {
  let count = 0;
  const server = createServer((socket) => {
    count++;
    sockets.push(socket);
    socket.on("error", () => {});
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { port: (server.address() as { port: number }).port, connections: () => count };
}

/** A loopback port nothing listens on (taken and released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const service = () => ({
  HUB_API_URL: sb.url,
  HUB_API_KEY: sb.key,
  HUB_API_SERVER_ID: sb.serverId,
  HUB_GAME_BRIDGE: "sim",
});
const rcon = (port: number) => ({
  ...service(),
  HUB_GAME_BRIDGE: "rcon",
  HUB_GAME_PRESET: "minecraft",
  HUB_GAME_RCON_HOST: "127.0.0.1",
  HUB_GAME_RCON_PORT: String(port),
  HUB_GAME_RCON_PASSWORD: "signals-test-pw",
});

describe("prompt shutdown", () => {
  test("SIGINT while the game's console refuses connections: exit 0 within 2 s, no error after stopping", async () => {
    const agent = await startRun(rcon(await closedPort()));
    await waitFor(agent, "ready and the console failing", (l) => l.includes("INFO  ready") && l.includes("retrying"));
    const { code, ms } = await stopTimed(agent, "SIGINT");
    expect(code).toBe(0);
    expect(ms).toBeLessThan(2_000);
    const tail = afterStopping(agent.log());
    expect(tail).toContain("stopped");
    expect(tail).not.toContain("ERROR");
  }, 60_000);

  test("SIGTERM while a command waits on a console that never answers: exit 0 within 2 s, no error after stopping", async () => {
    const peer = await silentPeer();
    const agent = await startRun(rcon(peer.port));
    // The connection is taken and the authentication (then the player list) waits for a reply that never comes.
    await waitFor(agent, "ready", (l) => l.includes("INFO  ready"));
    await until(() => peer.connections() > 0, "the console connection");
    const { code, ms } = await stopTimed(agent, "SIGTERM");
    expect(code).toBe(0);
    expect(ms).toBeLessThan(2_000);
    const tail = afterStopping(agent.log());
    expect(tail).toContain("stopped");
    expect(tail).not.toContain("ERROR");
    expect(tail).not.toContain("is not reachable");
  }, 60_000);

  test("SIGINT while the service does not answer yet: exit 0 within 2 s", async () => {
    const peer = await silentPeer(); // an "API" that takes the request and never answers
    const agent = await startRun({
      ...service(),
      HUB_API_URL: `http://127.0.0.1:${peer.port}/v1`,
      HUB_API_TIMEOUT: "30",
    });
    await until(() => peer.connections() > 0, "the request to the service");
    const { code, ms } = await stopTimed(agent, "SIGINT");
    expect(code).toBe(0);
    expect(ms).toBeLessThan(2_000);
    expect(afterStopping(agent.log())).not.toContain("ERROR");
  }, 60_000);
});

const canTrace = (await spawn(["strace", "-qq", "-o", "/dev/null", "true"], { stdout: "ignore" }).exited) === 0;
if (!canTrace) console.warn("SKIPPED: the stalled-disk stop needs strace and ptrace (apt-get install strace)");

test.skipIf(!canTrace)(
  "SIGINT on a stalled disk (every rename and unlink held 1 s): exit 0, waiting for no held call but one in flight",
  async () => {
    // strace holds each such call of `run` for 1 s, as a stalled file-system journal does: the final status snapshot
    // and the instance lock's removal must not hold the exit (lib/shutdown.ts FINAL_STEP_MS), nor a blocking call the
    // event loop. A process cannot end while one of its threads is inside a held call, so the bound is the 1.5 s
    // budget, the two final steps' 100 ms each, and what is left of one held call: under 3 s (5 s when the final
    // steps waited for their writes).
    const calls = "rename,renameat,renameat2,unlink,unlinkat";
    const strace = ["strace", "-f", "-qq", "-o", "/dev/null", "-e", `trace=${calls}`, "-e"];
    const agent = await startRun(rcon(await closedPort()), [], [...strace, `inject=${calls}:delay_enter=1000000`]);
    await waitFor(agent, "ready and the console failing", (l) => l.includes("INFO  ready") && l.includes("retrying"));
    const pid = agent.proc.pid;
    const run = Number(readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(" ")[0]);
    const { code, ms } = await stopTimed(agent, "SIGINT", run);
    expect(code).toBe(0);
    expect(ms).toBeLessThan(3_000);
    expect(afterStopping(agent.log())).toContain("stopped");
  },
  60_000,
);

test.skipIf(!canTrace)(
  "SIGINT: the kick line's socket is removed on the thread pool, never by a blocking unlink on the event loop",
  async () => {
    // The runtime's server.close() unlinks a Unix socket's path itself, on the main thread: a stalled disk would hold
    // the event loop there. strace records who removes the path; the main thread's tid is the process's pid.
    const dir = mkdtempSync(join(tmpdir(), "hub-kick-sock-"));
    const sock = join(dir, "store", "kick.sock");
    const trace = join(dir, "strace.log");
    const strace = ["strace", "-f", "-qq", "-o", trace, "-P", sock, "-e", "trace=unlink,unlinkat"];
    const agent = await startRun({ ...rcon(await closedPort()), HUB_STORAGE_DIR: join(dir, "store") }, [], strace);
    await waitFor(agent, "ready", (l) => l.includes("INFO  ready"));
    await until(() => existsSync(sock), "the kick line");
    const pid = agent.proc.pid;
    const run = Number(readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(" ")[0]);
    expect((await stopTimed(agent, "SIGINT", run)).code).toBe(0);
    const removedBy = readFileSync(trace, "utf8")
      .split("\n")
      .filter((l) => l.includes("unlink") && l.endsWith("= 0")) // or "<... unlink resumed>", another thread between
      .map((l) => Number(l.split(/\s/)[0]));
    expect(removedBy).toHaveLength(1);
    expect(removedBy[0]).not.toBe(run);
    expect(existsSync(sock)).toBe(false);
  },
  60_000,
);

describe("SIGHUP", () => {
  test("reloads the configuration: unchanged, applied live (a status page appears), restart-only keys named, broken (the running one stays)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hub-hup-"));
    const file = join(dir, "hub-agent.toml");
    const base = `[api]\nurl = "${sb.url}"\nkey = "${sb.key}"\nserver_id = "${sb.serverId}"\n\n[game]\nbridge = "sim"\n`;
    writeFileSync(file, base);
    const agent = await startRun({}, ["--config", file]);
    const readies = () =>
      agent
        .log()
        .split("\n")
        .filter((l) => l.includes("INFO  ready")).length;
    await waitFor(agent, "ready", () => readies() === 1);

    agent.proc.kill("SIGHUP");
    await waitFor(agent, "the unchanged line", (l) => l.includes(`SIGHUP: ${file} is valid and unchanged`));

    // [http] listen is applied live: the agent starts again with its status page; game.map only at a restart.
    const port = await closedPort();
    writeFileSync(file, `${base}map = "elsewhere"\n\n[http]\nlisten = "127.0.0.1:${port}"\n`);
    agent.proc.kill("SIGHUP");
    await waitFor(agent, "the applied line", (l) =>
      l.includes(
        `SIGHUP: ${file} is valid; applying http.listen (the agent starts again, the game bridge keeps running); game.map apply only at a restart (systemctl restart hub-agent)`,
      ),
    );
    await waitFor(agent, "ready again", () => readies() === 2);
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(health.status).toBe(200);

    // Only a restart-only key changed: nothing to apply.
    writeFileSync(file, `${base}map = "again"\n\n[http]\nlisten = "127.0.0.1:${port}"\n`);
    agent.proc.kill("SIGHUP");
    await waitFor(agent, "the restart-only line", (l) =>
      l.includes(`SIGHUP: ${file} is valid; the running configuration stays: game.map apply only at a restart`),
    );

    writeFileSync(file, `${base}\n[intervals\n`);
    agent.proc.kill("SIGHUP");
    await waitFor(agent, "the invalid line", (l) =>
      l.includes(`SIGHUP: ${file} is not valid, the running configuration stays:`),
    );
    // One problem (a TOML error, with its line and caret below it in doctor): no "and 2 more".
    const invalid = agent
      .log()
      .split("\n")
      .find((l) => l.includes("is not valid, the running configuration stays"));
    expect(invalid).toMatch(/not valid TOML: Expected '\]' to close a table header but found \S+$/);
    expect(
      agent
        .log()
        .split("\n")
        .filter((l) => l.includes("SIGHUP")),
    ).toHaveLength(4); // one line each
    expect(agent.log()).not.toContain(sb.key);
    expect(readies()).toBe(2);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200); // still serving

    const { code, ms } = await stopTimed(agent, "SIGTERM");
    expect(code).toBe(0);
    expect(ms).toBeLessThan(2_000);
  }, 60_000);
});

describe("the runtime setting of a serving run (lib/app/runtime.ts)", () => {
  const environ = (pid: number) =>
    Object.fromEntries(
      readFileSync(`/proc/${pid}/environ`, "utf8")
        .split("\0")
        .filter(Boolean)
        .map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]),
    );
  /** Memory both writable and executable: where a JIT puts the code it compiles. */
  const jitMemory = (pid: number) =>
    readFileSync(`/proc/${pid}/maps`, "utf8")
      .split("\n")
      .some((l) => / rwxp /.test(l));

  test("run executes itself again with the JIT off: the same pid, no JIT memory, still stopped by its signal", async () => {
    const agent = await startRun(service());
    await waitFor(agent, "ready", (l) => l.includes("INFO  ready"));
    expect(environ(agent.proc.pid)).toMatchObject({ BUN_JSC_useJIT: "false" });
    expect(jitMemory(agent.proc.pid)).toBe(false);
    expect(readFileSync(`/proc/${agent.proc.pid}/cmdline`, "utf8").split("\0").slice(1, 2)).toEqual(["run"]);
    const { code, ms } = await stopTimed(agent, "SIGTERM");
    expect(code).toBe(0);
    expect(ms).toBeLessThan(2_000);
  }, 60_000);

  test("an operator's own setting is kept: BUN_JSC_useJIT=true runs with the JIT", async () => {
    const agent = await startRun({ ...service(), BUN_JSC_useJIT: "true" });
    await waitFor(agent, "ready", (l) => l.includes("INFO  ready"));
    expect(environ(agent.proc.pid).BUN_JSC_useJIT).toBe("true");
    expect(jitMemory(agent.proc.pid)).toBe(true);
    const { code } = await stopTimed(agent, "SIGTERM");
    expect(code).toBe(0);
  }, 60_000);

  test("an executable deleted before it could execute itself (an upgrade): run serves on, every log line JSON", async () => {
    // The executable is started through an open descriptor, its name already removed, as when a package upgrade
    // replaces it while `run` starts: executing it again fails, and the run keeps the JIT.
    const dir = mkdtempSync(join(tmpdir(), "hub-signals-"));
    const link = join(dir, "hub-agent");
    linkSync(await binary(), link);
    const log = join(dir, "run.log");
    const script = 'exec 9<"$0" && rm -f "$0" && exec /proc/self/fd/9 run --log-format json';
    const proc = spawn(["/bin/sh", "-c", script, link], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "", HUB_STORAGE_DIR: join(dir, "store"), ...service() },
      stdin: "ignore",
      stdout: "ignore",
      stderr: Bun.file(log),
    });
    const agent = { proc, log: () => (existsSync(log) ? readFileSync(log, "utf8") : "") };
    await waitFor(agent, "ready", (l) => l.includes('"ready'));
    expect(jitMemory(proc.pid)).toBe(true);
    const { code } = await stopTimed(agent, "SIGTERM");
    expect(code).toBe(0);
    const lines = agent.log().split("\n").filter(Boolean);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
  }, 60_000);
});
