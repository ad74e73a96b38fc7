/**
 * The README's "Install" walk, word for word, on a machine with no Node.js: every `<!-- install -->` block is typed
 * into one bash whose PATH holds only the tools the walk uses, with `npm run release`'s output served over loopback
 * HTTP in place of the release's download address. Between `init` and `doctor` the operator fills in the
 * placeholders (here: the in-memory service and the simulated game); `run` is stopped with Ctrl-C once ready.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { startSandbox, type Sandbox } from "../../lib/sandbox/index.ts";
import { spawn } from "../support/procs.ts";
import { until } from "../support/until.ts";
import { fillIn, releaseOnce, useScratch } from "./release-build.ts";

const scratch = useScratch();
const README = readFileSync(join(import.meta.dir, "..", "..", "README.md"), "utf8");
/** What the walk types: nothing else is on its PATH (no node, npm or bun). */
const TOOLS = ["bash", "curl", "grep", "sha256sum", "tar", "gzip"];

/** The `<!-- install -->` blocks, in order. */
export const installSteps = (markdown: string): string[] =>
  [...markdown.matchAll(/<!-- install -->\n```sh\n([\s\S]*?)\n```/g)].map((m) => m[1] as string);

const steps = installSteps(README);
const archive = `hub-agent-${pkg.version}-linux-x64`;

let sb: Sandbox;
let server: ReturnType<typeof Bun.serve>;
let tampered = false;
beforeAll(async () => {
  const out = await releaseOnce();
  sb = await startSandbox();
  // The release's download address: its files by name, nothing else.
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const name = decodeURIComponent(new URL(req.url).pathname.slice(1));
      // A download gone wrong: another archive's bytes under this one's name.
      const file = join(out, tampered && name === `${archive}.tar.gz` ? `${archive}-musl.tar.gz` : name);
      return /^[\w.-]+$/.test(name) && existsSync(file)
        ? new Response(Bun.file(file))
        : new Response("not found", { status: 404 });
    },
  });
}, 300_000);
afterAll(async () => {
  await server?.stop(true);
  await sb?.stop();
});

describe("README: Install", () => {
  test("the first section after the set-up lines; it names this version's x64 archive", () => {
    expect(README.match(/^## .*$/m)?.[0]).toBe("## Install");
    expect(steps).toHaveLength(3);
    expect(steps[0]).toMatch(/^release=https:\/\/\S+ /);
    expect(steps[0]).toContain(`\narchive=${archive} `);
    expect(steps[1]).toStartWith("./hub-agent init ");
    expect(steps[2]).toBe("./hub-agent doctor\n./hub-agent run");
  });

  /** A machine with no Node.js: a bash whose PATH holds only TOOLS, in a fresh home; what it prints, by line. */
  function machine() {
    const home = scratch("install-");
    const bin = scratch("install-path-");
    for (const tool of TOOLS) symlinkSync(Bun.which(tool)!, join(bin, tool));
    const env = { PATH: bin, HOME: home, LANG: "C.UTF-8" };
    const bash = Bun.which("bash")!;
    const noNode = Bun.spawnSync([bash, "-c", "command -v node || command -v npm || command -v bun"], { env });
    expect(noNode.exitCode).toBe(1);

    const shell = spawn([bash], { cwd: home, env, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    const lines: string[] = [];
    const read = async (stream: ReadableStream<Uint8Array>) => {
      let rest = "";
      const decoder = new TextDecoder();
      for await (const bytes of stream) {
        const parts = (rest + decoder.decode(bytes, { stream: true })).split("\n");
        rest = parts.pop() as string;
        lines.push(...parts);
      }
    };
    void read(shell.stdout);
    void read(shell.stderr);
    const type = (text: string) => {
      shell.stdin.write(`${text}\n`);
      void shell.stdin.flush();
    };
    /** Types the README's step `i`, the release served here instead of at its download address, then its exit code. */
    const typeStep = (i: number) =>
      type(
        `${steps[i]!.replace(/^release=\S+/, `release=http://127.0.0.1:${server.port}`)}\necho "install-step-${i} $?"`,
      );
    const shows = (what: string, line: (l: string) => boolean, timeoutMs = 30_000) =>
      until(() => lines.some(line), what, {
        timeoutMs,
        diagnostics: () => lines.join("\n"),
        abort: () => (shell.exitCode === null ? undefined : `the shell ended (exit ${shell.exitCode})`),
      });
    type("set -e"); // a failing command ends the shell: the test sees it at once, with its output
    return { home, shell, lines, type, typeStep, shows };
  }

  test("typed word for word with no Node.js: download, check, unpack, init, doctor, run", async () => {
    const { home, shell, lines, type, typeStep, shows } = machine();
    for (const [i, step] of steps.entries()) {
      typeStep(i);
      if (step.includes("./hub-agent run")) {
        await shows("run to be ready", (l) => /\bINFO +ready$/.test(l));
        // Ctrl-C to the foreground command, as a terminal sends it.
        const children = readFileSync(`/proc/${shell.pid}/task/${shell.pid}/children`, "utf8").trim().split(/\s+/);
        expect(children).toHaveLength(1);
        process.kill(Number(children[0]), "SIGINT");
      }
      await shows(`step ${i} to end with exit 0`, (l) => l === `install-step-${i} 0`, 60_000);
      if (step.includes("./hub-agent init")) {
        fillIn(join(home, archive, "hub-agent.toml"), sb); // the operator's edit
      }
    }
    type("exit");
    expect(await shell.exited).toBe(0);

    expect(lines).toContain(`${archive}.tar.gz: OK`);
    expect(lines).toContain(`hub-agent ${pkg.version}`);
    expect(lines).toContain("target  linux-x64");
    expect(lines.some((l) => l.startsWith(`✔ service  ${sb.url} answered in `))).toBe(true);
    expect(lines.some((l) => /\bINFO +stopped$/.test(l))).toBe(true);
    expect(lines.filter((l) => /\b(ERROR|WARN)\b/.test(l))).toEqual([]);
    // run reported the server's status to the service.
    const status = sb.control.requests({ method: "PATCH", path: new RegExp(`^/server/${sb.serverId}/?$`) });
    expect(status.filter((r) => r.status === 200).length).toBeGreaterThan(0);
  }, 180_000);

  test("a download that does not match SHA256SUMS stops the walk before it is unpacked", async () => {
    tampered = true;
    try {
      const { home, shell, lines, typeStep } = machine();
      typeStep(0);
      expect(await shell.exited).toBe(1);
      expect(lines).toContain(`${archive}.tar.gz: FAILED`);
      expect(existsSync(join(home, archive))).toBe(false);
    } finally {
      tampered = false;
    }
  }, 60_000);
});
