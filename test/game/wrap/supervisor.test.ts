import { afterEach, describe, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Supervisor } from "../../../lib/game/wrap/supervisor.ts";
import type { TransportError } from "../../../lib/game/transports/transport.ts";
import { until } from "../../agent/harness.ts";
import { track } from "../../support/procs.ts";
import { cleanup, wrap } from "./harness.ts";

const HOST = new URL("../../fixtures/wrapper-host.ts", import.meta.url).pathname;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
  await cleanup();
});

describe("Supervisor: output", () => {
  test("reads stdout and stderr as lines without colour codes; ready after the ready line", async () => {
    const w = await wrap([], {});
    await w.server.whenReady();
    expect(w.lines).toContainEqual({ line: "Fake server starting", stream: "stdout" });
    expect(w.lines).toContainEqual({ line: "Server ready (type quit to stop)", stream: "stderr" });
    expect(w.events).toEqual(["ready"]);
    expect(w.states).toEqual(["connecting", "connected"]);
  });

  test("a line written in pieces (and a UTF-8 character split across writes) arrives whole", async () => {
    const w = await wrap();
    await w.transport.send("split hello wrapped world");
    await w.transport.send("utf8");
    await until(() => w.has("utf8: grüße 🎮"), "the utf8 line");
    expect(w.texts()).toContain("split: hello wrapped world");
    expect(w.texts().filter((t) => t.startsWith("split") || t.startsWith("utf8"))).toHaveLength(2);
  });

  test("drains a flood of output in order", async () => {
    const w = await wrap([]);
    await w.transport.send("flood 5000");
    const flood = w.texts().filter((t) => t.startsWith("flood line"));
    expect(flood).toHaveLength(5000);
    expect(flood[4999]).toStartWith("flood line 4999 ");
  });

  test("reads a console on stdout just the same", async () => {
    const w = await wrap(["--console=stdout"]);
    expect(await w.transport.send("say hi")).toBe("[CHAT] Server: hi");
    expect(w.lines).toContainEqual({ line: "[CHAT] Server: hi", stream: "stdout" });
  });
});

describe("Supervisor: stop, crash and restart", () => {
  test("stop() sends the stop command and waits for a clean exit", async () => {
    const w = await wrap();
    await w.server.whenReady();
    await w.server.stop();
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
    expect(w.transport.state).toBe("closed");
    expect(((await w.transport.send("say x").catch((e) => e)) as TransportError).code).toBe("closed");
  });

  test("a server that ignores the stop command and SIGTERM is killed after the timeouts", async () => {
    const w = await wrap(["--ignore-stop"], { stopTimeoutMs: 300, killTimeoutMs: 300 });
    await w.server.whenReady();
    await w.server.stop();
    expect(w.has("quit ignored")).toBe(true);
    expect(w.has("got SIGTERM")).toBe(true);
    expect(w.exits[0]).toMatchObject({ signal: "SIGKILL", requested: true });
    const warnings = w.logger.lines.filter((l) => l.level === "warn").map((l) => l.msg);
    expect(warnings).toEqual([
      "the server did not exit within 300 ms: sending SIGTERM",
      "the server did not exit within 300 ms of SIGTERM: sending SIGKILL",
    ]);
  });

  test("without a restart policy a crash closes the console and fails the command in flight", async () => {
    const w = await wrap();
    const [crash, queued] = await Promise.allSettled([w.transport.send("crash 7"), w.transport.send("say x")]);
    expect(crash).toMatchObject({ status: "rejected", reason: { code: "disconnected" } });
    expect(queued).toMatchObject({ status: "rejected", reason: { code: "closed" } });
    expect((queued as PromiseRejectedResult).reason.message).toContain("the server exited with code 7");
    expect(w.transport.state).toBe("closed");
    expect(w.events).toEqual(["ready", "down: the server exited with code 7"]);
    expect(w.exits[0]).toMatchObject({ code: 7, requested: false, restarting: false });
    expect(((await w.transport.send("say x").catch((e) => e)) as TransportError).code).toBe("closed");
  });

  test("with a restart policy a crash restarts the server after a growing delay, counted", async () => {
    const w = await wrap([], { restart: { delayMs: 50, maxDelayMs: 1000 } });
    const firstPid = w.server.pid;
    const [crash, queued] = await Promise.allSettled([w.transport.send("crash 2"), w.transport.send("say back")]);
    expect(crash).toMatchObject({ status: "rejected", reason: { code: "disconnected" } }); // may have run: not retried
    expect(queued).toEqual({ status: "fulfilled", value: "[CHAT] Server: back" }); // waited for the restart
    expect(w.server.pid).not.toBe(firstPid);
    await w.transport.send("crash 2").catch(() => {});
    await w.server.whenReady();
    expect(w.server.restarts).toBe(2);
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
    await until(() => w.transport.state === "closed", "giving up", 10_000);
    expect(w.server.restarts).toBe(2);
    expect(w.exits.map((e) => e.restarting)).toEqual([true, true, false]);
    expect(w.logger.lines.some((l) => l.level === "error" && l.msg.includes("2 restarts in a row failed"))).toBe(true);
  });

  test("what the server forked ends with it: stopped, or crashed with a child that ignores SIGTERM", async () => {
    // A script that forks the real server (as srcds_run does) and holds the pipes through it.
    const forks = (then: string, trap = "") =>
      new Supervisor({
        command: ["sh", "-c", `(${trap} exec sleep 300) & echo "child $!"; echo "Server ready"; ${then}`],
        stopCommand: "quit",
        ready: /^Server ready/,
      });
    for (const [server, trap] of [
      [forks("read x; exit 0"), ""],
      [forks("sleep 0.3; exit 3"), "trap '' TERM;"], // the pause: the trap is set before the exit
    ] as const) {
      const lines: string[] = [];
      cleanups.push(() => server.stop());
      const exited = new Promise((resolve) => server.on("exit", resolve));
      await server.start((line) => lines.push(line));
      await until(() => lines.some((l) => l.startsWith("child ")), "the forked child's pid");
      const child = Number(lines.find((l) => l.startsWith("child "))?.slice(6));
      cleanups.push(() => void (isAlive(child) && process.kill(child, "SIGKILL")));
      if (!trap) await server.stop();
      await exited;
      await until(() => !isAlive(child), `the forked child ${trap ? "(ignoring SIGTERM) " : ""}gone`, 5000);
    }
  });

  test("a command that can't be started is a clear error", async () => {
    const server = new Supervisor({ command: ["/nonexistent/ioq3ded", "+map", "oa_dm1"] });
    const err = (await server.start().catch((e) => e)) as Error;
    expect(err.message).toContain('game.wrapper.command: cannot start "/nonexistent/ioq3ded"');
    expect(() => new Supervisor({ command: [] })).toThrow("game.wrapper.command is empty");
  });
});

describe("Supervisor: signals", () => {
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
