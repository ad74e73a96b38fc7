/**
 * deploy/hub-agent@.service, the template unit of one process per server (hub-agent@<name>.service): every setting
 * is deploy/hub-agent.service's, in the same order, but its Description= and its ExecStart=, which adds
 * `--server %i`. So what service.test.ts checks of the unit (its environment, store, exit codes, stop, system
 * calls) holds for each instance, and a change to one unit that is not made to the other fails here.
 * `systemd-analyze verify` of an instance runs in .ci/run (.ci/verify-unit), and of the installed one in
 * test/packaging/deb.test.ts.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { runToEnd } from "../support/procs.ts";
import { readUnit, TEMPLATE_FILE, UNIT_FILE } from "./unit-file.ts";

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
