/**
 * A configuration or key file everyone can read (the CLI run in this process): `doctor` shows a warning line with the
 * fix, `run` logs it; a file only its owner and group can read (the service unit's 0640) says nothing; other
 * commands stay quiet (they would repeat it every time).
 */
import { expect, test } from "bun:test";
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Sandbox } from "../../lib/sandbox/index.ts";
import { useSandbox } from "../support/sandbox.ts";
import { hub } from "./binary.ts";

let sb: Sandbox;
useSandbox((s) => (sb = s));

const setup = (mode: number, keyIn: "config" | "file") => {
  const dir = mkdtempSync(join(tmpdir(), "hub-secret-files-"));
  const config = join(dir, "hub-agent.toml");
  const keyFile = join(dir, "api.key");
  writeFileSync(keyFile, `${sb.key}\n`);
  const key = keyIn === "config" ? `key = "${sb.key}"` : `key_file = "api.key"`;
  writeFileSync(config, `[api]\nurl = "${sb.url}"\n${key}\nserver_id = "${sb.serverId}"\n[game]\nbridge = "sim"\n`);
  chmodSync(config, keyIn === "config" ? mode : 0o600);
  chmodSync(keyFile, keyIn === "file" ? mode : 0o600);
  return { dir, file: keyIn === "config" ? config : keyFile, env: { HUB_STORAGE_DIR: join(dir, "store") } };
};

for (const keyIn of ["config", "file"] as const) {
  test(`the API key in a ${keyIn === "config" ? "configuration" : "key"} file everyone can read: doctor and run warn, with the fix`, async () => {
    const { dir, file, env } = setup(0o644, keyIn);
    const what = keyIn === "config" ? "holds the API key or a console password" : "holds the API key";
    const doctor = await hub(["doctor"], { env, cwd: dir });
    expect(doctor.code).toBe(0); // a warning, not a failure
    expect(doctor.stdout).toContain(
      `! config   ${file} ${what} and other users can read it (mode 0644)\n  fix: chmod o-rwx ${file}`,
    );
    const run = await hub(["run", "--once"], { env, cwd: dir });
    expect(run.stderr).toContain(`${file} ${what} and other users can read it (mode 0644): \`chmod o-rwx ${file}\``);
    const status = await hub(["queue", "status"], { env, cwd: dir });
    expect(status.stderr).not.toContain("other users can read it");
  }, 60_000);
}

test("readable by its group only (0640, as the service unit shares it): nothing to say", async () => {
  const { dir, env } = setup(0o640, "config");
  const doctor = await hub(["doctor"], { env, cwd: dir });
  expect(doctor.stdout).not.toContain("other users can");
  expect(doctor.stdout).toMatch(/^✔ config +valid$/m);
});
