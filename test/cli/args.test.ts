import { expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { globalArgs } from "../../cli/args.ts";
import { argsOf } from "../../cli/runner.ts";
import { fileIoBlocks, useBlockingFileIo } from "../../lib/fsio.ts";
import { hub } from "./binary.ts";

// The runner hands each command its arguments itself (cli/runner.ts argsOf): every way to write a flag must reach it.
const env = () => ({ HUB_STORAGE_DIR: mkdtempSync(join(tmpdir(), "hub-args-")) });
const isJson = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

test("a boolean flag: --json, before or after the command, --json=false and --no-json", async () => {
  for (const args of [
    ["queue", "status", "--json"],
    ["--json", "queue", "status"],
    ["queue", "--json", "status"],
    ["queue", "status", "--json=true"],
  ]) {
    const r = await hub(args, { env: env() });
    expect([args, r.code, isJson(r.stdout)]).toEqual([args, 0, true]);
  }
  for (const args of [
    ["queue", "status", "--json=false"],
    ["queue", "status", "--no-json"],
    ["queue", "status"],
  ]) {
    const r = await hub(args, { env: env() });
    expect([args, r.code, isJson(r.stdout)]).toEqual([args, 0, false]);
    expect(r.stdout).toContain("ban");
  }
});

test("a value flag as `--name value` and `--name=value`", async () => {
  for (const args of [
    ["queue", "status", "--log-format", "json"],
    ["queue", "status", "--log-format=json"],
  ]) {
    // Only storage.dir is set: queue status warns, as a JSON line when asked for that format.
    const r = await hub(args, { env: env() });
    expect(r.code).toBe(0);
    const line = r.stderr.trim().split("\n")[0] ?? "";
    expect([args, isJson(line)]).toEqual([args, true]);
  }
  const bad = await hub(["queue", "status", "--log-format=xml"], { env: env() });
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain("--log-format xml is not a log format");
});

test("what a command's run gets: each flag under its name and camelCase name, the alias's flag, words in order", () => {
  const defs = {
    ...globalArgs,
    "dry-run": { type: "boolean" },
    player: { type: "positional", required: true },
    reason: { type: "positional", required: false },
  } as const;
  const args = argsOf(defs, ["-q", "--log-format=a=b", "--no-dry-run", "--config=", "--", "Bob", "-5", "--x"]);
  expect(args).toEqual({
    quiet: true,
    "log-format": "a=b",
    logFormat: "a=b",
    "dry-run": false,
    dryRun: false,
    config: "",
    player: "Bob",
    reason: "-5",
    _: ["Bob", "-5", "--x"],
  });
  expect(argsOf(defs, ["--json=false", "--", "Bob"])).toEqual({
    json: false,
    player: "Bob",
    reason: undefined,
    _: ["Bob"],
  });
});

test("camelCase names as `-(\\w)` made them: a dash before a word character goes, any other dash stays", () => {
  const defs = { "odd--key": { type: "boolean" }, "x-1": { type: "boolean" }, "end-": { type: "boolean" } } as const;
  const args = argsOf(defs, ["--odd--key", "--x-1", "--end-", "--"]);
  expect(Object.keys(args).sort()).toEqual(["_", "end-", "odd--key", "odd-Key", "x-1", "x1"]);
});

test("positionals by name, and the rest of the line in the reason", async () => {
  const r = await hub(["help", "queue", "retry"], { env: env() });
  expect(r.code).toBe(0);
  expect(r.stdout).toContain("USAGE hub-agent queue retry");
  // A reason that starts with a dash after `--`, and a negative-looking length, reach the command as words.
  const ban = await hub(["ban", "76561198000000001", "-5", "--", "--help", "me"], { env: env() });
  expect(ban.stderr).not.toContain("USAGE");
  expect(ban.code).toBe(2);
  expect(ban.stderr).toContain("-5");
});

test("the command's setup runs before it: a one-shot command's file calls block (cli/main.ts, lib/fsio.ts)", async () => {
  useBlockingFileIo(false);
  try {
    expect((await hub(["queue", "status"], { env: env() })).code).toBe(0);
    expect(fileIoBlocks()).toBe(true);
  } finally {
    useBlockingFileIo(false);
  }
});
