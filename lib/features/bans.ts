/**
 * Bans, unbans and warnings in `run` (docs/client-interface.md rules 9–12): the ban list (fetched at hub_ready, every
 * `intervals.bans` and after every sanction; cached; the cache used while the service is unreachable), the kick at
 * connect and after every refresh, and the queue job that delivers the durable ban, unban and warning queues every
 * `intervals.queues`. A sanction just issued — in game, at the console, or by a one-shot command that handed its entry
 * over (lib/sanctions/handoff.ts) — is enforced from the queue at once (kick first, the list refreshed after) and
 * delivered before the rest of a round in progress, so a backlog after an outage delays nobody's ban. Sanctions that
 * one-shot commands delivered themselves (their "sanctions_changed" marker) refresh the list at once: watched where
 * possible, and checked every queue round. The chat and console commands are in sanction-commands.ts.
 */
import type { FeatureContext } from "../feature.ts";
import type { BanList } from "../api/client.ts";
import type { GamePlayer } from "../game/bridge.ts";
import type { Logger } from "../log.ts";
import {
  type BanEntry,
  type BanVerdict,
  type DeliveryOutcome,
  type PlayerRef,
  addListedBan,
  cachedBans,
  banCheck,
  banMessage,
  cachedBanLifts,
  changeTracker,
  deliverQueues,
  settleTime,
  AttemptClock,
  fetchBanList,
  liftBans,
  outcomeMessage,
  playerKey,
  playerLabel,
  queuedBanHolds,
  sameIdentifier,
  sanctionQueues,
  watchSanctionsChanged,
} from "../sanctions/index.ts";
import { DrainLog } from "../sanctions/drain.ts";
import { UsersAhead } from "../sanctions/user-ahead.ts";
import { type HandoffDesk, handoffDesk } from "./handoffs.ts";
import { listenKicks } from "./kick-line.ts";
import { type Sanctions, sanctionCommands } from "./sanction-commands.ts";
import { coalescing, serial } from "../serial.ts";

export interface BansOptions {
  /** Watch the store for sanctions changed by other processes (default true); the queue rounds check regardless. */
  watch?: boolean;
}

export function bans(agent: FeatureContext, opts: BansOptions = {}): void {
  const { store, config } = agent.deps;
  const log = agent.deps.logger.withTag("bans");
  const queues = sanctionQueues(store);
  // A refresh and a delivery round never overlap: a list fetched while an unban is being sent could still show the
  // ban after its queue entry is gone, and kick the player just unbanned.
  const exclusive = serial();
  const enforcement = banEnforcement(agent, log, exclusive);
  const { enforce, refresh } = enforcement;
  // The sends of all this run's rounds, on monotonic time: a lost answer settles in real time too.
  const attempts = new AttemptClock(() => agent.deps.clock.monotonic(), settleTime(config.api.timeout * 1000));
  const { deliverCoalesced, issued, desk } = sanctionDelivery(agent, log, exclusive, enforcement, attempts);

  const sanctions: Sanctions = {
    async deliverNow(target?: PlayerRef) {
      if (target) return issued(target);
      await deliverCoalesced();
      await refresh();
    },
  };

  // On hub_ply_connected, not player_connect: it runs beside the user lookup instead of after it, so a banned
  // player is refused from the cache even while the service does not answer (and it covers players online at start).
  agent.events.on("hub_ply_connected", ({ player }) => enforcement.connected(player));
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
      // Kick first, from the cached list and the queues: the refresh may wait for a service that does not answer.
      await enforce([...agent.players.values()]);
    }
    return m !== undefined;
  };
  agent.job(
    "sanction-queues",
    config.intervals.queues,
    async () => {
      const changed = await changedElsewhere();
      await desk.take();
      if ((await deliverCoalesced()) || changed) await refresh();
      await desk.sweep();
    },
    true,
  );
  if (opts.watch !== false && !agent.deps.once) {
    watchChanges(agent, changedElsewhere, refresh);
    void listenKicks(agent, log, enforcement.enforceAnnounced, desk.takeLine);
    void desk.accept();
  }
  // The index of the sanction queues agrees with them after any crash or an older version's writes (keyindex.ts).
  void agent.scheduler.run("sanction-index", async () => {
    for (const [name, q] of Object.entries(queues)) {
      const { added, removed } = await q.verifyIndex();
      if (added || removed) log.info(`the index of the ${name} queue was repaired`, { added, removed });
    }
  });
  sanctionCommands(agent, sanctions);
}

/** The ban list this run enforces, and the kicks (rule 9). */
interface BanEnforcement {
  /** The list in memory: the live one once fetched (`live`), the cached one until then. */
  list: BanList;
  live: boolean;
  /** Kicks each banned player of `players` with the ban message (their queued sanctions read through the index). */
  enforce(players: readonly GamePlayer[]): Promise<void>;
  /** A sanction just issued against `target`: enforced from the queue now, before anything asks the service. */
  enforceTarget(target: PlayerRef): Promise<void>;
  /** A ban a command beside `run` is about to queue (its kick line): its player kicked now, if it holds. */
  enforceAnnounced(ban: BanEntry): Promise<void>;
  /** A player connected: checked afresh, whatever kicks they had before. */
  connected(player: GamePlayer): Promise<void>;
  /** Rule 9: the live list (cached), else the cached one; then every online banned player is kicked. */
  refresh(): Promise<void>;
}

function banEnforcement(agent: FeatureContext, log: Logger, exclusive: ReturnType<typeof serial>): BanEnforcement {
  const { api, store, clock, config, messages, bridge } = agent.deps;
  // Enforcement must not wait for the service: the cached list is in memory before the first connect is checked.
  const cacheLoaded = cachedBans(store, clock.now())
    .then((cached) => {
      if (cached && !self.live) self.list = cached.data;
    })
    .catch((e: unknown) => log.error(`reading the cached ban list failed: ${(e as Error).message}`));

  // Kicks in flight or done, by player: a connect and a refresh racing must not kick twice. A new connect clears it;
  // a player still online a whole refresh interval later (the game ignored the kick) is kicked again. Monotonic
  // time: a wall clock set back an hour would leave that player on for the hour.
  const kicked = new Map<string, number>();
  /** Kicks a banned player with the ban message, at most once a refresh interval. */
  const kick = async (player: GamePlayer, verdict: Extract<BanVerdict, { banned: true }>) => {
    const last = kicked.get(player.id);
    if (last !== undefined && clock.monotonic() - last < config.intervals.bans * 1000) return;
    kicked.set(player.id, clock.monotonic());
    try {
      log.info("kicking a banned player", {
        player: player.name,
        id: player.id,
        ban: verdict.ban?.id ?? (verdict.queued?.id ? "queued" : "announced"),
      });
      await agent.refuse(player, banMessage(messages, verdict));
    } catch (e) {
      kicked.delete(player.id);
      log.error(`kicking ${player.name} failed: ${(e as Error).message}`, { id: player.id });
    }
  };

  /** The online players a sanction's target names. */
  const onlineAs = (target: PlayerRef) =>
    [...agent.players.values()].filter((p) => sameIdentifier(p.id, target.identifier));

  const self: BanEnforcement = {
    list: {},
    live: false,
    async enforce(players) {
      await cacheLoaded;
      if (!players.length) return;
      const check = await banCheck(
        store,
        self.list,
        clock.now(),
        players.map((p) => p.id),
      );
      for (const player of players) {
        const verdict = check(player.id);
        if (verdict.banned) await kick(player, verdict);
      }
    },
    enforceTarget(target) {
      return self.enforce(onlineAs(target));
    },
    async enforceAnnounced(ban) {
      if (!queuedBanHolds(ban, clock.now())) return;
      for (const player of onlineAs(ban.target)) await kick(player, { banned: true, queued: { data: ban } });
    },
    connected(player) {
      kicked.delete(player.id);
      return self.enforce([player]);
    },
    refresh: () =>
      exclusive(async () => {
        const r = await fetchBanList(api, store, agent.bundleId);
        if (r.source === "api") {
          self.list = r.list;
          self.live = true;
          log.debug("ban list refreshed", { players: Object.keys(r.list).length });
          if (r.notCached) log.warn(`the ban list is enforced but could not be cached (${r.notCached})`);
        } else {
          log.warn(
            `ban list not refreshed (${r.error}); enforcing the ${r.source === "cache" ? "cached" : "last known"} list`,
          );
          if (r.source === "cache" && !self.live) self.list = r.list;
        }
        await self.enforce((await bridge.status()).players);
      }),
  };
  return self;
}

/**
 * The delivery of the sanction queues: rounds of every entry, and the players whose sanctions were just issued
 * (`urgent`) served first; `issued` is what a new sanction goes through, and the desk answers commands' handed-over
 * ones.
 */
function sanctionDelivery(
  agent: FeatureContext,
  log: Logger,
  exclusive: ReturnType<typeof serial>,
  enforcement: BanEnforcement,
  attempts: AttemptClock,
) {
  // Players whose sanctions go before the rest of a round (by playerKey).
  const urgent = new Set<string>();
  /** Takes the urgent players (a round serves them). */
  const takeUrgent = () => {
    const keys = [...urgent];
    urgent.clear();
    return keys;
  };
  const lifts = cachedBanLifts(agent.deps.store, agent.deps.clock, agent.scheduler.signal);
  const ahead = new UsersAhead(agent.deps.api, () => agent.deps.clock.monotonic());
  const round = (onlyUrgent = false) =>
    exclusive(async (): Promise<boolean> => {
      const players = onlyUrgent ? new Set(takeUrgent()) : undefined;
      if (players && !players.size) return false;
      const report = (o: DeliveryOutcome) => reportOutcome(agent, log, enforcement, lifts, o);
      try {
        return await deliveryRound(agent, log, { players, attempts, ahead }, takeUrgent, desk, report);
      } finally {
        await lifts.settled(); // before the refresh after the round writes the cache
      }
    });

  /** Every queued entry; a command during a round asks for one more round after it, never a parallel one. */
  const deliverCoalesced = coalescing(
    () => round(),
    (a, b) => a || b,
  );

  /** The urgent players not served by a round in progress: rounds of theirs alone; true when one settled anything. */
  const expedite = coalescing(
    async () => {
      let settled = false;
      while (urgent.size && !agent.scheduler.stopped) settled = (await round(true)) || settled;
      return settled;
    },
    (a, b) => a || b,
  );
  /**
   * A sanction of `target` was just queued: enforced here now, then delivered before anything else (by a round in
   * progress, or one of its own), then the list refreshed (rule 9: after every ban or unban) if the service settled it:
   * once per sanction typed here, as before; for those handed over by commands, one refresh for all that come
   * during one (as their "sanctions changed" markers were), so a burst of commands does not queue a list per ban.
   */
  const issued = async (target: PlayerRef, refreshWith: () => Promise<void> = enforcement.refresh) => {
    // Its lookup at VyHub goes out now, beside the kick and the round's lock and reads (user-ahead.ts).
    ahead.ask(target);
    await enforcement.enforceTarget(target);
    urgent.add(playerKey(target));
    if (await expedite()) await refreshWith();
  };
  const refreshOnce = coalescing(enforcement.refresh);
  // Commands' handed-over sanctions: one refresh for a burst of them.
  const desk = handoffDesk(agent, (target) => issued(target, refreshOnce));
  return { deliverCoalesced, issued, desk };
}

/**
 * One round: every entry, or only `players`' (the urgent ones, taken when the round starts, not before: a round in
 * progress serves them meanwhile), `attempts` and `ahead` the run's. True when the service settled something.
 */
async function deliveryRound(
  agent: FeatureContext,
  log: Logger,
  { players, attempts, ahead }: { players: Set<string> | undefined; attempts: AttemptClock; ahead: UsersAhead },
  takeUrgent: () => string[],
  desk: HandoffDesk,
  report: (o: DeliveryOutcome) => Promise<void>,
): Promise<boolean> {
  const { api, store, clock, config } = agent.deps;
  const served = new Set(players);
  const startedAt = performance.now(); // the round's own players are read after this
  let ended: string | undefined;
  let settled = false;
  const drain = new DrainLog({ store, log, now: () => clock.now(), whole: !players });
  const r = await deliverQueues(
    { api, store, logger: log, now: () => clock.now(), settleMs: attempts.settleMs, attempts, usersAhead: ahead },
    {
      ...(players ? { players } : {}),
      urgent: () => {
        const keys = takeUrgent();
        for (const k of keys) served.add(k);
        return keys;
      },
      onServed: (key, listedAt) => desk.served(new Set([key]), { ended }, listedAt),
      maxPauseMs: config.intervals.queues * 1000,
      signal: agent.scheduler.signal,
      onListed: (n) => drain.listed(n),
      onPause: (e) => {
        if ("ms" in e) drain.tracker.paused(e.ms);
        else {
          ended = `the delivery round ended early: ${e.ended}`;
          drain.tracker.ended(e.ended);
          log.info(`the delivery round ends early: ${e.ended}; the rest stays queued for the next round`);
        }
      },
      collect: false,
      // The command waiting has its answer before the entry is settled (removed, logged).
      onKnown: (o) => desk.outcome(o),
      onOutcome: async (o) => {
        settled ||= o.result !== "kept";
        await desk.outcome(o);
        await report(o);
        drain.outcome(o.result !== "kept");
      },
    },
  ).catch(async (e: unknown) => {
    // A round that throws (the store failing) still answers the commands waiting for it, now, with why: else each
    // would wait out its own bound. Their entries stay queued; the scheduler logs the failure.
    const failed = `the delivery round failed (${(e as Error).message}); it stays queued for the next round`;
    await desk.served(served, { failed }, startedAt);
    throw e;
  });
  if (r.busy) log.info("another hub-agent process is delivering the sanction queues; trying again next round");
  await desk.served(served, { busy: r.busy, ended }, startedAt);
  await drain.done();
  return settled;
}

/** Tells the creator in game when online, else logs; keeps the in-memory list in step until the next refresh. */
async function reportOutcome(
  agent: FeatureContext,
  log: Logger,
  enforcement: BanEnforcement,
  lifts: ReturnType<typeof cachedBanLifts>,
  o: DeliveryOutcome,
): Promise<void> {
  const { messages, bridge } = agent.deps;
  const target = o.entry.data.target;
  if (o.result === "kept") {
    log.warn(`${o.kind} of ${playerLabel(target)} stays queued: ${o.error}`, {
      entry: o.entry.id,
      attempts: o.entry.attempts,
      ...(o.uncertain ? { uncertain: true } : {}),
    });
    return;
  }
  if (o.result === "delivered" && o.kind === "ban" && o.ban) addListedBan(enforcement.list, o.ban);
  if (o.kind === "unban" && o.result === "delivered" && target.identifier !== null) {
    // Until the refresh after the round, and in the cache a restart would enforce first (written in the background).
    liftBans(enforcement.list, target.identifier, o.entry.data.created_on, agent.deps.clock.now());
    lifts.lift(o.entry.data);
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
