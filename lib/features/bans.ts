/**
 * Bans, unbans and warnings in `run` (docs/client-interface.md rules 9–12): the ban list (fetched at hub_ready, every
 * `intervals.bans` and after every sanction; cached; the cache used while the service is unreachable), the kick at
 * connect and after every refresh, and the queue job that delivers the durable ban, unban and warning queues every
 * `intervals.queues`. Sanctions that one-shot CLI processes queued or delivered (their "sanctions_changed" marker)
 * refresh the list at once: watched where possible, and checked every queue round. The chat and console commands
 * are in sanction-commands.ts.
 */
import type { FeatureContext } from "../feature.ts";
import type { BanList, BanReduced } from "../api/client.ts";
import type { GamePlayer } from "../game/bridge.ts";
import {
  type DeliveryOutcome,
  banCache,
  banCheck,
  banMessage,
  changeTracker,
  deliverQueues,
  settleTime,
  fetchBanList,
  outcomeMessage,
  playerLabel,
  sameIdentifier,
  watchSanctionsChanged,
} from "../sanctions/index.ts";
import { type Sanctions, sanctionCommands } from "./sanction-commands.ts";
import { coalescing, serial } from "../serial.ts";

export interface BansOptions {
  /** Watch the store for sanctions changed by other processes (default true); the queue rounds check regardless. */
  watch?: boolean;
}

export function bans(agent: FeatureContext, opts: BansOptions = {}): void {
  const { api, store, clock, config, messages, bridge, logger } = agent.deps;
  const log = logger.withTag("bans");
  let list: BanList = {};
  let live = false;

  // Enforcement must not wait for the service: the cached list is in memory before the first connect is checked.
  const cacheLoaded = banCache(store)
    .get()
    .then((cached) => {
      if (cached && !live) list = cached.data;
    })
    .catch((e: unknown) => log.error(`reading the cached ban list failed: ${(e as Error).message}`));

  // Kicks in flight or done, by player: a connect and a refresh racing must not kick twice. A new connect clears it;
  // a player still online a whole refresh interval later (the game ignored the kick) is kicked again.
  const kicked = new Map<string, number>();
  /** Kicks each banned player of `players` with the ban message. */
  const enforce = async (players: readonly GamePlayer[]) => {
    await cacheLoaded;
    const check = await banCheck(store, list, clock.now());
    for (const player of players) {
      const verdict = check(player.id);
      if (!verdict.banned) continue;
      const last = kicked.get(player.id);
      if (last !== undefined && clock.now() - last < config.intervals.bans * 1000) continue;
      kicked.set(player.id, clock.now());
      try {
        log.info("kicking a banned player", { player: player.name, id: player.id, ban: verdict.ban?.id ?? "queued" });
        await agent.refuse(player, banMessage(messages, verdict));
      } catch (e) {
        kicked.delete(player.id);
        log.error(`kicking ${player.name} failed: ${(e as Error).message}`, { id: player.id });
      }
    }
  };

  // A refresh and a delivery round never overlap: a list fetched while an unban is being sent could still show the
  // ban after its queue entry is gone, and kick the player just unbanned.
  const exclusive = serial();

  /** Rule 9: the live list (cached), else the cached one; then every online banned player is kicked. */
  const refresh = () =>
    exclusive(async () => {
      const r = await fetchBanList(api, store, agent.bundleId);
      if (r.source === "api") {
        list = r.list;
        live = true;
        log.debug("ban list refreshed", { players: Object.keys(r.list).length });
      } else {
        log.warn(
          `ban list not refreshed (${r.error}); enforcing the ${r.source === "cache" ? "cached" : "last known"} list`,
        );
        if (r.source === "cache" && !live) list = r.list;
      }
      await enforce((await bridge.status()).players);
    });

  /** Tells the creator in game when online, else logs; keeps the in-memory list in step until the next refresh. */
  const report = async (o: DeliveryOutcome) => {
    const target = o.entry.data.target;
    if (o.result === "kept") {
      log.warn(`${o.kind} of ${playerLabel(target)} stays queued: ${o.error}`, {
        entry: o.entry.id,
        attempts: o.entry.attempts,
        ...(o.uncertain ? { uncertain: true } : {}),
      });
      return;
    }
    if (o.result === "delivered" && o.kind === "ban" && o.ban) {
      const id = o.ban.user.identifier;
      list = { ...list, [id]: [...(list[id] ?? []), o.ban] };
    }
    const unbanned = o.kind === "unban" && o.result === "delivered" && !o.nothingToLift ? target.identifier : null;
    if (unbanned !== null) {
      // Until the refresh after the round: the bans the unban lifted (issued up to it) go; later ones stay.
      const at = Date.parse(o.entry.data.created_on);
      const keep = (b: BanReduced) => Date.parse(b.created_on) > at;
      list = Object.fromEntries(
        Object.entries(list).map(([id, bans]) => [id, sameIdentifier(id, unbanned) ? bans.filter(keep) : bans]),
      );
    }
    if (o.result === "delivered" && o.kind === "warning") {
      const warned = target.identifier === null ? undefined : agent.players.get(target.identifier);
      const creator = o.entry.data.creator?.name || messages.t("ban.console");
      if (warned) await bridge.message(warned, messages.t("warn.received", { creator, reason: o.entry.data.reason }));
    }
    const text = outcomeMessage(messages, o);
    if (!text) return;
    const creator = o.kind === "unban" ? o.entry.data.processor : o.entry.data.creator;
    const online = creator?.identifier ? agent.players.get(creator.identifier) : undefined;
    if (online) await bridge.message(online, text);
    log.info(text, { entry: o.entry.id, result: o.result, creator: creator?.name ?? "console" });
  };

  /** One round; true when the service settled something (so the ban list may have changed). */
  const deliverRound = () =>
    exclusive(async (): Promise<boolean> => {
      const settleMs = settleTime(config.api.timeout * 1000);
      const r = await deliverQueues(
        { api, store, logger: log, now: () => clock.now(), settleMs },
        { onOutcome: report },
      );
      if (r.busy) log.info("another hub-agent process is delivering the sanction queues; trying again next round");
      return r.outcomes.some((o) => o.result !== "kept");
    });

  // A command during a round asks for one more round after it, never a parallel one; settled if any round settled.
  const deliverCoalesced = coalescing(deliverRound, (a, b) => a || b);

  const sanctions: Sanctions = {
    async deliverNow() {
      await deliverCoalesced();
      await refresh();
    },
  };

  // On hub_ply_connected, not player_connect: it runs beside the user lookup instead of after it, so a banned
  // player is refused from the cache even while the service does not answer (and it covers players online at start).
  agent.events.on("hub_ply_connected", ({ player }) => {
    kicked.delete(player.id);
    return enforce([player]);
  });
  agent.job("bans", config.intervals.bans, refresh, true);
  // A CLI ban or unban while `run` runs: its marker says the list changed (an unban must stop the kicks now).
  const tracker = changeTracker(store);
  const changedElsewhere = async () => {
    const m = await tracker.changed();
    if (m) {
      log.info("another hub-agent process changed the sanctions: refreshing the ban list", {
        pid: m.pid,
        kinds: m.kinds.join(","),
      });
    }
    return m !== undefined;
  };
  agent.job(
    "sanction-queues",
    config.intervals.queues,
    async () => {
      const changed = await changedElsewhere();
      if ((await deliverCoalesced()) || changed) await refresh();
    },
    true,
  );
  if (opts.watch !== false && !agent.deps.once) watchChanges(agent, changedElsewhere, refresh);
  sanctionCommands(agent, sanctions);
}

/** Reacts to the marker file at once (coalesced: events during a check ask for one more check, not a parallel one). */
function watchChanges(agent: FeatureContext, changed: () => Promise<boolean>, refresh: () => Promise<void>): void {
  const { scheduler } = agent;
  const checkNow = coalescing(async () => {
    if (!scheduler.stopped && (await changed())) await refresh();
  });
  const check = () => {
    if (!scheduler.stopped) void scheduler.run("sanctions-changed", checkNow);
  };
  const closing = watchSanctionsChanged(agent.deps.store, check, agent.deps.logger.withTag("bans"));
  scheduler.signal.addEventListener("abort", () => void closing.then((close) => close()), { once: true });
}
