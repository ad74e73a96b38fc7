import * as v from "valibot";
import type { Store } from "../store/index.ts";

/**
 * Players `run` saw recently, kept after they leave (the store cache "recent"), so one-shot commands can name a
 * player by nick once they are gone: `hub-agent unban <nick>` right after the ban kicked them. Bounded: the players
 * online, plus the RECENT_MAX_PLAYERS who left last, none unseen for RECENT_MAX_AGE_MS (the online ones never push
 * out who just left, however full the server). Written by `run`'s online feature (features/online.ts); read by
 * ./resolve.ts with the same nick rules as the online list.
 */
export const RecentPlayerSchema = v.object({
  id: v.string(),
  name: v.string(),
  user_id: v.nullable(v.string()),
  /** Wall-clock time the player was last online. */
  last_seen: v.number(),
});
export type RecentPlayer = v.InferOutput<typeof RecentPlayerSchema>;

export const RecentSchema = v.object({
  user_type: v.string(),
  players: v.array(RecentPlayerSchema),
});
export type Recent = v.InferOutput<typeof RecentSchema>;

export const RECENT_MAX_PLAYERS = 500;
export const RECENT_MAX_AGE_MS = 30 * 24 * 3600_000;

export const recentCache = (store: Store) => store.cache("recent", RecentSchema);

/** The list in memory: merged with what the store held at start, pruned to its bounds on every write. */
export class RecentPlayers {
  #players = new Map<string, RecentPlayer>();

  constructor(
    private userType: string,
    private now: () => number,
  ) {}

  /** Adds a previous run's list (same user type only); a player seen since keeps the newer entry. */
  merge(previous: Recent | undefined): void {
    if (previous?.user_type !== this.userType) return;
    for (const p of previous.players) {
      const mine = this.#players.get(p.id);
      if (!mine || mine.last_seen < p.last_seen) this.#players.set(p.id, p);
    }
  }

  /** The player is online now (or just left): their nick and user id as last known, seen now. */
  seen(p: { id: string; name: string; user_id: string | null }): void {
    const user_id = p.user_id ?? this.#players.get(p.id)?.user_id ?? null;
    this.#players.set(p.id, { id: p.id, name: p.name, user_id, last_seen: this.now() });
  }

  /** What is written: the newest first, within the bounds; `online`: the ids of the players online now. */
  snapshot(online: ReadonlySet<string> = new Set()): Recent {
    const oldest = this.now() - RECENT_MAX_AGE_MS;
    let gone = 0;
    const kept = [...this.#players.values()]
      .filter((p) => p.last_seen >= oldest)
      .sort((a, b) => b.last_seen - a.last_seen)
      .filter((p) => online.has(p.id) || gone++ < RECENT_MAX_PLAYERS);
    this.#players = new Map(kept.map((p) => [p.id, p]));
    return { user_type: this.userType, players: kept };
  }
}
