/**
 * `run` SIGKILLed while a `ban` beside it waits on the desk line (lib/sanctions/kick-line.ts): VyHub has made the ban,
 * its answer is held back, so `run` dies with its attempt on record and the command's answer never comes. The command
 * sees `run` hang up, finds no `run` holding the store any more, and goes on by itself: it must neither say "nothing
 * was queued" nor send the ban again unlooked; after a delivery round past the settle time, the ban is at VyHub once.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Sandbox } from "../../lib/sandbox/index.ts";
import { sanctionQueues, settleTime } from "../../lib/sanctions/index.ts";
import { openStore } from "../../lib/store/index.ts";
import { binary } from "../cli/binary.ts";
import { agentEnv, ready, startRun } from "../support/agent-run.ts";
import { spawn } from "../support/procs.ts";
import { useSandbox } from "../support/sandbox.ts";
import { until } from "../support/until.ts";

const BOB = { id: "76561198000000042", name: "Bob" };
let sb: Sandbox;
useSandbox((s) => (sb = s));
const root = mkdtempSync(join(tmpdir(), "desk-kill-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

test("run killed after VyHub made the ban, its command waiting on the line: the ban at VyHub once", async () => {
  const dir = mkdtempSync(join(root, "t-"));
  const run = await startRun({ sb, dir, name: "run", players: [BOB] });
  await ready(run);
  await until(async () => Bun.file(join(dir, "store", "cache", "deliverer")).exists(), "run to take entries");
  const userOf = () => sb.state.findUser(BOB.id, "STEAM")?.id;
  const bansOfBob = () => [...sb.state.bans.values()].filter((b) => b.user_id === userOf());
  // The ban is made, its answer held: run dies in the window where only a lookup can tell.
  sb.control.latency(60_000, { method: "POST", path: "/ban/" }, { after: true });
  const killed = sb.control.onHandled({ method: "POST", path: "/ban/" }, () => run.proc.kill("SIGKILL"));
  const env = { ...agentEnv(sb, dir), HUB_API_TIMEOUT: "2" };
  const ban = spawn([await binary(), "ban", BOB.id, "1h", "griefing", "--json"], {
    cwd: dir,
    env,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, out, err] = await Promise.all([
    ban.exited,
    new Response(ban.stdout).text(),
    new Response(ban.stderr).text(),
  ]);
  killed();
  sb.control.reset();
  expect(run.proc.signalCode).toBe("SIGKILL");
  expect(err).not.toContain("nothing was queued");
  // Queued (exit 6): the attempt run recorded makes it uncertain, looked up before any resend.
  expect(code, `${out}\n${err}`).toBe(6);
  expect(JSON.parse(out)).toMatchObject({ action: "ban", status: "queued" });
  expect(bansOfBob()).toHaveLength(1);
  // A delivery round once the settle time has passed: looked up, found, settled; never sent again.
  await Bun.sleep(settleTime(2_000) + 100);
  const once = spawn([await binary(), "run", "--once"], {
    cwd: dir,
    env,
    stdin: "ignore",
    stdout: "ignore",
    stderr: "pipe",
  });
  expect(await once.exited).toBe(0);
  expect(await sanctionQueues(await openStore({ dir: join(dir, "store") })).ban.size()).toBe(0);
  expect(bansOfBob()).toHaveLength(1);
}, 60_000);
