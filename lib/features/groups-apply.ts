/**
 * Group sync's writes to the game (rule 7): a change sent command by command, and for games that cannot tell a
 * player's groups, the record of what the agent applied (store cache `groups_applied`, docs/scale.md §3).
 */
import type { GameBridge, GamePlayer } from "../game/bridge.ts";
import type { Logger } from "../log.ts";
import { appliedGroupsCache, knownGroups, unsureGroupsCache } from "../players/groups.ts";
import type { Store } from "../store/index.ts";

export interface GroupApplier {
  /** The player's groups: the game's answer, else what the agent applied. */
  current(player: GamePlayer): Promise<string[]>;
  /** Those of `wanted` whose add is not known to have gone through: recorded, yet maybe not in the game. */
  retries(player: GamePlayer, wanted: readonly string[]): Promise<string[]>;
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
  // hold, the agent can take back when VyHub ends it (persisted across restarts, as the adds not yet confirmed).
  const byPlayer = (cache: ReturnType<typeof appliedGroupsCache>) => {
    let all: Record<string, string[]> | undefined;
    const read = async () => (all ??= (await cache.get())?.data ?? {});
    const change = async (player: GamePlayer, edit: (groups: Set<string>) => void) => {
      if (bridge.playerGroups) return; // the game tells its groups: nothing to remember
      const now = await read();
      const groups = new Set(now[player.id]);
      edit(groups);
      // No group is what a player not listed has: the list holds only players it names a group for.
      if (groups.size) now[player.id] = [...groups];
      else delete now[player.id];
      await cache.set(now);
    };
    return { read, change };
  };
  const applied = byPlayer(appliedGroupsCache(store));
  // Adds whose command may not have run (it failed, or a crash came first): the game may lack the group.
  const unsure = byPlayer(unsureGroupsCache(store));

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
    current: (player) => knownGroups(bridge, player, applied.read),
    async retries(player, wanted) {
      if (bridge.playerGroups) return [];
      const maybe = new Set((await unsure.read())[player.id]);
      return wanted.filter((g) => maybe.has(g));
    },
    async apply(player, add, remove, replaces) {
      const removed: string[] = [];
      for (const group of replaces ? [] : remove) {
        if (!(await send(player, group, "remove"))) continue;
        removed.push(group);
        await applied.change(player, (held) => held.delete(group));
        await unsure.change(player, (maybe) => maybe.delete(group));
      }
      const added: string[] = [];
      for (const group of add) {
        // Unsure first, then applied: whatever a crash or a failed command leaves, the add goes again.
        await unsure.change(player, (maybe) => maybe.add(group));
        await applied.change(player, (held) => held.add(group));
        if (!(await send(player, group, "add"))) continue;
        added.push(group);
        if (replaces) await applied.change(player, (held) => (held.clear(), held.add(group)));
        await unsure.change(player, (maybe) => (replaces ? maybe.clear() : maybe.delete(group)));
      }
      // A replacing add that went through took the groups away too.
      return { added, removed: replaces && added.length ? [...remove] : removed };
    },
  };
}
