/**
 * Group sync's writes to the game (rule 7): a change sent command by command, and for games that cannot tell a
 * player's groups, the record of what the agent applied (store cache `groups_applied`, docs/scale.md §3).
 */
import type { GameBridge, GamePlayer } from "../game/bridge.ts";
import type { Logger } from "../log.ts";
import { appliedGroupsCache, knownGroups } from "../players/groups.ts";
import type { Store } from "../store/index.ts";

export interface GroupApplier {
  /** The player's groups: the game's answer, else what the agent applied. */
  current(player: GamePlayer): Promise<string[]>;
  /** Those of `wanted` whose add failed before: the game may lack them though they are recorded, so sent again. */
  retries(player: GamePlayer, wanted: readonly string[]): string[];
  /** Sends the change; what went through. `replaces`: a single-group game, whose add replaces the group held. */
  apply(
    player: GamePlayer,
    add: readonly string[],
    remove: readonly string[],
    replaces: boolean,
  ): Promise<{ added: string[]; removed: string[] }>;
}

export function groupApplier(bridge: GameBridge, store: Store, log: Logger): GroupApplier {
  // A group is recorded before its add is sent and dropped only once its remove succeeded: whatever the game may
  // hold, the agent can take back when VyHub ends it (persisted across restarts).
  const appliedCache = appliedGroupsCache(store);
  let applied: Record<string, string[]> | undefined;
  const appliedGroups = async () => (applied ??= (await appliedCache.get())?.data ?? {});
  const record = async (player: GamePlayer, change: (held: Set<string>) => void) => {
    if (bridge.playerGroups) return;
    const all = await appliedGroups();
    const held = new Set(all[player.id]);
    change(held);
    // No group is what a player not listed has: the list holds only players who hold a group the agent gave.
    if (held.size) all[player.id] = [...held];
    else delete all[player.id];
    await appliedCache.set(all);
  };
  // Recorded adds whose command failed: the game may or may not have run it.
  const unsure = new Set<string>();
  const key = (player: GamePlayer, group: string) => `${player.id}\n${group}`;

  /** One group command; false (logged) when it failed, so the rest of the change still goes. */
  const send = async (player: GamePlayer, group: string, op: "add" | "remove") => {
    try {
      await bridge.setGroup(player, group, op);
      return true;
    } catch (e) {
      log.warn(`${player.name}: group ${op === "add" ? "+" : "-"}${group} failed: ${(e as Error).message}`);
      return false;
    }
  };

  return {
    current: (player) => knownGroups(bridge, player, appliedGroups),
    retries: (player, wanted) => wanted.filter((g) => unsure.has(key(player, g))),
    async apply(player, add, remove, replaces) {
      const removed: string[] = [];
      for (const group of replaces ? [] : remove) {
        if (!(await send(player, group, "remove"))) continue;
        removed.push(group);
        unsure.delete(key(player, group));
        await record(player, (held) => held.delete(group));
      }
      const added: string[] = [];
      for (const group of add) {
        await record(player, (held) => held.add(group));
        if (!(await send(player, group, "add"))) {
          if (!bridge.playerGroups) unsure.add(key(player, group));
          continue;
        }
        added.push(group);
        unsure.delete(key(player, group));
        if (replaces) await record(player, (held) => (held.clear(), held.add(group)));
      }
      // A replacing add that went through took the groups away too.
      return { added, removed: replaces && added.length ? [...remove] : removed };
    },
  };
}
