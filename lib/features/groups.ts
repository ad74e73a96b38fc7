/**
 * Group sync (rule 7) and capture of in-game group changes (rule 8): the I/O around groups-diff.ts. Off where
 * players are known only by name (the bridge's caps.identity "name").
 */
import { describeError, type Group } from "../api/client.ts";
import type { FeatureContext } from "../feature.ts";
import type { GamePlayer } from "../game/bridge.ts";
import type { Clock } from "../clock.ts";
import type { Feature } from "../feature.ts";
import { groupApplier } from "./groups-apply.ts";
import { groupByIngameName, groupDiff, ingameGroups, knownGroupNames } from "./groups-diff.ts";

/** A round spreads its per-player requests over this share of the interval, leaving slack before the next. */
const SPREAD_SHARE = 0.9;

export const groups: Feature = (agent) => {
  const { api, bridge, clock, config, logger, store } = agent.deps;
  const log = logger.withTag("groups");
  const intervalMs = config.intervals.groups * 1000;
  // Known by a name anyone can take: a VyHub user's groups would go to whoever joins under that name, and a change
  // made in game would be recorded for whoever owns it at VyHub.
  if (bridge.caps.identity === "name")
    return log.info("group sync is off: players here are only a name anyone can take");

  // GET /group/ once per interval at most: every sync and every captured change needs the mappings.
  let catalogue: { at: number; list: Group[] } | undefined;
  const allGroups = async (): Promise<Group[] | undefined> => {
    if (catalogue && clock.monotonic() - catalogue.at < intervalMs) return catalogue.list;
    const res = await api.getGroups();
    if (!res.ok) {
      log.warn(`groups not fetched: ${describeError(res.error)}`);
      return catalogue?.list;
    }
    catalogue = { at: clock.monotonic(), list: res.value };
    return res.value;
  };

  const applier = groupApplier(bridge, store, log);

  const sync = async (player: GamePlayer, catalogueNow: Group[]) => {
    const user = agent.users.get(player.id);
    if (!user || !agent.players.has(player.id)) return;
    await agent.pace.take(agent.scheduler.signal);
    if (!agent.players.has(player.id)) return; // left while waiting for the turn
    const res = await api.getUserGroups(user.id, agent.bundleId);
    if (!res.ok) return log.warn(`groups of ${player.name} not fetched: ${describeError(res.error)}`);
    const wanted = ingameGroups(res.value, agent.bundleId, bridge.caps.multiGroup);
    const current = await applier.current(player);
    const diff = groupDiff(current, wanted, knownGroupNames(catalogueNow, agent.bundleId));
    let add = [...new Set([...diff.add, ...(await applier.retries(player, wanted))])];
    let remove = diff.remove;
    // A single-group game replaces the group when one is set: then adding the new one is the whole change.
    const replaces = !bridge.caps.multiGroup && add.length > 0;
    // Unreadable items were left out of the answer: a group missing from it may still be the player's. Nothing is
    // taken away then; a single-group game's add would replace the group held, so it waits too.
    if (res.skipped && remove.length) {
      log.info(`${player.name}: ${remove.join(", ")} kept, VyHub's answer had unreadable groups`);
      if (replaces) add = [];
      remove = [];
    }
    if (!add.length && !remove.length) return;
    const { added, removed } = await applier.apply(player, add, remove, replaces);
    if (!added.length && !removed.length) return;
    log.info(`${player.name}: groups ${[...added.map((g) => `+${g}`), ...removed.map((g) => `-${g}`)].join(" ")}`);
    await tell(agent, player, added, removed);
  };

  // One player's failure (their console, the store) is theirs alone: the round goes on with the next.
  const syncOrLog = (player: GamePlayer, catalogueNow: Group[]) =>
    sync(player, catalogueNow).catch((e: unknown) => {
      if (!agent.scheduler.signal.aborted) log.warn(`group sync of ${player.name} failed: ${(e as Error).message}`);
    });

  agent.events.on("hub_ply_initialized", async ({ player }) => {
    const list = await allGroups();
    if (list) await syncOrLog(player, list);
  });

  agent.job(
    "groups",
    config.intervals.groups,
    async () => {
      const list = await allGroups();
      if (!list) return;
      const online = [...agent.players.values()].filter((p) => agent.users.get(p.id));
      const windowMs = agent.deps.once ? 0 : intervalMs * SPREAD_SHARE;
      await spread(online, windowMs, (p) => syncOrLog(p, list), clock, agent.scheduler.signal);
    },
    false,
    { fixedRate: true },
  );

  agent.onGame("group_change", async (e) => {
    await captureChange(agent, e, await allGroups());
  });
};

/** Tells the player what group sync changed (rule 7), where the game can message one player. */
async function tell(agent: FeatureContext, player: GamePlayer, added: string[], removed: string[]) {
  const { bridge, messages } = agent.deps;
  if (!bridge.caps.privateMessage) return;
  const say = (text: string) => bridge.message(player, text);
  if (!bridge.caps.multiGroup && added[0]) return say(messages.t("group.changed", { group: added[0] }));
  for (const group of added) await say(messages.t("group.added", { group }));
  for (const group of removed) await say(messages.t("group.removed", { group }));
}

/** Rule 8: an admin changed a group in game; record it as a membership (or end one) at the service. */
async function captureChange(
  agent: FeatureContext,
  e: { player: GamePlayer; group: string; op: "add" | "remove"; seconds?: number; by?: GamePlayer },
  catalogue: Group[] | undefined,
) {
  const { api, bridge, clock, logger } = agent.deps;
  const log = logger.withTag("groups");
  const group = catalogue && groupByIngameName(catalogue, agent.bundleId).get(e.group);
  if (!group) return log.info(`in-game group ${e.group} of ${e.player.name} maps to no VyHub group; not recorded`);
  if (e.op === "remove" && !bridge.caps.multiGroup) return; // the replacing group's add records the change
  const user = await agent.users.ensure(e.player);
  if (!user) return log.warn(`group change of ${e.player.name} not recorded: the player's user is unknown`);
  const initiator = e.by && (await agent.users.ensure(e.by));
  const what = `${e.op === "add" ? "+" : "-"}${group.name} for ${e.player.name}${e.by ? ` by ${e.by.name}` : ""}`;
  // Without morph_user_id the service takes the change with the server's own rights, not the initiator's.
  if (e.by && !initiator) {
    return log.warn(`membership ${what} not recorded: ${e.by.name}'s VyHub user could not be looked up`);
  }
  const morph = initiator ? { morphUserId: initiator.id } : undefined;
  const bundle = agent.bundleId;

  if (e.op === "add") {
    const now = clock.now();
    const end = e.seconds ? new Date(now + e.seconds * 1000).toISOString() : null;
    const body = { group_id: group.id, serverbundle_id: bundle, begin: new Date(now).toISOString(), end };
    const res = await api.createMembership(user.id, body, morph);
    if (res.ok) return log.info(`membership recorded: ${what}`);
    return log.warn(`membership ${what} not recorded: ${describeError(res.error)}`);
  }
  // One call for the player's own memberships of the group in this bundle: listing them would also return linked
  // users' memberships, which are not this player's to end.
  const res = await api.endMembershipByGroup(user.id, group.id, bundle, morph);
  if (res.ok) log.info(`membership ended: ${what}`);
  else log.warn(`membership ${what} not ended: ${describeError(res.error)}`);
}

/** Runs `fn` for each item, one at a time, starting them evenly over `windowMs` (0: back to back). */
export async function spread<T>(
  items: readonly T[],
  windowMs: number,
  fn: (item: T) => Promise<unknown>,
  clock: Clock,
  signal: AbortSignal,
): Promise<void> {
  const start = clock.monotonic();
  const gap = items.length ? windowMs / items.length : 0;
  for (const [i, item] of items.entries()) {
    if (signal.aborted) return;
    const due = start + i * gap - clock.monotonic();
    if (due > 0) {
      try {
        await clock.sleep(due, signal);
      } catch {
        return;
      }
    }
    await fn(item);
  }
}
