/**
 * Only those allowed, with real processes: the compiled `hub-agent run` wraps a (fake) CS2-style server whose
 * console prints the HL log lines an operator's server would (`log on` + `sv_logecho 1`). With VyHub down, a
 * player without ban rights types `!ban` and `!unban` in chat; the operator bans from the console. Nobody may be
 * kicked or let in on the player's word, no operator ban may be cancelled by it, and the operator's bans are enforced
 * at once and delivered once VyHub returns, where the player's requests are refused.
 */
import { expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SEED_IDS, type Sandbox } from "../../lib/sandbox/index.ts";
import { binary } from "../cli/binary.ts";
import { spawn } from "../support/procs.ts";
import { until } from "../support/until.ts";
import { useSandbox } from "../support/sandbox.ts";

const FAKE = join(import.meta.dir, "..", "fixtures", "fake-game-server.ts");
const STEAM64_BASE = 76561197960265728n;
const u1 = (id64: string) => `[U:1:${BigInt(id64) - STEAM64_BASE}]`;
const DAVE = "76561198000000004";
const ERIN = "76561198000000005";
const FRANK = "76561198000000006";
/** Alice holds no ban permission at the service; Bob has an active ban there (the seed). */
const PLAYERS = {
  Alice: { slot: 2, id: SEED_IDS.steamid64.alice },
  Dave: { slot: 3, id: DAVE },
  Erin: { slot: 4, id: ERIN },
  Frank: { slot: 5, id: FRANK },
  Bob: { slot: 6, id: SEED_IDS.steamid64.bob },
} as const;
type Name = keyof typeof PLAYERS;
const hl = (name: Name, rest: string) =>
  `L 11/24/2026 - 10:00:00: "${name}<${PLAYERS[name].slot}><${u1(PLAYERS[name].id)}><>" ${rest}`;

let sb: Sandbox;
useSandbox((s) => (sb = s));

test("with VyHub down, a player's chat !ban and !unban change nothing here; the operator's bans hold and are delivered once", async () => {
  const dir = mkdtempSync(join(tmpdir(), "hub-perm-"));
  const consoleLog = join(dir, "console.log");
  const agentLog = join(dir, "run.log");
  // What the server's `status` lists: CS2's rows (no ids; the log lines introduced them).
  const statusFile = join(dir, "status.txt");
  const online = new Set<Name>();
  const list = () => {
    const rows = [...online].map(
      (n) => `    ${PLAYERS[n].slot}    00:12   24    0     active 786432 127.0.0.1:27005 '${n}'`,
    );
    writeFileSync(statusFile, `players : ${online.size} humans, 0 bots (16 max)\n${rows.join("\n")}\n`);
  };
  const connect = (name: Name) => {
    online.add(name);
    list();
    type(`echo ${hl(name, 'connected, address "127.0.0.1:27005"')}`);
  };
  const disconnect = (name: Name) => {
    online.delete(name);
    list();
    type(`echo ${hl(name, 'disconnected (reason "Disconnect")')}`);
  };
  const proc = spawn([await binary(), "run"], {
    cwd: dir,
    env: {
      PATH: process.env.PATH ?? "",
      HUB_API_URL: sb.url,
      HUB_API_KEY: sb.key,
      HUB_API_SERVER_ID: sb.serverId,
      HUB_API_TIMEOUT: "2",
      HUB_STORAGE_DIR: join(dir, "store"),
      HUB_GAME_BRIDGE: "wrapper",
      HUB_GAME_PRESET: "cs2",
      HUB_GAME_WRAPPER_COMMAND: JSON.stringify([
        process.execPath,
        FAKE,
        `--log=${consoleLog}`,
        `--status-file=${statusFile}`,
      ]),
      // The fake server has no kickid: an echo makes every kick a visible console line.
      HUB_GAME_OVERRIDES_COMMANDS_KICK: "echo KICK {userid}",
      HUB_GAME_OVERRIDES_COMMANDS_MESSAGE: "echo MSG {userid} {text}",
      HUB_INTERVALS_QUEUES: "0.5",
    },
    stdin: "pipe",
    stdout: "ignore",
    stderr: Bun.file(agentLog),
  });
  const read = (file: string) => (existsSync(file) ? readFileSync(file, "utf8") : "");
  const wait = (cond: () => boolean, what: string) =>
    until(cond, what, {
      timeoutMs: 30_000,
      abort: () => (proc.exitCode !== null ? `run exited with ${proc.exitCode}` : undefined),
      diagnostics: () =>
        `run's log:\n${read(agentLog)}\nconsole:\n${read(consoleLog)}\nrequests:\n${sb.control
          .requests()
          .map((r) => `${r.method} ${r.path} ${r.status}`)
          .join("\n")}`,
    });
  /** A line typed at the agent's console: the operator's commands, or `echo` to make the server print a log line. */
  const type = (line: string) => {
    proc.stdin.write(`${line}\n`);
    proc.stdin.flush();
  };
  const kicked = (name: Name) =>
    read(consoleLog)
      .split("\n")
      .filter((l) => l === `KICK ${PLAYERS[name].slot}`).length;
  const logged = (text: string) => read(agentLog).includes(text);

  await wait(() => /\bINFO +ready$/m.test(read(agentLog)), "the agent to be ready");
  // Bob's ban must be known here before VyHub goes away: the ban list fetched at hub_ready, cached.
  await wait(() => existsSync(join(dir, "store", "cache", "bans")), "the ban list to be cached");
  await sb.control.down();

  for (const name of ["Alice", "Dave", "Erin"] as const) connect(name);
  type(`ban ${FRANK} 1h evading`); // the operator, at the console: enforced at once
  await wait(() => logged("ban queued"), "the operator's ban to be queued");
  type(`echo ${hl("Alice", 'say "!ban Dave 1h griefing"')}`);
  type(`echo ${hl("Alice", `say "!unban ${FRANK}"`)}`);
  type(`echo ${hl("Alice", `say "!unban ${SEED_IDS.steamid64.bob}"`)}`);
  await wait(() => read(agentLog).split("unban queued").length === 3, "Alice's two unbans to be queued");
  type(`ban ${ERIN} 1h cheating`); // the operator again: Erin, online, is kicked at once
  await wait(() => kicked("Erin") === 1, "the operator's ban to kick Erin");
  // Frank (the operator's queued ban, which Alice's unban must not cancel) and Bob (VyHub's cached ban, which
  // Alice's unban must not lift) are refused at connect; Dave (only Alice's ban) is not.
  disconnect("Dave");
  for (const name of ["Dave", "Frank", "Bob"] as const) connect(name);
  await wait(() => kicked("Frank") === 1 && kicked("Bob") === 1, "Frank and Bob to be refused");

  await sb.control.up();
  const bansOf = (id: string) => {
    const user = sb.state.findUser(id, "STEAM");
    return [...sb.state.bans.values()].filter((b) => b.user_id === user?.id && b.status === "ACTIVE");
  };
  const refusedForAlice = () =>
    sb.control
      .requests()
      .filter((r) => r.status === 403 && r.query.some(([k, v]) => k === "morph_user_id" && v === SEED_IDS.users.alice));
  const queued = () =>
    ["ban", "unban", "warning"].flatMap((q) => {
      const d = join(dir, "store", "queue", q);
      return existsSync(d) ? readdirSync(d) : [];
    });
  await wait(() => bansOf(FRANK).length === 1 && bansOf(ERIN).length === 1, "the operator's bans at VyHub");
  await wait(() => refusedForAlice().length >= 3, "VyHub to refuse Alice's ban and both unbans");
  await wait(() => queued().length === 0, "every queue to be empty");

  expect(refusedForAlice().map((r) => `${r.method} ${r.path}`)).toHaveLength(3); // refused once each, not retried
  expect(bansOf(FRANK)).toHaveLength(1);
  expect(bansOf(ERIN)).toHaveLength(1);
  expect(bansOf(DAVE)).toHaveLength(0);
  expect(bansOf(SEED_IDS.steamid64.bob).length).toBeGreaterThan(0);
  expect(kicked("Dave")).toBe(0);
  expect(kicked("Alice")).toBe(0);

  proc.kill("SIGTERM");
  expect(await proc.exited).toBe(0);
}, 90_000);
