/**
 * bench/guard.ts, which bench/reliability.ts runs under: a flow that ends without its report (the event loop ran dry
 * with it pending, it failed, it was stopped) says so in one line and exits non-zero. Each case is a small script
 * run by this bun; the first shows that without the guard the same flow ends silently with 0.
 */
import { expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { collect } from "../cli/binary.ts";
import { runToEnd, spawn } from "../support/procs.ts";

const guard = join(import.meta.dir, "..", "..", "bench", "guard.ts");
const dir = mkdtempSync(join(tmpdir(), "hub-bench-guard-"));

/** A script whose flow is `body` (with `phase` in scope), run under the guard unless `guarded` is false. */
function script(name: string, body: string, guarded = true): string {
  const path = join(dir, `${name}.ts`);
  const main = `async (phase: (what: string) => void) => {\n${body}\n}`;
  writeFileSync(
    path,
    guarded
      ? `import { runToReport } from ${JSON.stringify(guard)};\nrunToReport("bench/x", ${main});\n`
      : `const main = ${main};\nmain(() => {}).then(() => {}, () => process.exit(1));\n`,
  );
  return path;
}

/** Waits on a timer that does not keep bun alive: nothing will ever settle it, as with an unref'd handle. */
const stall = `phase("the kills");\nawait new Promise((resolve) => setTimeout(resolve, 60_000).unref());\nconsole.log("report");`;

test("without the guard, a flow left waiting on nothing ends silently with 0: the failure it exists for", async () => {
  expect(await runToEnd([process.execPath, script("bare", stall, false)])).toEqual({ code: 0, stdout: "", stderr: "" });
});

test("a flow that reports ends as it chose: 0 (or its exitCode), nothing on stderr", async () => {
  const ok = await runToEnd([process.execPath, script("ok", `phase("the kills");\nconsole.log("report");`)]);
  expect(ok).toEqual({ code: 0, stdout: "report\n", stderr: "" });
  const lost = script("lost", `console.log("report");\nprocess.exitCode = 1;`);
  expect(await runToEnd([process.execPath, lost])).toEqual({ code: 1, stdout: "report\n", stderr: "" });
});

test("left waiting on nothing: exit 1 and one line saying what and where", async () => {
  const r = await runToEnd([process.execPath, script("stall", stall)]);
  expect(r).toEqual({
    code: 1,
    stdout: "",
    stderr:
      "bench/x: ended with the run unfinished (nothing left to wait for) after 0 s (last: the kills): no report\n",
  });
});

test("a flow that throws: the error, then the line, exit 1", async () => {
  const r = await runToEnd([process.execPath, script("throws", `phase("the count");\nthrow new Error("boom");`)]);
  expect(r.code).toBe(1);
  expect(r.stdout).toBe("");
  expect(r.stderr).toContain("boom");
  expect(r.stderr).toEndWith("bench/x: failed after 0 s (last: the count): no report\n");
});

test("SIGTERM or SIGINT mid-run: the line, exit 143 or 130", async () => {
  for (const [signal, code] of [
    ["SIGTERM", 143],
    ["SIGINT", 130],
  ] as const) {
    const body = `phase("the kills");\nconsole.log("started");\nawait Bun.sleep(60_000);`;
    const p = spawn([process.execPath, script(signal, body)], { stdout: "pipe", stderr: "pipe" });
    const [out, err] = [collect(p.stdout), collect(p.stderr)];
    while (!out.text().includes("started")) await Bun.sleep(10);
    p.kill(signal);
    expect(await p.exited).toBe(code);
    expect(await err.done).toBe(`bench/x: ${signal} after 0 s (last: the kills): no report\n`);
  }
});
