/**
 * A test run interrupted (Ctrl-C, CI's timeout killing it) still stops every process its tests started and deletes
 * its network namespaces (./preload.ts, ./netns.ts): a run of ./signal-fixture.ts is interrupted once it has
 * started them.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { netnsMissing } from "./netns.ts";
import { spawn } from "./procs.ts";
import { until } from "./until.ts";

/** Running: a process killed is a zombie until reaped (by init, once its parent is gone). */
const alive = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
};

const namespaces = async () => {
  const p = spawn(["/usr/sbin/ip", "netns", "list"], { stdout: "pipe", stderr: "ignore" });
  const list = await new Response(p.stdout).text();
  await p.exited;
  return list.split("\n").map((l) => l.split(" ")[0]);
};

describe("an interrupted test run", () => {
  for (const [signal, code] of [
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const) {
    test(`${signal}: the run exits with ${code}, its processes and namespace gone`, async () => {
      const run = spawn([process.execPath, "test", join(import.meta.dir, "signal-fixture.ts")], {
        cwd: join(import.meta.dir, "..", ".."),
        stdout: "pipe",
        stderr: "pipe",
      });
      let out = "";
      const decoder = new TextDecoder();
      for await (const chunk of run.stdout) {
        out += decoder.decode(chunk, { stream: true });
        if (out.includes("\n") && out.includes("STARTED ")) break;
      }
      const started = JSON.parse(/STARTED (.*)/.exec(out)?.[1] ?? "null") as { pids: number[]; ns?: string } | null;
      if (!started) throw new Error(`the fixture did not start: ${out}${await new Response(run.stderr).text()}`);
      try {
        expect(started.pids.every(alive)).toBe(true);
        expect(started.pids).toHaveLength(netnsMissing() ? 1 : 2);
        run.kill(signal);
        expect(await run.exited).toBe(code);
        // SIGKILL is sent, not waited for.
        await until(() => !started.pids.some(alive), "the run's processes to end", { timeoutMs: 5000 }).catch(() => {});
        expect(started.pids.filter(alive)).toEqual([]);
        if (started.ns) expect(await namespaces()).not.toContain(started.ns);
      } finally {
        // Without the clean-up, tidy up here: what a failed assertion above found left.
        for (const pid of started.pids) if (alive(pid)) process.kill(pid, "SIGKILL");
        if (started.ns && (await namespaces()).includes(started.ns))
          await spawn(["/usr/sbin/ip", "netns", "del", started.ns], { stdout: "ignore" }).exited;
      }
    }, 60_000);
  }
});
