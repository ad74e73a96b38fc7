/**
 * The helper programs the wrapper runs for itself — `getent` (game.wrapper.user) and `mkfifo` (game.wrapper
 * command_pipe) — get the clean environment of every child (lib/child-env.ts): no HUB_* variable, so never the API
 * key. Shims named like them, first on PATH, write down the environment they got and run the real one.
 */
import { afterEach, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { systemClock } from "../../../lib/clock.ts";
import { memoryLogger } from "../../../lib/log.ts";
import { openCommandPipe } from "../../../lib/game/wrap/command-pipe.ts";
import { resolveRunAs } from "../../../lib/game/wrap/run-as.ts";

const saved = { PATH: process.env.PATH, HUB_API_KEY: process.env.HUB_API_KEY };
afterEach(() => {
  process.env.PATH = saved.PATH;
  if (saved.HUB_API_KEY === undefined) delete process.env.HUB_API_KEY;
  else process.env.HUB_API_KEY = saved.HUB_API_KEY;
});

/** A directory with a shim for `name` first on PATH; returns where the shim writes the environment it got. */
function shim(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), "hub-shim-"));
  const out = join(dir, "env.txt");
  writeFileSync(join(dir, name), `#!/bin/sh\nenv > '${out}'\nexec /usr/bin/${name} "$@"\n`);
  chmodSync(join(dir, name), 0o755);
  process.env.PATH = `${dir}:${saved.PATH}`;
  process.env.HUB_API_KEY = "helper-env-secret";
  return out;
}

test.skipIf(!Bun.which("getent"))("getent, looking up game.wrapper.user, never sees the API key", async () => {
  const out = shim("getent");
  expect((await resolveRunAs("root")).uid).toBe(0);
  const env = readFileSync(out, "utf8");
  expect(env).toContain("PATH=");
  expect(env).not.toContain("helper-env-secret");
});

test.skipIf(!Bun.which("mkfifo"))("mkfifo, making the command pipe, never sees the API key", async () => {
  const out = shim("mkfifo");
  const pipe = await openCommandPipe(join(mkdtempSync(join(tmpdir(), "hub-fifo-")), "console.fifo"), {
    clock: systemClock,
    logger: memoryLogger(),
  });
  pipe.close();
  const env = readFileSync(out, "utf8");
  expect(env).toContain("PATH=");
  expect(env).not.toContain("helper-env-secret");
});
