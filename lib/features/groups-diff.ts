/**
 * Group sync, the pure part (docs/client-interface.md rule 7, docs/client-interface.md §10.1): which in-game groups a
 * player should hold, and what to add or remove. The feature module does the I/O around it.
 */
import type { Group, Mapping } from "../api/client.ts";

/** A mapping applies when it is bound to no serverbundle (valid everywhere) or to this one. */
export function mappingApplies(mapping: Mapping, bundleId: string): boolean {
  return mapping.serverbundle_id == null || mapping.serverbundle_id === bundleId;
}

/** The in-game names a group maps to in this serverbundle, in the API's order, without duplicates. */
export function applicableMappingNames(group: Group, bundleId: string): string[] {
  return unique(group.mappings.filter((m) => mappingApplies(m, bundleId)).map((m) => m.name));
}

/**
 * Groups by precedence: highest permission_level first. Ties are broken by group name, then id
 * (plain code-unit order), so the choice never depends on the order the API happens to list them in.
 */
export function byPrecedence(groups: readonly Group[]): Group[] {
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return [...groups].sort((a, b) => b.permission_level - a.permission_level || cmp(a.name, b.name) || cmp(a.id, b.id));
}

/**
 * The in-game groups a player with these active groups should hold.
 * - Single-group games: the first applicable mapping of the highest-precedence group that has one.
 *   Groups without a mapping in this bundle are skipped rather than blocking the choice (gmod would
 *   then do nothing at all).
 * - Multi-group games: every applicable mapping of every group, de-duplicated.
 * An empty result means "no VyHub-mapped group"; the caller decides what that means for its game.
 */
export function ingameGroups(groups: readonly Group[], bundleId: string, multiGroup: boolean): string[] {
  if (multiGroup) return unique(groups.flatMap((g) => applicableMappingNames(g, bundleId)));
  for (const g of byPrecedence(groups)) {
    const name = applicableMappingNames(g, bundleId)[0];
    if (name !== undefined) return [name];
  }
  return [];
}

/** Every in-game name some mapping of some group knows in this bundle: the only names sync may remove. */
export function knownGroupNames(allGroups: readonly Group[], bundleId: string): Set<string> {
  return new Set(allGroups.flatMap((g) => applicableMappingNames(g, bundleId)));
}

/**
 * What to change: add the wanted groups the player lacks; remove the ones held but not wanted, and only
 * when a mapping knows them, so groups VyHub does not manage are never touched.
 */
export function groupDiff(
  current: readonly string[],
  wanted: readonly string[],
  known: ReadonlySet<string>,
): { add: string[]; remove: string[] } {
  const have = new Set(current);
  const want = new Set(wanted);
  return {
    add: unique(wanted.filter((g) => !have.has(g))),
    remove: unique(current.filter((g) => !want.has(g) && known.has(g))),
  };
}

/**
 * In-game name → group, for turning an in-game group change into a membership (rule 8). When several
 * groups map the same name, the highest-precedence one wins (same order as ingameGroups).
 */
export function groupByIngameName(allGroups: readonly Group[], bundleId: string): Map<string, Group> {
  const map = new Map<string, Group>();
  for (const g of byPrecedence(allGroups)) {
    for (const name of applicableMappingNames(g, bundleId)) if (!map.has(name)) map.set(name, g);
  }
  return map;
}

function unique(names: readonly string[]): string[] {
  return [...new Set(names)];
}
