import type { FeatureContext } from "../feature.ts";
import { following } from "../serial.ts";
import { systemClock } from "../clock.ts";
import { onlineCache, type OnlinePlayer } from "../players/online.ts";
import { RecentPlayers, recentCache } from "../players/recent.ts";

/** A write of the lists is followed by at least this many times its duration without one (at most MAX_WRITE_GAP_MS). */
const WRITE_GAP = 4;
const MAX_WRITE_GAP_MS = 1000;

/**
 * Keeps the store's lists of who is online and who was seen lately (lib/players/online.ts, recent.ts) current while
 * `run` runs, for the commands that name a player by nick.
 */
export function online(agent: FeatureContext): void {
  const { store, bridge, config, clock, logger } = agent.deps;
  const cache = onlineCache(store);
  const players = new Map<string, OnlinePlayer>();
  // Everyone seen lately, kept after they leave so a command can still name them by nick (lib/players/recent.ts).
  const recent = new RecentPlayers(bridge.userType, () => clock.now());
  const previous = recentCache(store)
    .get()
    .then(
      (cached) => recent.merge(cached?.data),
      (e: unknown) =>
        logger.warn(`the list of recently seen players is unreadable, starting a new one: ${(e as Error).message}`),
    );
  // One write at a time, and the calls made during a write share the one write after it, which has all their
  // changes: a slow write never overwrites a newer list with an older one, and a burst of connects on a full server
  // costs two writes, not one per connect. A caller waits for that write only, however many follow it (players
  // coming and going all the time). A failed write is reported by its callers and the next one still runs.
  // After a write that took d, the next starts WRITE_GAP·d later at the soonest: with thousands online and players
  // coming and going every second, the lists cost a bounded share of the CPU instead of all of it. Real time (the
  // system clock), whatever clock the agent runs on: it is CPU time that is saved.
  let nextWrite = 0;
  const write = following(async () => {
    const wait = nextWrite - systemClock.monotonic();
    if (wait > 0) await systemClock.sleep(wait);
    const started = systemClock.monotonic();
    await cache.set({ user_type: bridge.userType, players: [...players.values()] });
    for (const p of players.values()) recent.seen(p);
    await previous;
    await recentCache(store).set(recent.snapshot(new Set(players.keys())));
    const ended = systemClock.monotonic();
    nextWrite = ended + Math.min(WRITE_GAP * (ended - started), MAX_WRITE_GAP_MS);
  });
  // A connect does not wait for the write: with thousands online each write takes a while, and the player's lookup
  // and ban check must not queue behind it. Tracked by the scheduler, so stopping waits for it; a failure is logged.
  const save = () => void agent.scheduler.run("online list", write);
  const seen = (id: string, name: string) => {
    players.set(id, { id, name, user_id: agent.users.get(id)?.id ?? players.get(id)?.user_id ?? null });
  };

  // hub_ply_connected also covers players already online when the agent started.
  agent.events.on("hub_ply_connected", ({ player }) => {
    seen(player.id, player.name);
    return save();
  });
  agent.onGame("player_disconnect", ({ player }) => {
    const p = players.get(player.id);
    if (p) recent.seen(p); // the moment they left is the last time they were seen
    players.delete(player.id);
    return save();
  });
  // A player kicked the moment he joins (banned) was here too, even when a ban refresh met him before his connect
  // did: `unban <nick>` and `warns <nick>` must find him.
  agent.onRefused((player) => {
    recent.seen({ id: player.id, name: player.name, user_id: agent.users.get(player.id)?.id ?? null });
    save();
  });
  agent.events.on("hub_ply_initialized", ({ player, user }) => {
    if (!players.has(player.id)) return;
    players.set(player.id, { id: player.id, name: player.name, user_id: user.id });
    return save();
  });
  agent.job(
    "online",
    config.intervals.status,
    () => {
      // The agent's own list is the truth (it also holds players online before the agent started).
      for (const id of players.keys()) if (!agent.players.has(id)) players.delete(id);
      for (const p of agent.players.values()) seen(p.id, p.name);
      return write();
    },
    true,
    { offline: true }, // the store's list of who is online, for the CLI's nicks
  );
}
