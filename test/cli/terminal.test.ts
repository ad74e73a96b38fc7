/**
 * Nicks and reasons are foreign text: an ESC sequence or a BEL in them must reach neither the operator's terminal
 * nor a log as a control character. The CLI (run in this process): `ban`'s answer, `queue status` and `run`'s log
 * show them escaped (`\x1b`, `\x07`); `--json` keeps the exact text, JSON-escaped.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSandbox, type Sandbox } from "../../lib/sandbox/index.ts";
import { binary, hub } from "./binary.ts";

let sb: Sandbox;
beforeAll(async () => {
  sb = await startSandbox({ seed: "empty" });
  await binary();
}, 120_000);
afterAll(() => sb?.stop());

const ID = "76561198000000017";
const NICK = "Evil\x1b[31m\x07Nick";
const REASON = "grief\x1b[2J\x07ing\nINFO forged line";
// Every control character but the line breaks between lines: C0 (ESC, BEL), DEL, C1.
// oxlint-disable-next-line no-control-regex -- matching control characters is the point
const RAW_CONTROL = /[\x00-\x09\x0b-\x1f\x7f-\x9f]/;

test("ESC and BEL in a nick and a reason are escaped in answers, queue status and log lines", async () => {
  const env = {
    HUB_API_URL: sb.url,
    HUB_API_KEY: sb.key,
    HUB_API_SERVER_ID: sb.serverId,
    HUB_GAME_BRIDGE: "sim",
    HUB_STORAGE_DIR: mkdtempSync(join(tmpdir(), "hub-terminal-")),
    HUB_GAME_SIM_PLAYERS: `${ID}:${NICK}`,
  };
  // The player is online: `run` keeps the list the command takes the nick from.
  expect((await hub(["run", "--once"], { env })).code).toBe(0);
  await sb.control.down();

  const ban = await hub(["ban", "Nick", "30m", REASON], { env });
  expect(ban.code).toBe(6);
  expect(ban.stdout).toContain("grief\\x1b[2J\\x07ing\\nINFO forged line");
  expect(ban.stdout.trimEnd().split("\n")).toHaveLength(1);

  const status = await hub(["queue", "status"], { env });
  expect(status.code).toBe(0);
  expect(status.stdout).toContain("Evil\\x1b[31m\\x07Nick");
  expect(status.stdout).toContain("grief\\x1b[2J\\x07ing\\nINFO forged line");
  expect(status.stdout).not.toContain("\nINFO forged line");

  const round = await hub(["run", "--once"], { env });
  expect(round.code).toBe(4); // the service did not answer (before issue 21's fix: 6, as if the round had been fine)
  expect(round.stderr).toContain("ban of Evil\\x1b[31m\\x07Nick stays queued");
  for (const out of [ban.stdout, ban.stderr, status.stdout, status.stderr, round.stdout, round.stderr])
    expect(out).not.toMatch(RAW_CONTROL);

  // JSON keeps the exact text for scripts.
  const json = await hub(["queue", "status", "--json"], { env });
  expect(json.stdout).not.toMatch(RAW_CONTROL);
  expect(json.stdout).toContain(JSON.stringify(REASON).slice(1, -1));
}, 60_000);
