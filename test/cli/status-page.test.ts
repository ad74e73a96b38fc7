/**
 * The status page as a person sees it: a real `run` (compiled binary, sim bridge, `[http] listen`) against the
 * in-memory service, its page loaded by headless Chromium (Debian's `chromium`), which runs the page's script (it
 * fetches /status.json) before the DOM is dumped and a screenshot taken. The screenshot is kept in
 * test-output/status-page/ for a person to look at.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { drainCache } from "../../lib/sanctions/drain.ts";
import { startSandbox, type Sandbox } from "../../lib/sandbox/index.ts";
import { openStore } from "../../lib/store/index.ts";
import { jsonLines, logged, ready, startRun, statusPageUrl } from "../support/agent-run.ts";
import { spawn } from "../support/procs.ts";
import { binary } from "./binary.ts";

const CHROMIUM = process.env.HUB_CHROMIUM ?? "/usr/bin/chromium";
const installed = existsSync(CHROMIUM);
if (!installed) {
  console.warn(
    `SKIPPED: the status page test needs ${CHROMIUM} (Debian package chromium; .ci/run installs it as root, or run ` +
      "`apt-get install --no-install-recommends chromium`, or set HUB_CHROMIUM)",
  );
}

const OUTPUT = join(import.meta.dir, "..", "..", "test-output", "status-page");
const WIDTH = 1000;
const HEIGHT = 1400;
// A nick is not markup: the page must show it as typed.
const PLAYERS = [
  { id: "76561198000000201", name: "Alice" },
  { id: "76561198000000202", name: "<b>Mallory</b>" },
];

let root: string;
let sb: Sandbox;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "status-page-"));
  sb = await startSandbox();
  await binary();
}, 120_000);
afterAll(async () => {
  await sb?.stop();
  rmSync(root, { recursive: true, force: true });
});

/** Chromium as the brief of every headless check here: no sandbox, GPU, network of its own, profile in `root`. */
async function chromium(args: string[]): Promise<string> {
  const profile = mkdtempSync(join(root, "profile-"));
  const p = spawn(
    [
      CHROMIUM,
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      `--user-data-dir=${profile}`,
      // Page time runs ahead to let the script fetch /status.json and render before the dump or screenshot.
      "--virtual-time-budget=4000",
      `--window-size=${WIDTH},${HEIGHT}`,
      ...args,
    ],
    { stdout: "pipe", stderr: "pipe" },
  );
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`chromium exited ${code}: ${err}`);
  return out;
}

/** The text a person reads: the DOM without its head, script and style, tags removed, entities decoded, spaces folded. */
function visibleText(dom: string): string {
  const entities: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'", nbsp: " " };
  return dom
    .replace(/<(head|script|style)\b[\s\S]*?<\/\1>/gi, "")
    .replace(/<\/(td|th|tr|h1|h2|div|p)>/gi, "$& ")
    .replace(/<[^>]+>/g, "")
    .replace(/&(amp|lt|gt|quot|#39|nbsp);/g, (_, e: string) => entities[e] ?? "")
    .replace(/\s+/g, " ")
    .trim();
}

describe.skipIf(!installed)("the status page in headless Chromium", () => {
  test("shows the run, the service, the game and its players, the jobs, the queues, refreshed by its script", async () => {
    const dir = mkdtempSync(join(root, "run-"));
    const run = await startRun({
      sb,
      dir,
      name: "run",
      players: PLAYERS,
      env: { HUB_HTTP_LISTEN: "127.0.0.1:0", HUB_INTERVALS_STATUS: "1" },
    });
    await ready(run);
    const url = await statusPageUrl(run);
    await logged(run, (l) => l.msg === "status sent" && l.players === 2, "a status round with both players");
    // A long delivery round of this run, as it keeps its progress in the store (lib/sanctions/drain.ts).
    const now = Date.now();
    await drainCache(await openStore({ dir: join(dir, "store"), sweep: false })).set({
      pid: run.proc.pid,
      state: "running",
      started_at: new Date(now - 27_000).toISOString(),
      updated_at: new Date(now).toISOString(),
      total: 10_000,
      settled: 2_588,
      left: 7_412,
      rate_per_s: 96.3,
      eta_s: 77,
      paused_until: null,
      ended_early: null,
    });

    const dom = await chromium(["--dump-dom", url]);
    const text = visibleText(dom);
    expect(text).toMatch(new RegExp(`^hub-agent running — pid ${run.proc.pid} on \\S+, up \\d+s updated `));
    expect(text).toContain("Service reachable yes API key accepted last answer");
    expect(text).toContain("server record from the service");
    expect(text).toContain("Game bridge sim: up players online 2: ");
    expect(text).toMatch(/players online 2: (Alice, <b>Mallory<\/b>|<b>Mallory<\/b>, Alice) /);
    expect(dom).not.toContain("<b>Mallory</b>"); // shown as text, never parsed as markup
    expect(text).toMatch(/ status 1s \d+s ago none /);
    expect(text).toContain(
      "Queues queue entries waiting uncertain oldest ban 0 0 0 — unban 0 0 0 — warning 0 0 0 — reward_executed 0 0 0 — reward_failed 0 0 0 —",
    );
    expect(text).toContain(
      "Sanction delivery round of 10,000 delivering now left 7,412 settled 2,588 rate (last 10 s) 96.3/s time to empty about 1m 17s",
    );
    expect(text).toContain(`Quarantine none (${join(dir, "store", "corrupt")})`);

    mkdirSync(OUTPUT, { recursive: true });
    const shot = join(OUTPUT, "status-page.png");
    rmSync(shot, { force: true });
    await chromium([`--screenshot=${shot}`, url]);
    const png = readFileSync(shot);
    expect(png.subarray(1, 4).toString()).toBe("PNG");
    // The IHDR chunk: the page was drawn at the window's size.
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([WIDTH, HEIGHT]);
    expect(png.length).toBeGreaterThan(20_000); // text, tables and colours, not a blank page

    run.proc.kill("SIGTERM");
    expect(await run.proc.exited).toBe(0);
  }, 60_000);

  test("a host's page: each server under its name, one not running with why", async () => {
    const dir = mkdtempSync(join(root, "host-"));
    writeFileSync(
      join(dir, "hub-agent.toml"),
      `[api]\nurl = "${sb.url}"\nkey = "${sb.key}"\nserver_id = "${sb.serverId}"\n\n[game]\nbridge = "sim"\n\n[http]\nlisten = "127.0.0.1:0"\n`,
    );
    mkdirSync(join(dir, "servers.d"));
    // alpha its own server at VyHub; beta the shared file's.
    const alphaId = sb.state.addServer({ name: "alpha", serverbundle_id: sb.bundleId }).id;
    writeFileSync(
      join(dir, "servers.d", "alpha.toml"),
      `[api]\nserver_id = "${alphaId}"\n\n[game.sim]\nplayers = ["76561198012345671:Alice"]\n`,
    );
    writeFileSync(
      join(dir, "servers.d", "beta.toml"),
      `[game]\nbridge = "wrapper"\npreset = "openarena"\n\n[game.wrapper]\ncommand = ["sh", "-c", "exit 3"]\n`,
    );
    const log = join(dir, "run.log");
    const proc = spawn([await binary(), "run", "--log-format", "json"], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "" },
      stdin: "ignore",
      stdout: "ignore",
      stderr: Bun.file(log),
    });
    const run = { proc, log, lines: () => jsonLines(log) };
    await logged(run, (l) => l.tag === "alpha" && l.msg === "ready", "alpha ready");
    // The restart that waits 8 s: the page is loaded within it even when Chromium takes seconds to start (after the
    // one of 2 s, a busy CI machine found beta already "starting" again).
    const restarting = (l: Record<string, unknown>) =>
      l.tag === "beta" && String(l.msg).endsWith("starting it again in 8 s");
    await logged(run, restarting, "beta restarting", 30_000);
    const url = await statusPageUrl(run);
    const text = visibleText(await chromium(["--dump-dom", url]));
    expect(text).toMatch(/^hub-agent 1 of 2 servers running updated /);
    expect(text).toMatch(new RegExp(`alpha running — pid ${proc.pid} on \\S+, up \\d+s Service reachable yes`));
    expect(text).toContain("Game bridge sim: up players online 1: Alice");
    expect(text).toMatch(/beta not running: its agent ended \(.*\); starting it again in \d+ s$/);
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
  }, 60_000);
});
