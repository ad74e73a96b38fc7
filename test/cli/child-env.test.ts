/**
 * What the programs hub-agent starts can see: the compiled binary's `run` wraps a "server" and runs a hook that
 * both dump their environment, with the API key and an RCON password set. Neither secret nor any HUB_* variable
 * reaches them or hub-agent's own output, nor the runtime memory settings an operator gives `run`; a variable the
 * operator sets in [game.wrapper.env] does.
 */
import { expect, test } from "bun:test";
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Sandbox } from "../../lib/sandbox/index.ts";
import { spawn } from "../support/procs.ts";
import { until } from "../support/until.ts";
import { binary } from "./binary.ts";
import { useSandbox } from "../support/sandbox.ts";

let sb: Sandbox;
useSandbox((s) => (sb = s));

const RCON_PASSWORD = "rcon-Pa55word-for-the-test";

test("the wrapped server and hooks get a clean environment; the console copy is redacted", async () => {
  const dir = mkdtempSync(join(tmpdir(), "hub-child-env-"));
  const serverDump = join(dir, "server.env");
  const hookDump = join(dir, "hook.env");
  // The server prints its environment and a secret it found on disk (the console copy must redact it).
  writeFileSync(join(dir, "leak.txt"), sb.key);
  const server = join(dir, "server.sh");
  writeFileSync(
    server,
    `#!/bin/sh\nenv > "${serverDump}.tmp" && mv "${serverDump}.tmp" "${serverDump}"\nenv\necho "found: $(cat "${dir}/leak.txt")"\n` +
      `echo '[12:00:00] [Server thread/INFO]: Done (1.0s)! For help, type "help"'\nwhile read -r line; do [ "$line" = stop ] && exit 0; done\n`,
  );
  const hook = join(dir, "hook.sh");
  writeFileSync(hook, `#!/bin/sh\nenv > "${hookDump}.tmp" && mv "${hookDump}.tmp" "${hookDump}"\n`);
  chmodSync(server, 0o755);
  chmodSync(hook, 0o755);
  writeFileSync(
    join(dir, "hub-agent.toml"),
    [
      "[game]",
      'bridge = "wrapper"',
      'preset = "minecraft"',
      "[game.wrapper]",
      `command = ["${server}"]`,
      "[game.wrapper.env]",
      'SERVER_MEMORY = "4G"',
      "[hooks]",
      `hub_ready = "${hook}"`,
    ].join("\n"),
  );
  const p = spawn([await binary(), "run"], {
    cwd: dir,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: dir,
      HUB_API_URL: sb.url,
      HUB_API_KEY: sb.key,
      HUB_API_SERVER_ID: sb.serverId,
      HUB_GAME_RCON_PASSWORD: RCON_PASSWORD,
      HUB_STORAGE_DIR: join(dir, "store"),
      HUB_LOG_LEVEL: "debug",
      // Runtime settings an operator may give `run`, beside the one run gives itself (lib/app/runtime.ts):
      // hub-agent's, not its children's.
      BUN_JSC_forceRAMSize: String(128 * 1024 * 1024),
      MIMALLOC_PURGE_DELAY: "0",
    },
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  let stdout = "";
  let stderr = "";
  void (async () => {
    for await (const c of p.stdout) stdout += new TextDecoder().decode(c);
  })();
  void (async () => {
    for await (const c of p.stderr) stderr += new TextDecoder().decode(c);
  })();
  const exited = () => (p.exitCode !== null ? `run exited with ${p.exitCode}` : undefined);
  const diagnostics = () => `stdout:\n${stdout}\nstderr:\n${stderr}`;
  await until(() => existsSync(serverDump) && existsSync(hookDump) && stdout.includes("found:"), "both dumps", {
    timeoutMs: 30_000,
    abort: exited,
    diagnostics,
  });
  p.kill("SIGTERM");
  expect(await p.exited).toBe(0);

  for (const dump of [readFileSync(serverDump, "utf8"), readFileSync(hookDump, "utf8")]) {
    expect(dump).not.toContain(sb.key);
    expect(dump).not.toContain(RCON_PASSWORD);
    expect(dump).not.toMatch(/^HUB_/m);
    expect(dump).not.toMatch(/^(BUN_JSC_|MIMALLOC_)/m); // run's runtime settings, its own and the operator's
    expect(dump).toMatch(/^PATH=/m); // what a program needs still arrives
    expect(dump).toContain(`HOME=${dir}`);
  }
  expect(readFileSync(serverDump, "utf8")).toContain("SERVER_MEMORY=4G");
  expect(readFileSync(hookDump, "utf8")).not.toContain("SERVER_MEMORY"); // the server's, not every child's
  // The console copy: the environment the server printed, and the secret it found, redacted.
  expect(stdout).toContain("SERVER_MEMORY=4G");
  expect(stdout).toContain("found: [redacted]");
  for (const out of [stdout, stderr]) {
    expect(out).not.toContain(sb.key);
    expect(out).not.toContain(RCON_PASSWORD);
    expect(out).not.toMatch(/^HUB_/m);
  }
}, 60_000);
