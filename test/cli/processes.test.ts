/**
 * One-shot commands next to a running `run`, all real processes of the compiled binary against the in-memory
 * service in this process: concurrent bans are each delivered exactly once, and nicks resolve through the online
 * list `run` keeps.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { onlineCache } from "../../lib/players/online.ts";
import { type Sandbox } from "../../lib/sandbox/index.ts";
import { sanctionQueues } from "../../lib/sanctions/index.ts";
import { openStore } from "../../lib/store/index.ts";
import { binary, hubBinary } from "./binary.ts";
import { spawn } from "../support/procs.ts";
import { until as pollUntil } from "../support/until.ts";
import { useSandbox } from "../support/sandbox.ts";

let sb: Sandbox;
useSandbox((s) => (sb = s));

interface Agent {
  proc: ReturnType<typeof Bun.spawn>;
  log: string;
  env: Record<string, string>;
}

/** `hub-agent run` with the sim bridge; its log goes to a file so it can be shown when a test fails. */
async function startRun(extra: Record<string, string> = {}): Promise<Agent> {
  const dir = mkdtempSync(join(tmpdir(), "hub-proc-"));
  const env = {
    HUB_API_URL: sb.url,
    HUB_API_KEY: sb.key,
    HUB_API_SERVER_ID: sb.serverId,
    HUB_GAME_BRIDGE: "sim",
    HUB_STORAGE_DIR: join(dir, "store"),
    HUB_API_TIMEOUT: "5",
    ...extra,
  };
  const log = join(dir, "run.log");
  const proc = spawn([await binary(), "run"], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "", ...env },
    stdin: "ignore",
    stdout: "ignore",
    stderr: Bun.file(log),
  });
  return { proc, log, env };
}

async function stop(agent: Agent): Promise<void> {
  agent.proc.kill("SIGTERM");
  expect(await agent.proc.exited).toBe(0);
}

function until(cond: () => boolean | Promise<boolean>, what: string, agent: Agent, timeoutMs = 20_000) {
  const log = () => (existsSync(agent.log) ? readFileSync(agent.log, "utf8") : "");
  return pollUntil(cond, what, {
    timeoutMs,
    everyMs: 20,
    abort: () => (agent.proc.exitCode !== null ? `run exited with ${agent.proc.exitCode}` : undefined),
    diagnostics: () => `run's log:\n${log()}`,
  });
}

describe("one-shot commands next to a running agent", () => {
  test("run and 20 concurrent ban processes of 5 bans each: exactly 100 bans reach the service, none twice", async () => {
    // run's own queue round every 200 ms competes with the one-shot processes for every entry.
    const agent = await startRun({ HUB_INTERVALS_QUEUES: "0.2" });
    const players = Array.from({ length: 100 }, (_, i) => String(76561198100000000n + BigInt(i)));
    const codes: number[] = [];
    const statuses: string[] = [];
    await Promise.all(
      Array.from({ length: 20 }, async (_, w) => {
        for (let k = 0; k < 5; k++) {
          const r = await hubBinary(["ban", players[w * 5 + k] as string, "1d", `process test ${w}.${k}`, "--json"], {
            env: agent.env,
          });
          if (r.code !== 0 && r.code !== 6) throw new Error(`ban exited ${r.code}: ${r.stderr}`);
          codes.push(r.code);
          statuses.push(JSON.parse(r.stdout).status);
        }
      }),
    );
    expect(codes).toHaveLength(100);
    // Each command reports its own ban: delivered, or taken by `run`'s round at the same moment, or left queued.
    for (const s of statuses) expect(["delivered", "sent_by_other_process", "queued"]).toContain(s);

    // Whatever a one-shot process left queued (exit 6), run delivers.
    const store = await openStore({ dir: agent.env.HUB_STORAGE_DIR as string });
    const userIds = () => new Set(players.map((p) => sb.state.findUser(p, "STEAM")?.id).filter(Boolean));
    const posts = () =>
      sb.control
        .requests({ method: "POST", path: "/ban/" })
        .filter((r) => userIds().has((r.body as { user_id: string }).user_id));
    await until(async () => (await sanctionQueues(store).ban.size()) === 0, "an empty ban queue", agent);
    await until(() => posts().length >= 100, "100 bans at the service", agent);

    expect(posts()).toHaveLength(100);
    expect(posts().every((r) => r.status === 200)).toBe(true);
    for (const id of players) {
      const user = sb.state.findUser(id, "STEAM")!;
      const bans = [...sb.state.bans.values()].filter((b) => b.user_id === user.id);
      expect(bans).toHaveLength(1);
      expect(bans[0]).toMatchObject({ length: 86_400, serverbundle_id: sb.bundleId });
    }
    await stop(agent);
  }, 90_000);

  test("a nick resolves through the online list run keeps; the ban kicks the player, who can still be unbanned by nick", async () => {
    const zoe = "76561198200000001";
    const agent = await startRun({
      HUB_GAME_SIM_PLAYERS: `${zoe}:Zoe Quinn,76561198200000002:Zed`,
      HUB_GAME_SIM_ACTIONS_LOG: join(tmpdir(), `hub-actions-${crypto.randomUUID()}.jsonl`),
      // The ban list is refreshed often so the kick follows the ban at once. run's own queue rounds keep their
      // usual interval: one every 200 ms takes the command's entry in the moment between queueing and sending, and
      // the command then rightly says "sent_by_other_process" (the first test covers that race).
      HUB_INTERVALS_BANS: "0.2",
    });
    const store = await openStore({ dir: agent.env.HUB_STORAGE_DIR as string });
    const online = async () => (await onlineCache(store).get())?.data.players.map((p) => p.name).sort() ?? [];
    await until(async () => (await online()).length === 2, "both players in the online list", agent);

    const r = await hubBinary(["ban", "zoe", "1h", "nick", "test", "--json"], { env: agent.env });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: "delivered", player: { id: zoe, name: "Zoe Quinn" } });

    const kicked = () =>
      readFileSync(agent.env.HUB_GAME_SIM_ACTIONS_LOG as string, "utf8")
        .split("\n")
        .filter(Boolean)
        .some((l) => JSON.parse(l).type === "kick" && JSON.parse(l).player === zoe);
    await until(() => existsSync(agent.env.HUB_GAME_SIM_ACTIONS_LOG as string) && kicked(), "the kick", agent);
    await until(async () => (await online()).join() === "Zed", "Zoe to leave the online list", agent);

    // Zoe is gone from the online list, not from the list of recently seen players: the nick still names her.
    const unban = await hubBinary(["unban", "zoe", "--json"], { env: agent.env });
    expect(unban.code).toBe(0);
    expect(JSON.parse(unban.stdout)).toMatchObject({ status: "delivered", player: { id: zoe, name: "Zoe Quinn" } });
    const zoeUser = sb.state.findUser(zoe, "STEAM")?.id;
    const active = [...sb.state.bans.values()].filter((b) => b.user_id === zoeUser && sb.state.banActive(b));
    expect(active).toHaveLength(0);
    // Never seen: refused as before, naming both lists.
    const nobody = await hubBinary(["unban", "yolanda"], { env: agent.env });
    expect(nobody.code).toBe(5);
    expect(nobody.stderr.trim()).toBe(
      'error: no online or recently seen player is named "yolanda": use a SteamID64, STEAM_X:Y:Z or [U:1:N], or a service user id',
    );
    await stop(agent);
  }, 60_000);
});
