// The sandbox's users as players to try hub-agent with: who they are and what the seed data holds for them.
import type { SandboxState, UserRecord } from "./state.ts";

export interface SandboxPlayer {
  nick: string;
  /** The platform id a game reports (a SteamID64 in the seed). */
  id: string;
  type: string;
  /** The service's user id. */
  user_id: string;
  /** What hub-agent will do with this player, from the data: "banned for 7d (5d left): RDM x3", "groups: VIP", … */
  notes: string[];
}

const DAY = 86_400_000;

function left(ms: number): string {
  if (ms >= DAY) return `${Math.round(ms / DAY)}d`;
  if (ms >= 3_600_000) return `${Math.round(ms / 3_600_000)}h`;
  return `${Math.max(1, Math.round(ms / 60_000))}m`;
}

/** Every user, in the order they were added, with their active bans, groups and rewards still to run. */
export function sandboxPlayers(state: SandboxState): SandboxPlayer[] {
  return [...state.users.values()].map((u) => ({
    nick: u.username ?? u.identifier,
    id: u.identifier,
    type: u.type,
    user_id: u.id,
    notes: notes(state, u),
  }));
}

/** A user by nick (any case), platform id or user id. */
export function findPlayer(state: SandboxState, query: string): UserRecord | undefined {
  const q = query.trim().toLowerCase();
  return [...state.users.values()].find(
    (u) => u.id === q || u.identifier.toLowerCase() === q || u.username?.toLowerCase() === q,
  );
}

function notes(state: SandboxState, u: UserRecord): string[] {
  const out: string[] = [];
  for (const b of state.bans.values()) {
    if (b.user_id !== u.id || !state.banActive(b)) continue;
    const ends = state.banEndsOn(b);
    // Its length, as the ban was given, and what is left of it now.
    const length =
      ends === null || b.length === null
        ? " permanently"
        : ` for ${left(b.length * 1000)} (${left(ends - state.now())} left)`;
    out.push(`banned${length}: ${b.reason}`);
  }
  if (u.admin) out.push("VyHub admin");
  const groups = state.activeGroups(u.id).map((g) => g.name);
  if (groups.length) out.push(`groups: ${groups.join(", ")}`);
  for (const r of state.appliedRewards.values()) {
    if (r.user_id !== u.id || !r.active || r.status !== "OPEN") continue;
    out.push(`reward "${r.reward.name}" (${r.reward.type}, on ${r.reward.on_event})`);
  }
  return out;
}
