/**
 * deploy/hub-agent@.service, the template unit of one process per server (hub-agent@<name>.service): every setting
 * is deploy/hub-agent.service's, in the same order, but its Description= and its ExecStart=, which adds
 * `--server %i`. So what service.test.ts checks of the unit (its environment, store, exit codes, stop, system
 * calls) holds for each instance, and a change to one unit that is not made to the other fails here. Then the
 * compiled binary started as an instance and as the unit start it (their environment, working directory and
 * command line, the state and configuration directories under a temporary root, a host with servers.d): the
 * instance runs its one server on that server's store, and a second run of the server, whichever unit starts it,
 * does not take the store. `systemd-analyze verify` of an instance runs in .ci/run (.ci/verify-unit), and of the
 * installed one in test/packaging/deb.test.ts.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Sandbox } from "../../lib/sandbox/index.ts";
import { binary } from "../cli/binary.ts";
import { runToEnd, spawn } from "../support/procs.ts";
import { useSandbox } from "../support/sandbox.ts";
import { until } from "../support/until.ts";
import { readUnit, specifiers, TEMPLATE_FILE, UNIT_FILE, type Unit, unitEnvironment } from "./unit-file.ts";

const unit = readUnit(UNIT_FILE);
const template = readUnit(TEMPLATE_FILE);
const text = readFileSync(TEMPLATE_FILE, "utf8");

describe("deploy/hub-agent@.service", () => {
  test("every setting is hub-agent.service's, in the same order, but Description= and ExecStart=", () => {
    const differs = (s: { section: string; key: string }) =>
      (s.section === "Unit" && s.key === "Description") || (s.section === "Service" && s.key === "ExecStart");
    const line = (s: { section: string; key: string; value: string }) => `[${s.section}] ${s.key}=${s.value}`;
    expect(template.settings.filter((s) => !differs(s)).map(line)).toEqual(
      unit.settings.filter((s) => !differs(s)).map(line),
    );
    expect(template.settings.map((s) => `${s.section}.${s.key}`)).toEqual(
      unit.settings.map((s) => `${s.section}.${s.key}`),
    );
  });

  test("an instance runs the one server named by the instance: run --server %i; its Description names it", () => {
    expect(template.get("Service", "ExecStart")).toBe(`${unit.get("Service", "ExecStart")} --server %i`);
    expect(template.get("Unit", "Description")).toContain("%i");
    // What an operator reads first: how to enable one, and not to run it beside hub-agent.service.
    expect(text).toContain("systemctl enable --now hub-agent@<name>");
    expect(text).toContain("systemctl disable --now hub-agent");
    // exit 7, the second run of a server on its locked store, is not restarted: as the unit, so by the first test.
    expect(template.get("Service", "RestartPreventExitStatus")?.split(/\s+/)).toContain("7");
  });
});

const escape = Bun.which("systemd-escape");
if (!escape) console.warn("SKIPPED: the instance-name check needs systemd-escape (apt-get install systemd)");

describe.skipIf(!escape)("the instance name is the server's name", () => {
  test("%i, not %I: systemd's unescaping (%I's) turns a server name's - into /", async () => {
    // A server name may hold - (eu-1): %i passes it as written; %I would pass eu/1, which no server is called.
    const unescaped = await runToEnd(["systemd-escape", "--unescape", "--instance", "hub-agent@eu-1.service"]);
    expect(unescaped.stdout.trim()).toBe("eu/1");
    expect(template.get("Service", "ExecStart")).not.toContain("%I");
    expect(template.get("Unit", "Description")).not.toContain("%I");
  });
});

let sb: Sandbox;
useSandbox((s) => (sb = s));
const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

/**
 * A machine root as systemd prepares it for either unit (the state directory, 0700, and the configuration
 * directory), with a host's configuration: the shared file (the service) and servers.d/<name>.toml for each server
 * (its server id and the simulated game), 0640 as docs/running.md has them.
 */
function host(...names: string[]): { root: string; state: string } {
  const root = mkdtempSync(join(tmpdir(), "hub-instance-"));
  roots.push(root);
  const service = (key: string) => unit.get("Service", key) as string;
  const state = join(root, "var/lib", service("StateDirectory"));
  mkdirSync(state, { recursive: true, mode: 0o700 });
  const etc = join(root, "etc", service("ConfigurationDirectory"));
  mkdirSync(join(etc, "servers.d"), { recursive: true });
  const shared = `[api]\nurl = "${sb.url}"\nkey = "${sb.key}"\ntimeout = 2\n`;
  writeFileSync(unitEnvironment(unit, root).HUB_CONFIG as string, shared, { mode: 0o640 });
  for (const name of names)
    writeFileSync(
      join(etc, "servers.d", `${name}.toml`),
      `[api]\nserver_id = "${sb.serverId}"\n\n[game]\nbridge = "sim"\n`,
      { mode: 0o640 },
    );
  return { root, state };
}

/** Starts `hub-agent run` as `u` (or the template's instance `instance`) starts it: environment, directory, arguments. */
async function start(u: Unit, root: string, instance?: string) {
  const [exe, ...args] = specifiers(u.get("Service", "ExecStart") as string, root, instance).split(/\s+/);
  expect(exe).toBe("/usr/local/bin/hub-agent");
  const proc = spawn([await binary(), ...args], {
    cwd: specifiers(u.get("Service", "WorkingDirectory") as string, root),
    env: { PATH: process.env.PATH ?? "", ...unitEnvironment(u, root) },
    stdin: "ignore",
    stdout: "ignore",
    stderr: "pipe",
  });
  let text = "";
  const decoder = new TextDecoder();
  void (async () => {
    for await (const chunk of proc.stderr) text += decoder.decode(chunk, { stream: true });
  })();
  return { proc, stderr: () => text };
}

const HELD = "another hub-agent run holds this storage directory";

describe("hub-agent@<name> started as the template starts it, on a host with servers.d", () => {
  test("hub-agent@eu-1 runs the server eu-1 alone, on /var/lib/hub-agent/servers/eu-1; a second start exits 7, not restarted", async () => {
    const { root, state } = host("eu-1", "mc");
    const eu1 = await start(template, root, "eu-1");
    try {
      await until(() => /\bINFO +ready$/m.test(eu1.stderr()), "eu-1 ready", {
        timeoutMs: 20_000,
        diagnostics: eu1.stderr,
      });
      expect(eu1.stderr()).not.toContain("hosting"); // one server, not the host's run of every server
      expect(existsSync(join(state, "servers", "eu-1", "instance.lock"))).toBe(true);
      expect(existsSync(join(state, "servers", "mc"))).toBe(false);

      const again = await start(template, root, "eu-1");
      expect(await again.proc.exited).toBe(7);
      expect(again.stderr()).toContain(`${HELD}: pid ${eu1.proc.pid}`);
      expect(template.get("Service", "RestartPreventExitStatus")?.split(/\s+/)).toContain("7");

      // Another instance, another server: its own store, beside the first.
      const mc = await start(template, root, "mc");
      await until(() => /\bINFO +ready$/m.test(mc.stderr()), "mc ready", { timeoutMs: 20_000, diagnostics: mc.stderr });
      expect(existsSync(join(state, "servers", "mc", "instance.lock"))).toBe(true);
      mc.proc.kill("SIGTERM");
      expect(await mc.proc.exited).toBe(0);
    } finally {
      eu1.proc.kill("SIGTERM");
      expect(await eu1.proc.exited).toBe(0);
    }
  }, 60_000);

  test("beside hub-agent.service: an instance started while the service hosts its server exits 7; the service started while an instance runs retries that server, then takes it over", async () => {
    const { root } = host("eu-1");
    const service = await start(unit, root);
    try {
      await until(() => /\[eu-1\] ready$/m.test(service.stderr()), "the service's eu-1 ready", {
        timeoutMs: 20_000,
        diagnostics: service.stderr,
      });
      const instance = await start(template, root, "eu-1");
      expect(await instance.proc.exited).toBe(7);
      expect(instance.stderr()).toContain(`${HELD}: pid ${service.proc.pid}`);
    } finally {
      service.proc.kill("SIGTERM");
      expect(await service.proc.exited).toBe(0);
    }

    const instance = await start(template, root, "eu-1");
    await until(() => /\bINFO +ready$/m.test(instance.stderr()), "eu-1 ready", {
      timeoutMs: 20_000,
      diagnostics: instance.stderr,
    });
    const late = await start(unit, root);
    try {
      // The service runs on (it hosts every other server), trying eu-1 again after 1 s, 2 s, … while it is held.
      await until(
        () => /\[eu-1\] its agent ended \(another hub-agent run holds .*starting it again in 2 s$/m.test(late.stderr()),
        "two tries",
        {
          timeoutMs: 20_000,
          diagnostics: late.stderr,
        },
      );
      expect(late.proc.exitCode).toBe(null);
      instance.proc.kill("SIGTERM");
      expect(await instance.proc.exited).toBe(0);
      await until(() => /\[eu-1\] ready$/m.test(late.stderr()), "the service took eu-1 over", {
        timeoutMs: 20_000,
        diagnostics: late.stderr,
      });
    } finally {
      late.proc.kill("SIGTERM");
      expect(await late.proc.exited).toBe(0);
    }
  }, 60_000);
});
