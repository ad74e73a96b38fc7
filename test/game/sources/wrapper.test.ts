import { afterEach, describe, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { track } from "../../support/procs.ts";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import type { LineStream } from "../../../lib/game/sources/lines.ts";
import { type ExitInfo, interceptWords, Wrapper, type WrapperOptions } from "../../../lib/game/sources/wrapper.ts";
import type { TransportError, TransportState } from "../../../lib/game/transports/transport.ts";
import { memoryLogger } from "../../../lib/log.ts";
import { until } from "../../agent/harness.ts";

const FAKE = new URL("../../fixtures/fake-game-server.ts", import.meta.url).pathname;
const HOST = new URL("../../fixtures/wrapper-host.ts", import.meta.url).pathname;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

/** A wrapper around the fake server, recording its lines, events and states. */
async function wrap(flags: string[] = [], opts: Partial<WrapperOptions> = {}) {
  const logger = memoryLogger();
  const wrapper = new Wrapper({
    command: [process.execPath, FAKE, ...flags],
    stopCommand: "quit",
    ready: /^Server ready/,
    echo: (marker) => `echo ${marker}`,
    timeoutMs: 5000,
    logger,
    ...opts,
  });
  cleanups.push(() => wrapper.stop());
  const lines: { line: string; stream: LineStream }[] = [];
  const events: string[] = [];
  const states: TransportState[] = [];
  const exits: ExitInfo[] = [];
  wrapper.on("ready", () => events.push("ready"));
  wrapper.on("down", (reason) => events.push(`down: ${reason}`));
  wrapper.on("operator_input", (line) => events.push(`operator: ${line}`));
  wrapper.on("exit", (info) => exits.push(info));
  wrapper.on("state", (s) => states.push(s));
  await wrapper.start((line, stream) => lines.push({ line, stream }));
  const has = (text: string) => lines.some((l) => l.line === text);
  return { wrapper, lines, events, states, exits, logger, has, texts: () => lines.map((l) => l.line) };
}

describe("Wrapper: output", () => {
  test("reads stdout and stderr as lines without colour codes; ready after the ready line", async () => {
    const w = await wrap([], {});
    await w.wrapper.whenReady();
    expect(w.lines).toContainEqual({ line: "Fake server starting", stream: "stdout" });
    expect(w.lines).toContainEqual({ line: "Server ready (type quit to stop)", stream: "stderr" });
    expect(w.events).toEqual(["ready"]);
    expect(w.states).toEqual(["connecting", "connected"]);
  });

  test("a line written in pieces (and a UTF-8 character split across writes) arrives whole", async () => {
    const w = await wrap();
    await w.wrapper.send("split hello wrapped world");
    await w.wrapper.send("utf8");
    await until(() => w.has("utf8: grüße 🎮"), "the utf8 line");
    expect(w.texts()).toContain("split: hello wrapped world");
    expect(w.texts().filter((t) => t.startsWith("split") || t.startsWith("utf8"))).toHaveLength(2);
  });

  test("drains a flood of output in order", async () => {
    const w = await wrap([]);
    await w.wrapper.send("flood 5000");
    const flood = w.texts().filter((t) => t.startsWith("flood line"));
    expect(flood).toHaveLength(5000);
    expect(flood[4999]).toStartWith("flood line 4999 ");
  });

  test("reads a console on stdout just the same", async () => {
    const w = await wrap(["--console=stdout"]);
    expect(await w.wrapper.send("say hi")).toBe("[CHAT] Server: hi");
    expect(w.lines).toContainEqual({ line: "[CHAT] Server: hi", stream: "stdout" });
  });
});

describe("Wrapper: commands", () => {
  test("send() waits for ready and returns the lines up to its marker; the marker is not game output", async () => {
    const w = await wrap(["--ready-delay=300"]);
    const reply = w.wrapper.send("say hello");
    expect(w.wrapper.state).toBe("connecting");
    expect(await reply).toBe("[CHAT] Server: hello");
    expect(w.has("[CHAT] Server: hello")).toBe(true); // still an event line
    expect(w.texts().some((t) => t.includes("hubagent_end_"))).toBe(false);
    expect(await Promise.all(["join Alice", "join Bob", "nope"].map((c) => w.wrapper.send(c)))).toEqual([
      "Alice joined the game",
      "Bob joined the game",
      'Unknown command "nope"',
    ]);
  });

  test("without an echo command, commands are fire-and-forget; `until` waits for a matching line", async () => {
    const w = await wrap([], { echo: undefined });
    expect(await w.wrapper.send("join Carol")).toBe("");
    await until(() => w.has("Carol joined the game"), "the join line");
    expect(await w.wrapper.send("join Dave", { until: /joined the game$/ })).toBe("Dave joined the game");
  });

  test("a line break or NUL can't smuggle in a second command", async () => {
    const w = await wrap();
    for (const bad of ["say hi\nquit", "say hi\rquit", "say \0"]) {
      expect(((await w.wrapper.send(bad).catch((e) => e)) as TransportError).code).toBe("invalid");
    }
    expect(await w.wrapper.send("say still here")).toBe("[CHAT] Server: still here");
  });

  test("a command without its marker times out; the late marker is dropped, not taken for the next reply", async () => {
    const w = await wrap();
    const err = (await w.wrapper.send("sleep 500", { timeoutMs: 200 }).catch((e) => e)) as TransportError;
    expect(err.code).toBe("timeout");
    expect(err.message).toContain('"sleep"');
    expect(await w.wrapper.send("join Erin")).toBe("Erin joined the game");
    expect(w.texts().some((t) => t.includes("hubagent_end_"))).toBe(false);
  });

  test("an echo command that never prints the marker times out", async () => {
    const w = await wrap([], { echo: (m) => `nonsense ${m}` });
    const err = (await w.wrapper.send("say x", { timeoutMs: 300 }).catch((e) => e)) as TransportError;
    expect(err.code).toBe("timeout");
  });
});

describe("Wrapper: operator console", () => {
  test("typed lines reach the server; intercepted words become operator_input; EOF keeps the server", async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    let shown = "";
    output.on("data", (d) => (shown += String(d)));
    const w = await wrap([], {
      input,
      output,
      intercept: interceptWords(["ban", "unban", "warn", "warns", "verwarnen"]),
    });
    await w.wrapper.whenReady();
    input.write("say typed by the operator\nBAN Bob 10 griefing\n");
    input.write("  warn Bob spam\nwarnings are not intercepted\nverwarnen Eve\n");
    await until(() => w.has('Unknown command "warnings"'), "the pass-through line");
    expect(w.has("[CHAT] Server: typed by the operator")).toBe(true);
    expect(w.events.filter((e) => e.startsWith("operator"))).toEqual([
      "operator: BAN Bob 10 griefing",
      "operator: warn Bob spam",
      "operator: verwarnen Eve",
    ]);
    expect(w.texts().some((t) => /Unknown command "(BAN|ban|warn|verwarnen)"/.test(t))).toBe(false);
    input.end();
    await until(() => w.logger.lines.some((l) => l.msg.includes("operator console closed")), "EOF noticed");
    expect(await w.wrapper.send("say after EOF")).toBe("[CHAT] Server: after EOF");
    // The operator sees the console, but not the replies to hub-agent's own commands.
    const seen = shown.split("\n");
    expect(seen).toContain("Server ready (type quit to stop)");
    expect(seen).toContain("[CHAT] Server: typed by the operator");
    expect(seen).not.toContain("[CHAT] Server: after EOF");
    expect(seen.some((l) => l.includes("hubagent_end_"))).toBe(false);
  });

  test("a typed line's answer is the operator's even when hub-agent sends a command right after it", async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    let shown = "";
    output.on("data", (d) => (shown += String(d)));
    const w = await wrap([], { input, output });
    await w.wrapper.whenReady();
    // The console is still busy with the operator's lines when hub-agent's command comes.
    input.write("sleep 100\nsay typed before the command\n");
    await new Promise((r) => setImmediate(r)); // the typed lines are read first
    expect(await w.wrapper.send("echo the command's reply")).toBe("the command's reply");
    expect(shown.split("\n")).toContain("[CHAT] Server: typed before the command");
    expect(shown).not.toContain("the command's reply");
    expect(shown).not.toContain("hubagent_end_");
  });

  test("the stop command typed at the console stops the server as hub-agent's own stop does (no restart)", async () => {
    const input = new PassThrough();
    const w = await wrap([], { input, restart: { delayMs: 10 } });
    await w.wrapper.whenReady();
    input.write("quit\n");
    await until(() => w.exits.length === 1, "the server to exit");
    expect(w.exits[0]).toMatchObject({ code: 0, requested: true, restarting: false });
    expect(w.wrapper.state).toBe("closed");
    expect(w.logger.lines.some((l) => l.msg.includes('the operator typed "quit"'))).toBe(true);
  });
});

describe("Wrapper: stop, crash and restart", () => {
  test("stop() sends the stop command and waits for a clean exit", async () => {
    const w = await wrap();
    await w.wrapper.whenReady();
    await w.wrapper.stop();
    expect(w.has("Shutting down")).toBe(true);
    expect(w.exits).toEqual([
      {
        code: 0,
        signal: null,
        reason: "stopped by hub-agent (exited with code 0)",
        requested: true,
        restarting: false,
      },
    ]);
    expect(w.wrapper.state).toBe("closed");
    expect(((await w.wrapper.send("say x").catch((e) => e)) as TransportError).code).toBe("closed");
  });

  test("a server that ignores the stop command and SIGTERM is killed after the timeouts", async () => {
    const w = await wrap(["--ignore-stop"], { stopTimeoutMs: 300, killTimeoutMs: 300 });
    await w.wrapper.whenReady();
    await w.wrapper.stop();
    expect(w.has("quit ignored")).toBe(true);
    expect(w.has("got SIGTERM")).toBe(true);
    expect(w.exits[0]).toMatchObject({ signal: "SIGKILL", requested: true });
    const warnings = w.logger.lines.filter((l) => l.level === "warn").map((l) => l.msg);
    expect(warnings).toEqual([
      "the server did not exit within 300 ms: sending SIGTERM",
      "the server did not exit within 300 ms of SIGTERM: sending SIGKILL",
    ]);
  });

  test("without a restart policy a crash closes the wrapper and fails the command in flight", async () => {
    const w = await wrap();
    const [crash, queued] = await Promise.allSettled([w.wrapper.send("crash 7"), w.wrapper.send("say x")]);
    expect(crash).toMatchObject({ status: "rejected", reason: { code: "disconnected" } });
    expect(queued).toMatchObject({ status: "rejected", reason: { code: "closed" } });
    expect((queued as PromiseRejectedResult).reason.message).toContain("the server exited with code 7");
    expect(w.wrapper.state).toBe("closed");
    expect(w.events).toEqual(["ready", "down: the server exited with code 7"]);
    expect(w.exits[0]).toMatchObject({ code: 7, requested: false, restarting: false });
    expect(((await w.wrapper.send("say x").catch((e) => e)) as TransportError).code).toBe("closed");
  });

  test("with a restart policy a crash restarts the server after a growing delay, counted", async () => {
    const w = await wrap([], { restart: { delayMs: 50, maxDelayMs: 1000 } });
    const firstPid = w.wrapper.pid;
    const [crash, queued] = await Promise.allSettled([w.wrapper.send("crash 2"), w.wrapper.send("say back")]);
    expect(crash).toMatchObject({ status: "rejected", reason: { code: "disconnected" } }); // may have run: not retried
    expect(queued).toEqual({ status: "fulfilled", value: "[CHAT] Server: back" }); // waited for the restart
    expect(w.wrapper.pid).not.toBe(firstPid);
    await w.wrapper.send("crash 2").catch(() => {});
    await w.wrapper.whenReady();
    expect(w.wrapper.restarts).toBe(2);
    expect(w.events).toEqual([
      "ready",
      "down: the server exited with code 2",
      "ready",
      "down: the server exited with code 2",
      "ready",
    ]);
    const delays = w.logger.lines.filter((l) => l.msg.startsWith("restarting")).map((l) => l.msg);
    expect(delays).toEqual(["restarting the server in 50 ms", "restarting the server in 100 ms"]);
  });

  test("a crash loop ends after maxRestarts in a row", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hub-wrapper-"));
    const w = await wrap([`--starts=${dir}/starts`, "--crash-on-start=99"], {
      restart: { delayMs: 20, maxRestarts: 2 },
    });
    await until(() => w.wrapper.state === "closed", "giving up", 10_000);
    expect(w.wrapper.restarts).toBe(2);
    expect(w.exits.map((e) => e.restarting)).toEqual([true, true, false]);
    expect(w.logger.lines.some((l) => l.level === "error" && l.msg.includes("2 restarts in a row failed"))).toBe(true);
  });

  test("a command that can't be started is a clear error", async () => {
    const wrapper = new Wrapper({ command: ["/nonexistent/ioq3ded", "+map", "oa_dm1"] });
    const err = (await wrapper.start().catch((e) => e)) as Error;
    expect(err.message).toContain('game.wrapper.command: cannot start "/nonexistent/ioq3ded"');
    expect(() => new Wrapper({ command: [] })).toThrow("game.wrapper.command is empty");
  });
});

describe("Wrapper: signals", () => {
  /** Starts the host in its own process group, like a shell does with a foreground job. */
  async function host(flags: string[] = [], serverFlags: string[] = []) {
    const child = spawn(process.execPath, [HOST, ...flags, "--", ...serverFlags], {
      stdio: ["ignore", "pipe", "inherit"],
      detached: true,
    });
    track(child);
    const out: Record<string, unknown>[] = [];
    let buf = "";
    child.stdout.on("data", (d) => {
      buf += String(d);
      const parts = buf.split("\n");
      buf = parts.pop() ?? "";
      for (const p of parts) out.push(JSON.parse(p));
    });
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    cleanups.push(() => {
      if (child.exitCode === null) process.kill(-child.pid!, "SIGKILL");
    });
    await until(() => out.some((o) => o.ready), "the wrapped server to be ready", 10_000);
    const serverPid = out.find((o) => o.ready)?.pid as number;
    return { child, out, exited, serverPid, lines: () => out.flatMap((o) => (o.line ? [o.line] : [])) };
  }

  test("Ctrl-C reaches hub-agent only; it stops the server with its stop command, then exits", async () => {
    const h = await host();
    process.kill(-h.child.pid!, "SIGINT"); // what a terminal does: the whole foreground process group
    expect(await h.exited).toBe(0);
    expect(h.lines()).toContain("Shutting down");
    expect(h.lines()).not.toContain("got SIGINT");
    expect(h.out).toContainEqual({ signal: "SIGINT" });
    expect(h.out.find((o) => o.exit)?.exit).toMatchObject({ code: 0, requested: true });
    expect(isAlive(h.serverPid)).toBe(false);
  });

  test("SIGTERM stops a stuck server within the stop timeout, then hub-agent exits", async () => {
    const h = await host(["--stop-timeout=300"], ["--ignore-stop"]);
    process.kill(h.child.pid!, "SIGTERM");
    expect(await h.exited).toBe(0);
    expect(h.lines()).toContain("quit ignored");
    expect(h.out.find((o) => o.exit)?.exit).toMatchObject({ signal: "SIGKILL", requested: true });
    expect(isAlive(h.serverPid)).toBe(false);
  });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
