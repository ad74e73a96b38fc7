/**
 * `hub-agent init`'s file as an operator meets it: written by the compiled binary, its placeholders refused one line
 * each until filled in, and every commented value valid once uncommented — alone, and all together.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../lib/app/config.ts";
import { ALTERNATIVES } from "../../lib/app/config.ts";
import { hub, hubBinary } from "../cli/binary.ts";

const SERVER = "541d1c41-1b58-40fc-8780-70c400ea5686";
let template: string;

beforeAll(async () => {
  const cwd = mkdtempSync(join(tmpdir(), "hub-template-"));
  const init = await hub(["init"], { cwd });
  expect(init.code).toBe(0);
  template = readFileSync(join(cwd, "hub-agent.toml"), "utf8");
}, 120_000);

/** The template with its placeholders filled in, as the init line asks. */
const filled = () =>
  template
    .replace(/^url = ".*"$/m, 'url = "https://api.example.org/demo/v1"')
    .replace(/^key = ".*"$/m, 'key = "a-real-key-123"')
    .replace(/^server_id = ".*"$/m, `server_id = "${SERVER}"`)
    .replace(/^bridge = ".*"$/m, 'bridge = "sim"');

/** A commented `# key = value` line: its index, the key and the key path (from the table above it). */
function commentedKeys(text: string) {
  const out: { index: number; key: string; path: string }[] = [];
  let table = "";
  text.split("\n").forEach((line, index) => {
    const header = /^\[([^\]]+)\]$/.exec(line);
    if (header) table = header[1] as string;
    const m = /^# ([a-z_]+) = /.exec(line);
    if (m) out.push({ index, key: m[1] as string, path: table ? `${table}.${m[1]}` : (m[1] as string) });
  });
  return out;
}

/** Uncomments the given lines; a key that replaces another (`# instead of key`) comments that one out. */
function uncomment(text: string, which: { index: number; path: string }[]): string {
  const lines = text.split("\n");
  for (const { index, path } of which) {
    lines[index] = (lines[index] as string).slice(2);
    const other = ALTERNATIVES[path];
    if (other) {
      const at = lines.findIndex((l) => l.startsWith(`${other} = `));
      lines[at] = `# ${lines[at]}`;
    }
  }
  return lines.join("\n");
}

/** A directory with the config file and the files its example values name (the key and password files). */
async function validate(text: string) {
  const dir = mkdtempSync(join(tmpdir(), "hub-template-"));
  writeFileSync(join(dir, "api-key"), "key-from-file-123\n");
  writeFileSync(join(dir, "rcon-password"), "pw-from-file\n");
  const file = join(dir, "hub-agent.toml");
  writeFileSync(file, text);
  return { dir, file, result: await loadConfig({ file, env: {}, cwd: dir }) };
}

describe("init's template", () => {
  test("as written, each placeholder is refused in one line with the fix (binary)", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "hub-template-"));
    writeFileSync(join(cwd, "hub-agent.toml"), template);
    // A command that needs the whole configuration (`queue status` reads only the store: one warning line).
    const r = await hubBinary(["dashboard"], { cwd });
    expect(r.code).toBe(3);
    const lines = r.stderr.trim().split("\n");
    expect(lines[0]).toBe(`error: configuration is not valid (${join(cwd, "hub-agent.toml")})`);
    expect(lines.slice(1)).toEqual([
      expect.stringMatching(
        /^ {2}api\.url = "https:\/\/api\.vyhub\.app\/<instance>\/v1" \(in .*\) is still the template's placeholder: replace it with the service's base URL/,
      ),
      // The key's placeholder is not echoed (a key is never shown), the others are.
      expect.stringMatching(
        /^ {2}api\.key \(in .*\) is still the template's placeholder: replace it with the server's API key$/,
      ),
      expect.stringMatching(
        /^ {2}api\.server_id = "<server id, a UUID>" \(in .*\) is still the template's placeholder: replace it with this server's id/,
      ),
      expect.stringMatching(
        /^ {2}game\.bridge = "<.*>" \(in .*\) is still the template's placeholder: replace it with how hub-agent talks to the game: sim \(simulated\), rcon/,
      ),
    ]);
  });

  test("filled in, it is valid and runs nothing it wasn't told to", async () => {
    const { result } = await validate(filled());
    if (!result.ok) throw new Error(result.problems.join("\n"));
    expect(result.config.game.bridge).toBe("sim");
  });

  test("every commented value is valid when uncommented alone", async () => {
    const keys = commentedKeys(filled());
    expect(keys.length).toBeGreaterThanOrEqual(50);
    const bad: string[] = [];
    for (const k of keys) {
      const { result } = await validate(uncomment(filled(), [k]));
      if (!result.ok) bad.push(`${k.path}: ${result.problems.join("; ")}`);
    }
    expect(bad).toEqual([]);
  });

  test("all commented values uncommented together are valid, and the binary runs on them", async () => {
    const keys = commentedKeys(filled()).filter((k) => !ALTERNATIVES[k.path]);
    const { result, dir } = await validate(uncomment(filled(), keys));
    if (!result.ok) throw new Error(result.problems.join("\n"));
    const r = await hubBinary(["queue", "status", "--json"], { cwd: dir });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
  });
});
