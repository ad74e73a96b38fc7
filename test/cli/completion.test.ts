/**
 * `hub-agent completion bash|zsh|fish`, printed by the compiled binary and loaded into the real shells: bash's
 * completion function is called as bash calls it (COMP_WORDS, COMP_CWORD) and fish answers `complete -C` as at a
 * prompt. zsh's completion system needs a terminal, so its script is syntax-checked (`zsh -n`) and its function run
 * with zsh's completion builtins replaced by ones that print what they were given. A shell that is not installed
 * is reported skipped (.ci/run installs zsh and fish).
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ArgsDef, CommandDef } from "citty";
import { main } from "../../cli/main.ts";
import { binary, hub, hubBinary } from "./binary.ts";
import { spawn } from "../support/procs.ts";

const SHELLS = ["bash", "zsh", "fish"] as const;
const installed = (shell: (typeof SHELLS)[number]) => Bun.which(shell) !== null;
for (const shell of ["zsh", "fish"] as const)
  if (!installed(shell))
    console.warn(
      `SKIPPED: the ${shell} completion test needs ${shell} (apt-get install ${shell}; .ci/run installs it)`,
    );

const dir = mkdtempSync(join(tmpdir(), "hub-completion-"));
const scripts: Record<string, string> = {};

beforeAll(async () => {
  await binary();
  for (const shell of SHELLS) {
    const r = await hubBinary(["completion", shell]); // the script as the compiled binary prints it
    expect(r.code).toBe(0);
    scripts[shell] = join(dir, `hub-agent.${shell}`);
    writeFileSync(scripts[shell], r.stdout);
  }
  writeFileSync(join(dir, "hub-agent.toml"), "");
}, 120_000);

async function shell(argv: string[]): Promise<string[]> {
  const p = spawn(argv, { cwd: dir, env: { PATH: process.env.PATH ?? "", HOME: dir }, stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0 || err.trim()) throw new Error(`${argv.join(" ")} exited ${code}: ${err}`);
  return out.split("\n").filter(Boolean);
}

/** What bash offers for the words typed so far, the last one being the word under the cursor ("" for none). */
const bash = (...words: string[]) =>
  shell([
    "bash",
    "-c",
    'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); _hub_agent_complete; printf "%s\\n" "${COMPREPLY[@]}"',
    "bash",
    scripts.bash as string,
    "hub-agent",
    ...words,
  ]);

/** What fish offers for the command line typed so far (its candidates, without their descriptions). */
const fish = async (line: string) =>
  (await shell(["fish", "--no-config", "-c", `source $argv[1]; complete -C $argv[2]`, scripts.fish as string, line]))
    .map((l) => l.split("\t")[0] as string)
    .sort();

/** zsh's function run with compadd/_describe/_files/_message printing their candidates (no filtering by prefix). */
const zsh = (...words: string[]) =>
  shell([
    "zsh",
    "-fc",
    [
      "compdef() { :; }",
      'source "$1"; shift',
      "_describe() { print -rl -- ${(P)${@[-1]}%%:*} }",
      'compadd() { shift; print -rl -- "$@" }',
      "_files() { print '<files>' }",
      "_message() { print '<free text>' }",
      'words=(hub-agent "$@"); CURRENT=$#words; _hub_agent',
    ].join("\n"),
    "zsh",
    scripts.zsh as string,
    ...words,
  ]);

async function commandNames(cmd: CommandDef<ArgsDef> = main): Promise<string[]> {
  const subs = typeof cmd.subCommands === "function" ? await cmd.subCommands() : await cmd.subCommands;
  return Object.keys(subs ?? {});
}

/** What `hub-agent run --<TAB>` offers in bash and zsh, in the command's order (fish sorts them). */
const RUN_FLAGS = ["--config", "--server", "--json", "--log-format", "--quiet", "--help", "--once"];

describe("hub-agent completion", () => {
  test("an unknown shell is a usage error naming the shells", async () => {
    const r = await hub(["completion", "tcsh"]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe('error: unknown shell "tcsh": use bash, zsh, fish');
  });

  test("bash: every command of the command table, subcommands, flags and their values", async () => {
    expect(await bash("")).toEqual(await commandNames());
    expect(await bash("qu")).toEqual(["queue"]);
    // The aliases of --help and --version are commands of the table, so they complete like the others.
    expect(await bash("he")).toEqual(["help"]);
    expect(await bash("ver")).toEqual(["version"]);
    expect(await bash("queue", "")).toEqual(["status", "retry", "drop"]);
    // Global flags (and their values) before the command, as the CLI accepts them.
    expect(await bash("--config", "x.toml", "--json", "queue", "d")).toEqual(["drop"]);
    expect(await bash("run", "--")).toEqual(RUN_FLAGS);
    expect(await bash("--log-format", "")).toEqual(["pretty", "json"]);
    expect(await bash("--log-format", "=", "p")).toEqual(["pretty"]); // --log-format=p: bash splits at "="
    expect(await bash("sandbox", "--seed", "")).toEqual(["examples", "empty"]);
    expect(await bash("--config", "hub-agent.t")).toEqual(["hub-agent.toml"]);
    expect(await bash("completion", "")).toEqual(["bash", "zsh", "fish"]);
    // A player, a free-text value and anything after -- (a ban reason) get no commands offered.
    expect(await bash("ban", "")).toEqual([]);
    expect(await bash("ban", "x", "--as", "")).toEqual([]);
    expect(await bash("ban", "x", "10", "--", "")).toEqual([]);
    expect(await bash("completion", "bash", "")).toEqual([]);
  });

  test.skipIf(!installed("fish"))("fish: the same answers at a fish prompt", async () => {
    expect(await fish("hub-agent ")).toEqual((await commandNames()).sort());
    expect(await fish("hub-agent queue ")).toEqual(["drop", "retry", "status"]);
    expect(await fish("hub-agent --config x.toml queue d")).toEqual(["drop"]);
    expect(await fish("hub-agent run --")).toEqual([
      "--config",
      "--help",
      "--json",
      "--log-format",
      "--once",
      "--quiet",
      "--server",
    ]);
    expect(await fish("hub-agent --log-format ")).toEqual(["json", "pretty"]);
    expect(await fish("hub-agent completion ")).toEqual(["bash", "fish", "zsh"]);
    expect(await fish("hub-agent ban x 10 -- ")).toEqual([]);
    expect(await fish("hub-agent completion bash ")).toEqual([]);
  });

  test.skipIf(!installed("zsh"))("zsh: the script parses, and its function offers the same candidates", async () => {
    await shell(["zsh", "-n", scripts.zsh as string]);
    expect(await zsh("")).toEqual(await commandNames());
    expect(await zsh("queue", "")).toEqual(["status", "retry", "drop"]);
    expect(await zsh("--config", "x.toml", "queue", "")).toEqual(["status", "retry", "drop"]);
    expect(await zsh("run", "--")).toEqual(RUN_FLAGS);
    expect(await zsh("--log-format", "")).toEqual(["pretty", "json"]);
    expect(await zsh("--config", "")).toEqual(["<files>"]);
    expect(await zsh("ban", "x", "--as", "")).toEqual(["<free text>"]);
    expect(await zsh("ban", "x", "10", "--", "")).toEqual([]);
  });
});
