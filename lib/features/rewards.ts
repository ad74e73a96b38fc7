/**
 * Rewards (docs/client-interface.md rule 14, §7.2 and the transitions of the executed queue).
 *
 * The applied rewards of online players are fetched with GET /packet/reward/applied/user and kept per player;
 * one run function takes the events and a user id (null: DIRECT/DISABLE over every user) and executes the matching
 * rewards. `once` rewards go through the durable executed queue (lib/rewards/executed.ts) so none runs twice;
 * rewards the game refuses back off and are given up (lib/rewards/failures.ts) instead of failing every round.
 * What one reward issues in the game, and how its outcome reads, is rewards-issue.ts.
 */
import type { FeatureContext } from "../feature.ts";
import {
  appliedRewardChunks,
  describeError,
  type AppliedReward,
  type AppliedRewardMap,
  type RewardEvent,
} from "../api/client.ts";
import type { GamePlayer } from "../game/bridge.ts";
import type { Logger } from "../log.ts";
import { ExecutedRewards } from "../rewards/executed.ts";
import { RewardFailures } from "../rewards/failures.ts";
import { following, serial } from "../serial.ts";
import { RewardIssuer, type Issued } from "./rewards-issue.ts";

/** What the timer runs (gmod: "DIRECT always includes DISABLE"); the only events allowed without a user. */
export const TIMER_EVENTS: readonly RewardEvent[] = ["DIRECT", "DISABLE"];

export const rewards = (agent: FeatureContext): void => new Rewards(agent).install();

export class Rewards {
  /** Applied rewards of online players by player id, with the number of the refresh that produced them (a player
   * who leaves is dropped: after their DISCONNECT rewards, and by the next round). `partial`: the answer left out an
   * unreadable item, maybe one of theirs, so a reward missing from `rewards` may still be listed. */
  private byPlayer = new Map<string, { refresh: number; rewards: AppliedReward[]; partial?: boolean }>();
  private executed: ExecutedRewards;
  private failures: RewardFailures;
  /** Runs are serialised: two triggers at once must not both pass the executed check for one reward. */
  private runs = serial();
  private issuer: RewardIssuer;
  private log: Logger;

  constructor(private agent: FeatureContext) {
    const { store, api, config, clock, logger } = agent.deps;
    this.log = logger.withTag("rewards");
    this.executed = new ExecutedRewards(store, api, config.api.server_id, clock, this.log);
    this.failures = new RewardFailures(store, config.intervals.rewards * 1000, clock, this.log);
    this.issuer = new RewardIssuer(agent, this.failures, this.log);
  }

  install(): void {
    const { agent } = this;
    const { intervals } = agent.deps.config;
    void agent.scheduler.run("rewards: executed queue", () => this.executed.load());
    agent.job("rewards", intervals.rewards, () => this.round(), true);
    // A run that executed `once` rewards reports them at once; this job sends what is left (failed PATCHes,
    // entries of a previous process), at start and every queue round.
    agent.job("reward-executed", intervals.queues, () => this.executed.flush(), true);
    agent.events.on("hub_ply_initialized", async ({ player, user, resumed }) => {
      // Like gmod: CONNECT rewards run from what is known even when this refresh fails.
      await this.refreshOnConnect(player);
      // Online before this run started and already in the previous run's player list: that run handled the
      // connect, so repeating rewards must not run again (every restart, every cron `run --once`). `once` ones
      // still may: the executed queue keeps them single, and one bought meanwhile is delivered.
      const seen = resumed && agent.previousOnline.has(player.id);
      if (seen) this.log.debug(`${player.name} was online during the previous run: only once CONNECT rewards run`);
      await this.run(["CONNECT"], user.id, { onceOnly: seen, player: player.id });
    });
    agent.onGame("player_spawn", (e) => this.runFor(e.player, "SPAWN"));
    agent.onGame("player_death", (e) => this.runFor(e.player, "DEATH"));
    agent.onGame("player_disconnect", async (e) => {
      const had = this.byPlayer.get(e.player.id);
      await this.runFor(e.player, "DISCONNECT");
      // Back meanwhile: the rewards now kept are the new connection's refresh.
      if (this.byPlayer.get(e.player.id) === had) this.byPlayer.delete(e.player.id);
    });
  }

  /** Players initialised while a connect refresh was in flight: the next one asks for all of them at once. */
  private connecting = new Map<string, GamePlayer>();
  private connectRefresh = following(() => {
    const batch = [...this.connecting.values()];
    this.connecting.clear();
    return this.refresh(batch);
  });

  /**
   * A connect's refresh. One player joining is one request for that user; a restart next to a full server, where
   * thousands are initialised one after another, asks for those waiting together (in chunks), not one by one.
   */
  private refreshOnConnect(player: GamePlayer): Promise<void> {
    this.connecting.set(player.id, player);
    return this.connectRefresh();
  }

  /** The timer: refresh every online player's rewards, then run DIRECT/DISABLE for all of them. */
  private async round(): Promise<void> {
    await this.refresh([...this.agent.players.values()], true);
    this.executed.forgetOffline(this.onlineUsers());
    await this.run(TIMER_EVENTS, null);
  }

  private onlineUsers(): Set<string> {
    const ids = new Set<string>();
    for (const id of this.agent.players.keys()) {
      const user = this.agent.users.get(id);
      if (user) ids.add(user.id);
    }
    return ids;
  }

  private async runFor(player: GamePlayer, event: RewardEvent): Promise<void> {
    const user = this.agent.users.get(player.id);
    if (user) await this.run([event], user.id, { player: player.id });
  }

  /**
   * Fetches the rewards of these players' users, in requests of at most MAX_URL_BYTES of URL (appliedRewardChunks),
   * each taking its turn at the pace. Each chunk's answer stands for its own players only: a chunk that fails leaves
   * its players' last known rewards as they were; one the network failed ends the refresh (the service is away, the
   * others would each wait as long). With `all`, players no longer online are forgotten. A refresh
   * that started before a newer one finished never overwrites the newer result.
   */
  private async refresh(players: readonly GamePlayer[], all = false): Promise<void> {
    const { api, config } = this.agent.deps;
    const playerOf = new Map<string, string>();
    for (const p of players) {
      const user = this.agent.users.get(p.id);
      if (user) playerOf.set(user.id, p.id);
    }
    if (all) for (const id of this.byPlayer.keys()) if (!this.agent.players.has(id)) this.byPlayer.delete(id);
    if (!playerOf.size) return;
    const refresh = this.executed.refreshStarted();
    try {
      const q = { bundleId: this.agent.bundleId, serverId: config.api.server_id };
      const chunks = appliedRewardChunks(config.api.url, { ...q, userIds: [...playerOf.keys()] });
      let missed = 0;
      let error = "";
      for (const [i, userIds] of chunks.entries()) {
        await this.agent.pace.take(this.agent.scheduler.signal);
        const res = await api.getAppliedRewards({ ...q, userIds });
        if (res.ok) {
          this.apply(refresh, userIds, playerOf, res.value, (res.skipped ?? 0) > 0);
          continue;
        }
        missed += userIds.length;
        error ||= describeError(res.error);
        // The service away: every other chunk would wait out its own timeouts and retries the same way.
        if (res.error.kind === "Network") {
          for (const rest of chunks.slice(i + 1)) missed += rest.length;
          break;
        }
      }
      if (missed)
        this.log.warn(
          `applied rewards not refreshed${chunks.length > 1 ? ` for ${missed} of ${playerOf.size} players` : ""}: ${error}`,
        );
    } finally {
      this.executed.refreshEnded(refresh);
    }
  }

  /** One chunk's answer: the rewards of exactly these users (none listed: none open, unless `partial`). */
  private apply(
    refresh: number,
    userIds: readonly string[],
    playerOf: Map<string, string>,
    value: AppliedRewardMap,
    partial: boolean,
  ) {
    // The map is keyed by game identifier; each reward also names its user, which is what was asked for.
    const found = new Map<string, AppliedReward[]>();
    for (const list of Object.values(value))
      for (const r of list) found.set(r.user.id, [...(found.get(r.user.id) ?? []), r]);
    for (const userId of userIds) {
      const playerId = playerOf.get(userId);
      if (playerId === undefined || !this.agent.players.has(playerId)) continue;
      if ((this.byPlayer.get(playerId)?.refresh ?? 0) > refresh) continue;
      this.byPlayer.set(playerId, { refresh, rewards: found.get(userId) ?? [], ...(partial ? { partial } : {}) });
    }
    this.executed.refreshed(refresh, new Set(userIds));
  }

  /**
   * The spec's run function: executes the known rewards whose on_event is in `events`, for one user or (null)
   * for every online user. Only DIRECT and DISABLE may run without a user. `player`: the player whose event it is,
   * so that a user's run looks at that player alone instead of every online one.
   */
  run(
    events: readonly RewardEvent[],
    userId: string | null,
    opts: { onceOnly?: boolean; player?: string } = {},
  ): Promise<void> {
    if (userId === null && events.some((e) => !TIMER_EVENTS.includes(e)))
      throw new Error(`rewards: ${events.join(", ")} need a user; only DIRECT and DISABLE run for every user`);
    return this.runs(() => this.runNow(events, userId, opts.onceOnly ?? false, opts.player));
  }

  private async runNow(
    events: readonly RewardEvent[],
    userId: string | null,
    onceOnly: boolean,
    only?: string,
  ): Promise<void> {
    await this.executed.load();
    // The timer round re-reads the refusals (an operator may have dropped one) and forgets those of vanished rewards.
    await this.failures.load(userId === null);
    if (userId === null) await this.failures.forgetGone(this.listed());
    const matching: { player: GamePlayer; rewards: AppliedReward[] }[] = [];
    const known = only === undefined ? this.byPlayer : [[only, this.byPlayer.get(only)] as const];
    for (const [playerId, entry] of known) {
      if (!entry) continue;
      const { rewards } = entry;
      const player = this.agent.players.get(playerId);
      if (!player) continue;
      if (userId !== null && this.agent.users.get(playerId)?.id !== userId) continue;
      const list = rewards.filter((r) => events.includes(r.reward.on_event) && (r.reward.once || !onceOnly));
      if (list.length) matching.push({ player, rewards: list });
    }
    // Rule 2 asks the durable queue, not only this process's memory of it: read before any `once` reward runs.
    if (matching.some((m) => m.rewards.some((r) => r.reward.once))) await this.executed.sync();
    let claimed = false;
    for (const { player, rewards } of matching) {
      const due = rewards
        .filter((r) => !this.executed.has(r.id) && !this.failures.blocked(r.id))
        .sort((a, b) => (a.reward.order ?? 0) - (b.reward.order ?? 0));
      for (const reward of due) {
        // Checked again, against the latest listing: an earlier reward of this loop may share the id (a duplicate in
        // the response), and while this run awaited (the queue's re-read, an earlier reward), a refresh newer than a
        // report may have ended the report's "never again" (ExecutedRewards.refreshed): it lists the reward no more,
        // but `due` was taken from the listing before it.
        if (this.executed.has(reward.id) || !this.listedNow(player.id, reward.id)) continue;
        try {
          if ((await this.execute(reward, player)) === "yes" && reward.reward.once) claimed = true;
        } catch (e) {
          this.log.error(`reward ${reward.id} failed: ${(e as Error).message}`, { applied_reward_id: reward.id });
        }
      }
    }
    // Reported right away (not awaited: a slow PATCH must not hold up the next run).
    if (claimed) void this.agent.scheduler.run("reward-executed", () => this.executed.flush());
  }

  /** Whether the newest listing of this player's rewards still holds this one. */
  private listedNow(playerId: string, rewardId: string): boolean {
    return this.byPlayer.get(playerId)?.rewards.some((r) => r.id === rewardId) ?? false;
  }

  /** The reward ids of the last listing of each online user; not of one that left an unreadable item out. */
  private listed(): Map<string, Set<string>> {
    const listed = new Map<string, Set<string>>();
    for (const [playerId, { rewards, partial }] of this.byPlayer) {
      const user = this.agent.users.get(playerId);
      if (user && !partial) listed.set(user.id, new Set(rewards.map((r) => r.id)));
    }
    return listed;
  }

  /** Rule 4 (COMMAND / SCRIPT) and rule 5 (`once` → executed queue before anything is issued). */
  private async execute(reward: AppliedReward, player: GamePlayer): Promise<Issued> {
    const { type, once, name, on_event } = reward.reward;
    const action = this.issuer.prepare(reward, player);
    if (!action) return "no";
    const entry = once
      ? await this.executed.claim({
          id: reward.id,
          user_id: reward.user.id,
          player_id: player.id,
          player: player.name,
          reward: name,
          packet: reward.applied_packet.packet.title,
        })
      : undefined;
    let issued: Issued = "no";
    try {
      issued = await action();
    } finally {
      // "maybe": never run again; flagged for the operator and reported, like a crash in that instant.
      if (entry && issued === "maybe") await this.executed.abandon(entry, "the game's console did not answer");
      else if (entry) await this.executed.settle(entry, issued === "yes");
    }
    if (issued === "maybe" && !once)
      this.log.warn(
        `reward ${reward.id} (${name}) for ${player.name} may not have been delivered: the game's console did not answer`,
        { applied_reward_id: reward.id },
      );
    if (issued !== "yes") return issued;
    await this.failures.forget(reward.id);

    const { messages } = this.agent.deps;
    const packet = reward.applied_packet.packet.title;
    // Named as the operator's other reward lines name it; `packet` stays for language files that still use it.
    const line = messages.t("reward.executed_operator", {
      reward_id: reward.id,
      reward: reward.reward.name,
      packet,
      player: player.name,
    });
    if (once) {
      this.log.info(line, { applied_reward_id: reward.id, type, on_event, player_id: player.id });
      // A reward that repeats (every spawn, every minute) is not announced each time; nobody reads a leaver's chat.
      if (on_event !== "DISCONNECT")
        await this.agent.deps.bridge
          .message(player, messages.t("reward.executed", { packet }))
          .catch((e: unknown) => this.log.debug(`reward message not shown: ${(e as Error).message}`));
    } else this.log.debug(line, { applied_reward_id: reward.id, type, on_event });
    return issued;
  }
}
