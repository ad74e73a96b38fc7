/**
 * A player's in-game groups as the agent knows them: written by group sync (features/groups.ts), read where a
 * trusted group decides how a command counts (features/sanction-commands.ts).
 */
import * as v from "valibot";
import type { GameBridge, GamePlayer } from "../game/bridge.ts";
import type { Store } from "../store/index.ts";

const AppliedSchema = v.record(v.string(), v.array(v.string()));

/**
 * What group sync applied, by player id, for games that cannot tell a player's groups. Only players holding a group
 * are listed, and none is forgotten for being away: a group the agent gave stays in the game while they are gone, and
 * only this list lets the agent take it back when VyHub ends it (docs/scale.md §3).
 */
export const appliedGroupsCache = (store: Store) => store.cache("groups_applied", AppliedSchema);

/**
 * Of those, the adds not known to have gone through (written before the command, cleared once it succeeded): sent
 * again while VyHub still gives the group, after a restart too.
 */
export const unsureGroupsCache = (store: Store) => store.cache("groups_unsure", AppliedSchema);

/**
 * A player's in-game groups as far as the agent knows: the game's own answer where the bridge can tell, else what
 * group sync applied (`applied`: the remembered groups by player id).
 */
export async function knownGroups(
  bridge: GameBridge,
  player: GamePlayer,
  applied: () => Promise<Record<string, string[]>>,
): Promise<string[]> {
  return bridge.playerGroups ? bridge.playerGroups(player) : ((await applied())[player.id] ?? []);
}
