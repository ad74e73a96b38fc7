/**
 * deploy/egg-hub-agent.json against the egg format (test/deploy/egg-format.ts, docs/packaging.md §2), against
 * what hub-agent reads (every variable one of its HUB_* keys or the install script's, every fixed choice one it
 * accepts), and run as the panel runs it: the variables in the environment, the startup line split as the images'
 * entrypoint splits it, started when the "done" line appears, stopped with the egg's stop signal. The install
 * script is run in test/deploy/egg-install.test.ts.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stripVTControlCharacters } from "node:util";
import * as v from "valibot";
import { createLogger } from "../../cli/log.ts";
import { configKeys, envName } from "../../lib/app/config.ts";
import { BRIDGE_KINDS } from "../../lib/game/kinds/index.ts";
import { PRESET_NAMES } from "../../lib/game/presets/index.ts";
import type { Sandbox } from "../../lib/sandbox/index.ts";
import { binary } from "../cli/binary.ts";
import { spawn } from "../support/procs.ts";
import { useSandbox } from "../support/sandbox.ts";
import { until } from "../support/until.ts";
import { Egg, inValues, passesRules, ruleProblems } from "./egg-format.ts";

const ROOT = join(import.meta.dir, "..", "..");
const raw: unknown = JSON.parse(readFileSync(join(ROOT, "deploy", "egg-hub-agent.json"), "utf8"));
const parsed = v.safeParse(Egg, raw);
const egg = parsed.output as Egg;
const variable = (env: string) => egg.variables.find((x) => x.env_variable === env);

let sb: Sandbox;
useSandbox((s) => (sb = s));

/** The "done" matcher as Wings compiles it: "regex:" + a pattern, or a plain substring. */
function doneMatchers(): ((line: string) => boolean)[] {
  const done = egg.config.startup.done;
  return (Array.isArray(done) ? done : [done]).map((d) =>
    d.startsWith("regex:") ? (line) => new RegExp(d.slice(6)).test(line) : (line) => line.includes(d),
  );
}
/** Whether a console line marks the server started (ANSI codes removed first when the egg says strip_ansi). */
const marksStarted = (line: string) =>
  doneMatchers().some((m) => m(egg.config.startup.strip_ansi ? stripVTControlCharacters(line) : line));

describe("deploy/egg-hub-agent.json", () => {
  test("is a PTDL_v2 egg", () => {
    const issues = parsed.issues?.map((i) => `${v.getDotPath(i) ?? "(egg)"}: ${i.message}`);
    expect(issues ?? []).toEqual([]);
  });

  test("every variable is a HUB_* key hub-agent's configuration reads, each at most once, or the install script's", () => {
    const read = new Set(configKeys().map(envName));
    const names = egg.variables.map((x) => x.env_variable);
    // The install script's own two (test/deploy/egg-install.test.ts): read by it, and no key of hub-agent's.
    const install = ["HUB_AGENT_DOWNLOAD_URL", "HUB_AGENT_VERSION"];
    for (const name of install) {
      expect(egg.scripts.installation.script).toContain(name);
      expect(read.has(name)).toBe(false);
    }
    expect(names.filter((n) => !read.has(n))).toEqual(install);
    expect(new Set(names).size).toBe(names.length);
    for (const env of ["HUB_API_URL", "HUB_API_KEY", "HUB_API_SERVER_ID", "HUB_GAME_BRIDGE", "HUB_GAME_PRESET"])
      expect(names).toContain(env);
  });

  test("rules are Laravel rules of the kinds eggs use, and every default passes its own rules", () => {
    for (const x of egg.variables) {
      expect({ [x.env_variable]: ruleProblems(x.rules) }).toEqual({ [x.env_variable]: [] });
      // An empty default of a required variable is one the admin fills in when creating the server.
      const ok = x.default_value === "" || passesRules(x.default_value, x.rules);
      expect({ [x.env_variable]: ok }).toEqual({ [x.env_variable]: true });
    }
    // The checker itself refuses what the panel refuses.
    expect(ruleProblems("required|strnig")).toHaveLength(1);
    expect(ruleProblems("max:ten")).toEqual(["max takes one whole number"]);
    expect(ruleProblems("regex:/a|b/")).toHaveLength(2); // Laravel splits a rule string at every "|"
    expect(ruleProblems("between:9,1")).toHaveLength(1);
  });

  test("the fixed choices are what hub-agent offers: every bridge kind, every preset, every language", () => {
    const choices = (env: string) => inValues(variable(env)?.rules ?? "")?.sort();
    expect(choices("HUB_GAME_BRIDGE")).toEqual(BRIDGE_KINDS.map((k) => k.name).sort());
    expect(choices("HUB_GAME_PRESET")).toEqual([...PRESET_NAMES].sort());
    const languages = readdirSync(join(ROOT, "lang")).map((f) => f.replace(/\.json$/, ""));
    expect(choices("HUB_LANG")).toEqual(languages.sort());
  });

  test('the "done" line is hub-agent\'s own "ready", on a panel\'s terminal (colours) and in plain lines', () => {
    const lines: string[] = [];
    for (const tty of [true, false]) {
      const logger = createLogger({
        format: "pretty",
        quiet: false,
        redact: (s) => s,
        write: (l) => lines.push(l),
        env: {},
        tty,
      });
      logger.info("ready");
      logger.withTag("wrapper").info("the server is ready");
      logger.info("stopping (SIGINT): finishing work in flight");
    }
    expect(lines.filter(marksStarted)).toHaveLength(2);
    expect(lines.filter(marksStarted).every((l) => stripVTControlCharacters(l).endsWith(" ready"))).toBe(true);
  });

  test("started as the panel starts it (wrapping a game server), it reports started, and the stop signal stops both, exit 0", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hub-egg-")); // the server's directory (/home/container)
    symlinkSync(await binary(), join(dir, "hub-agent")); // uploaded by the owner
    const consoleLog = join(dir, "console.log");
    // What the owner types into the panel: each value must pass the variable's rules, as the panel checks them.
    const typed: Record<string, string> = {
      HUB_API_URL: sb.url,
      HUB_API_KEY: sb.key,
      HUB_API_SERVER_ID: sb.serverId,
      HUB_GAME_BRIDGE: "wrapper",
      HUB_GAME_PRESET: "openarena",
      HUB_GAME_WRAPPER_COMMAND: JSON.stringify([
        process.execPath,
        join(ROOT, "test/fixtures/fake-game-server.ts"),
        "--ready-line=AAS initialized.",
        `--log=${consoleLog}`,
      ]),
    };
    for (const [name, value] of Object.entries(typed))
      expect({ [name]: passesRules(value, variable(name)?.rules ?? "") }).toEqual({ [name]: true });
    // Wings passes every variable (empty ones too) and its own; the image's entrypoint adds the rest.
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? "",
      HOME: dir,
      USER: "container",
      TZ: "UTC",
      STARTUP: egg.startup,
      SERVER_MEMORY: "1024",
      SERVER_IP: "0.0.0.0",
      SERVER_PORT: "27960",
      ...Object.fromEntries(egg.variables.map((x) => [x.env_variable, typed[x.env_variable] ?? x.default_value])),
    };
    // The entrypoint turns {{NAME}} into the variable's value and runs the words without a shell (exec env …).
    const argv = egg.startup.replace(/\{\{(\w+)\}\}/g, (_, name: string) => env[name] ?? "").split(/\s+/);
    expect(argv[0]).toBe("./hub-agent");
    const proc = spawn([join(dir, argv[0] as string), ...argv.slice(1)], {
      cwd: dir,
      env,
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    let output = "";
    const decoder = new TextDecoder();
    for (const stream of [proc.stdout, proc.stderr])
      void (async () => {
        for await (const chunk of stream) output += decoder.decode(chunk, { stream: true });
      })();
    await until(() => output.split("\n").some(marksStarted), "the line that marks the server started", {
      timeoutMs: 20_000,
      diagnostics: () => output,
    });
    expect(existsSync(join(dir, variable("HUB_STORAGE_DIR")?.default_value as string, "instance.lock"))).toBe(true);

    expect(egg.config.stop).toBe("^C"); // a signal: SIGINT to the container's process, hub-agent itself
    proc.kill("SIGINT");
    expect(await proc.exited).toBe(0);
    expect(readFileSync(consoleLog, "utf8")).toContain("Shutting down"); // the game got its own stop command
    expect(output).not.toContain(sb.key); // the key, set as a variable, never reaches the console
  }, 60_000);
});
