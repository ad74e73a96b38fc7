/**
 * The README's "Getting started" walk, word for word: every `<!-- walk: terminal N -->` block is typed into its own
 * bash (a terminal), in a checkout whose dist/hub-agent is the compiled binary, and every `<!-- walk: terminal N
 * shows -->` block is what that terminal must show (`…` stands for anything; a leading time is not compared). Ctrl-C
 * ends the two long-running commands, as the README says.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync } from "node:fs";
import * as net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { binary } from "./binary.ts";
import { freePort } from "../e2e/world.ts";
import { spawn } from "../support/procs.ts";
import { until } from "../support/until.ts";

const README = readFileSync(join(import.meta.dir, "..", "..", "README.md"), "utf8");

interface Step {
  kind: "setup" | "type" | "shows";
  terminal: number;
  text: string;
}

/** The marked fenced blocks, in order. */
export function walkSteps(markdown: string): Step[] {
  const re = /<!-- walk: (setup|terminal (\d+)( shows)?) -->\n```\w*\n([\s\S]*?)\n```/g;
  return [...markdown.matchAll(re)].map((m) => ({
    kind: m[1] === "setup" ? "setup" : m[3] ? "shows" : "type",
    terminal: Number(m[2] ?? 0),
    text: m[4] as string,
  }));
}

/** The README's fixed port: the walk runs on a free one, so that it runs beside a reader's sandbox still on 8787. */
const README_PORT = "8787";
const onPort = (steps: Step[], port: number) =>
  steps.map((s) => ({ ...s, text: s.text.replaceAll(README_PORT, String(port)) }));

/** A listener on the README's port while `f` runs (none if the port is taken already: taken either way). */
async function holdingReadmePort<T>(f: () => Promise<T>): Promise<T> {
  const server = net.createServer();
  const bound = await new Promise<boolean>((resolve) => {
    server.once("error", () => resolve(false));
    server.listen(Number(README_PORT), "127.0.0.1", () => resolve(true));
  });
  try {
    return await f();
  } finally {
    if (bound) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** A log line's time (the README shows a terminal's 12:00:01, a pipe gets ISO 8601) is not compared. */
const untimed = (line: string) => line.replace(/^(\d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT[\d:.]+Z) /, "").trimEnd();
const pattern = (line: string) =>
  new RegExp(
    `^${untimed(line)
      .split("…")
      .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
      .join(".*")}$`,
  );

class Terminal {
  readonly lines: string[] = [];
  private proc;
  constructor(
    readonly n: number,
    cwd: string,
    env: Record<string, string>,
  ) {
    this.proc = spawn(["bash"], { cwd, env, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    void this.read(this.proc.stdout);
    void this.read(this.proc.stderr);
    // A failing command ends the terminal, so the test sees it at once (with its output) instead of waiting.
    this.type("set -e");
  }

  private async read(stream: ReadableStream<Uint8Array>) {
    let rest = "";
    const decoder = new TextDecoder();
    for await (const bytes of stream) {
      const parts = (rest + decoder.decode(bytes, { stream: true })).split("\n");
      rest = parts.pop() as string;
      this.lines.push(...parts);
    }
    if (rest) this.lines.push(rest);
  }

  type(text: string) {
    this.proc.stdin.write(text + "\n");
    void this.proc.stdin.flush();
  }

  /** Types `exit` and waits for the shell to end. */
  async close(): Promise<number> {
    this.type("exit");
    return await this.proc.exited;
  }

  get exited(): number | null {
    return this.proc.exitCode;
  }

  /** Ctrl-C to the command running in the foreground (bash's child), as a terminal sends it. */
  interrupt() {
    const pid = this.proc.pid;
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean);
    for (const c of children) process.kill(Number(c), "SIGINT");
    return children.length;
  }

  output() {
    return `terminal ${this.n} (exit ${this.exited}):\n${this.lines.join("\n")}`;
  }

  async shows(text: string, timeoutMs = 30_000) {
    for (const line of text.split("\n")) {
      const re = pattern(line);
      await until(() => this.lines.some((l) => re.test(untimed(l))), `terminal ${this.n} to show: ${line}`, {
        timeoutMs,
        diagnostics: () => this.output(),
        abort: () => (this.exited === null ? undefined : `terminal ${this.n} ended`),
      });
    }
  }
}

describe("README: Getting started", () => {
  const steps = walkSteps(README);

  test("the walk is there: set-up, three terminals, and what each shows", () => {
    expect(steps.filter((s) => s.kind === "setup").map((s) => s.text)).toEqual(["npm ci\nnpm run build"]);
    expect(new Set(steps.filter((s) => s.kind === "type").map((s) => s.terminal))).toEqual(new Set([1, 2, 3]));
    // The README's first lines stay the two set-up commands.
    expect(README.split("\n").slice(2, 6).join("\n")).toMatch(/^```sh\nnpm ci && npm run demo .*\nnpm ci && npm test /);
  });

  test(
    "typed word for word, it ends with Alice banned and kicked, and Carol's reward run",
    // Beside a reader's own sandbox on the README's port: the walk types the README's commands on a free port.
    () =>
      holdingReadmePort(async () => {
        expect(README).toContain(`--port ${README_PORT} `);
        const steps = onPort(walkSteps(README), await freePort("tcp"));
        // The checkout after `npm ci && npm run build`: dist/hub-agent is what `npm run build` writes (binary.ts
        // compiles with package.json's build script).
        const checkout = mkdtempSync(join(tmpdir(), "hub-walk-"));
        mkdirSync(join(checkout, "dist"));
        symlinkSync(await binary(), join(checkout, "dist", "hub-agent"));
        const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: checkout, LANG: "C.UTF-8" };
        const terminals = new Map<number, Terminal>();
        const term = (n: number) => {
          let t = terminals.get(n);
          if (!t) terminals.set(n, (t = new Terminal(n, checkout, env)));
          return t;
        };
        let done = 0;
        for (const step of steps) {
          if (step.kind === "type") term(step.terminal).type(`${step.text}\necho "walk-step-done-${++done} $?"`);
          if (step.kind === "shows") await term(step.terminal).shows(step.text);
        }
        // What the sandbox printed is, line for line, the configuration the reader saves in terminal 2.
        const saved = steps.find((s) => s.kind === "type" && s.text.includes("cat > hub-agent.toml"))!.text;
        const toml = saved.slice(saved.indexOf("<<'EOF'\n") + 8, saved.indexOf("\nEOF"));
        const printed = term(1).lines.join("\n");
        expect(printed).toContain(
          toml
            .split("\n")
            .map((l) => (l ? `  ${l}` : ""))
            .join("\n"),
        );
        // Every command typed in terminal 3 finished with exit 0.
        const t3 = steps.filter((s) => s.kind === "type" && s.terminal === 3).length;
        await until(() => term(3).lines.filter((l) => /^walk-step-done-\d+ 0$/.test(l)).length === t3, "terminal 3", {
          diagnostics: () => term(3).output(),
        });

        // "Stop run and the sandbox with Ctrl-C": both stop cleanly (exit 0).
        for (const n of [2, 1]) {
          const t = term(n);
          expect(t.interrupt()).toBe(1);
          const typed = steps.filter((s) => s.kind === "type" && s.terminal === n).length;
          await until(() => t.lines.filter((l) => /^walk-step-done-\d+ 0$/.test(l)).length === typed, `terminal ${n}`, {
            diagnostics: () => t.output(),
          });
          expect(await t.close()).toBe(0);
        }
        expect(await term(3).close()).toBe(0);
        expect(term(2).lines.some((l) => untimed(l) === "INFO  stopped")).toBe(true);
        // Each kick shown once, as the README shows it.
        for (const who of ["Bob", "Alice"])
          expect(term(2).lines.filter((l) => l.includes(`[game:sim] ${who} was kicked`)).length).toBe(1);
      }),
    { timeout: 120_000 },
  );
});
