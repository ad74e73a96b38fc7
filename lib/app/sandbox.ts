/**
 * `hub-agent sandbox`: the in-memory service on this machine, seeded with example data, its players as a person
 * tries hub-agent with them, and a complete configuration for it and the simulated game; `sandbox reward` gives a
 * player of a running one a reward through its control route. Plain data and typed outcomes.
 */
import { startSandbox } from "../sandbox/index.ts";
import { type SandboxPlayer, sandboxPlayers } from "../sandbox/players.ts";
import { REWARD_CONTROL_PATH } from "../sandbox/routes/control.ts";

export type { SandboxPlayer } from "../sandbox/players.ts";

export interface RunningSandbox {
  url: string;
  key: string;
  serverId: string;
  bundleId: string;
  players: SandboxPlayer[];
  /** A hub-agent.toml for this sandbox and the simulated game, with the seeded players online in it. */
  config: string;
  stop(): Promise<void>;
}

/** Listens on 127.0.0.1:`port` (0: any free port); `error` when it cannot. */
export async function openSandbox(opts: {
  port: number;
  key?: string;
  seed: "examples" | "empty";
}): Promise<{ ok: true; sandbox: RunningSandbox } | { ok: false; error: string }> {
  let sb;
  try {
    sb = await startSandbox(opts);
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
  const players = sandboxPlayers(sb.state);
  const { url, key, serverId, bundleId } = sb;
  return {
    ok: true,
    sandbox: { url, key, serverId, bundleId, players, config: configFile(sb, players), stop: sb.stop },
  };
}

/** A complete configuration for this sandbox and the simulated game, with the seeded players online in it. */
function configFile(sb: { url: string; key: string; serverId: string }, players: SandboxPlayer[]): string {
  const lines = [
    "[api]",
    `url = ${JSON.stringify(sb.url)}`,
    `key = ${JSON.stringify(sb.key)}`,
    `server_id = ${JSON.stringify(sb.serverId)}`,
    "",
    "[game]",
    'bridge = "sim"',
  ];
  if (players.length)
    lines.push("", "[game.sim]", `players = [${players.map((p) => JSON.stringify(`${p.id}:${p.nick}`)).join(", ")}]`);
  // A reward added while `run` runs shows within seconds rather than a minute; run and doctor warn, as they should.
  lines.push(
    "",
    "[intervals]",
    "rewards = 10  # seconds, for trying rewards out; keep the default 60 on a real server",
  );
  return lines.join("\n") + "\n";
}

/** The reward a running sandbox added. */
export interface AddedReward {
  id: string;
  user: { id: string; username: string | null };
  reward: { on_event: string };
}

export type RewardOutcome =
  | { kind: "added"; reward: AddedReward }
  | { kind: "unreachable"; url: string; error: string }
  | { kind: "key_refused"; url: string }
  /** `known`: the players it has (none: started with the empty seed). */
  | { kind: "unknown_player"; known: string[] }
  | { kind: "not_sandbox"; url: string }
  | { kind: "refused"; status: number; detail: string };

/**
 * Gives `player` (nick, platform id or VyHub user id) a reward whose `command` runs on the game's console at
 * `event` (DIRECT, CONNECT, …), at the sandbox `api.url` points at.
 */
export async function addSandboxReward(
  api: { url: string; key: string },
  reward: { player: string; command: string; event: string },
): Promise<RewardOutcome> {
  const url = api.url.replace(/\/+$/, "") + REWARD_CONTROL_PATH;
  let res: Response;
  try {
    res = await fetch(url, {
      method: "POST",
      headers: { authorization: `Bearer ${api.key}`, "content-type": "application/json" },
      body: JSON.stringify({ player: reward.player, command: reward.command, on_event: reward.event }),
      signal: AbortSignal.timeout(10_000),
    });
  } catch (e) {
    return { kind: "unreachable", url, error: (e as Error).message };
  }
  const text = await res.text();
  let body: { detail?: { msg?: string; detail?: { known?: string[] } } } | undefined;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (res.ok && body) return { kind: "added", reward: body as AddedReward };
  if (res.status === 401) return { kind: "key_refused", url };
  const known = body?.detail?.detail?.known;
  if (res.status === 404 && known) return { kind: "unknown_player", known };
  if (res.status === 404) return { kind: "not_sandbox", url };
  return { kind: "refused", status: res.status, detail: body?.detail?.msg ?? text };
}
