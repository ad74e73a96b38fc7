/**
 * The executed queue of `once` rewards (docs/client-interface.md §5, transitions "reward open" → "reward id in executed
 * queue" → removed; Events, execution rules 2, 5, 6).
 *
 * An id is written to the durable queue *before* its command is issued, and marked `issued` after: a crash in
 * between can lose a reward's delivery but never run it twice. Such an entry (claimed, never marked issued, and
 * not being issued by this process) is flagged `interrupted` for the operator, once; it is reported like the others,
 * and then kept (`reported`) so that `queue status` lists it until the operator, having checked the game, drops
 * it. Only one `run` uses a store at a time (the instance lock), so an unsettled entry found at start was left by
 * a process that is gone.
 *
 * Ids are reported with PATCH executed_on; after a successful PATCH the id is remembered in memory until a reward
 * refresh of that user that started after the PATCH, since a refresh already in flight may still list the reward
 * as open. An id whose PATCH VyHub refuses (4xx) stays in the queue marked `refused`: the service still lists the
 * reward as open, so forgetting the id (even at a restart) would run it again. The operator sees it in
 * `queue status` and either reports it again (`queue retry`) or lets the reward run again (`queue drop --force`).
 */
import * as v from "valibot";
import { describeError, isAcceptedWrite, isRejected, type ApiResult, type Api } from "../api/client.ts";
import type { Clock } from "../clock.ts";
import type { Logger } from "../log.ts";
import type { Queue, QueueEntry, Store } from "../store/index.ts";
import { coalescing } from "../serial.ts";
import { EXECUTED_QUEUE, type ExecutedReward, ExecutedRewardSchema, awaitsReport } from "./executed-entry.ts";

export { EXECUTED_QUEUE, ExecutedRewardSchema, type ExecutedReward, awaitsReport } from "./executed-entry.ts";

export type PatchOutcome = "sent" | "refused" | "retry";

/** Success removes the id; a refusal (4xx other than 429) marks it refused; anything else is retried next round. */
export function patchOutcome(res: ApiResult<unknown>): PatchOutcome {
  if (res.ok || isAcceptedWrite(res.error)) return "sent";
  return isRejected(res.error) ? "refused" : "retry";
}

/** The update that keeps a refused report in the queue (`run` and `queue retry` alike). */
function refusedUpdate(
  entry: QueueEntry<ExecutedReward>,
  error: string,
  now: number,
): Partial<QueueEntry<ExecutedReward>> {
  return {
    data: { ...entry.data, refused: true },
    attempts: entry.attempts + 1,
    lastAttemptAt: now,
    lastError: error,
  };
}

/** After VyHub took the report (`run` and `queue retry` alike): removed, or kept as reported when interrupted. */
async function reportTaken(queue: Queue<ExecutedReward>, entry: QueueEntry<ExecutedReward>): Promise<void> {
  if (entry.data.interrupted)
    await queue.update(entry.id, { data: { ...entry.data, reported: true }, lastError: undefined });
  else await queue.remove(entry.id);
}

/**
 * Reports one entry (PATCH executed_on with this server) and records VyHub's answer in the queue: taken (removed,
 * or kept as reported when interrupted), refused (kept as refused), or to retry (attempt counted). `run`'s rounds
 * and `queue retry` alike. `stop`: the service is away or throttling, so the rest of a round would fail the same way.
 */
export async function reportEntry(
  api: Api,
  queue: Queue<ExecutedReward>,
  serverId: string,
  entry: QueueEntry<ExecutedReward>,
  now: number,
): Promise<{ outcome: PatchOutcome; error?: string; stop: boolean }> {
  const res = await api.markRewardExecuted(entry.data.id, [serverId]);
  const outcome = patchOutcome(res);
  const error = res.ok ? undefined : describeError(res.error);
  if (outcome === "retry")
    await queue.update(entry.id, { attempts: entry.attempts + 1, lastAttemptAt: now, lastError: error ?? "" });
  else if (outcome === "refused") await queue.update(entry.id, refusedUpdate(entry, error ?? "", now));
  else await reportTaken(queue, entry);
  const stop = !res.ok && (res.error.kind === "Network" || res.error.kind === "RateLimited");
  return { outcome, ...(error !== undefined ? { error } : {}), stop };
}

/**
 * `queue retry` of a reward report: reported now by the same rules as `run`'s rounds, unless it can't or mustn't be.
 * `reported`: already taken, kept until the operator drops it; `not_issued`: its command is not known to have been
 * issued (`run` may be issuing it now; reporting it first could lose the reward).
 */
export async function retryReport(
  api: Api,
  queue: Queue<ExecutedReward>,
  serverId: string,
  entry: QueueEntry<unknown>,
  now: number,
): Promise<
  | { kind: "unreadable" | "reported" | "not_issued"; reward?: ExecutedReward }
  | { kind: PatchOutcome; reward: ExecutedReward; error?: string }
> {
  const parsed = v.safeParse(ExecutedRewardSchema, entry.data);
  if (!parsed.success) return { kind: "unreadable" };
  const reward = parsed.output;
  if (reward.reported) return { kind: "reported", reward };
  if (!reward.issued && !reward.interrupted) return { kind: "not_issued", reward };
  const { outcome, error } = await reportEntry(api, queue, serverId, { ...entry, data: reward }, now);
  return { kind: outcome, reward, ...(error !== undefined ? { error } : {}) };
}

/** What an operator is told about an interrupted reward, in the log and in `queue status`. */
export const interruptedAdvice = (entryId: string, reported: boolean) =>
  `it counts as executed (never run twice): check the game and give it by hand if it is missing; ${reported ? "then" : "once reported (`run` sends it),"} \`hub-agent queue drop ${entryId}\``;

export class ExecutedRewards {
  private queue: Queue<ExecutedReward>;
  /** Applied reward id → its entry id and user: the durable list as last read, plus this process's claims. */
  private queued = new Map<string, { entry: string; userId: string }>();
  /**
   * Applied reward ids this process claims or issues: not flagged nor reported before the bridge answered. By the
   * reward's id, known before its entry is written: the entry file is listable before its write returns (the folder's
   * flush), and a report round that saw it then would flag it and report it before the game had it.
   */
  private issuing = new Set<string>();
  /** Claims of rewards that did not run whose removal failed (applied reward id → entry id): see unclaim. */
  private unrun = new Map<string, string>();
  /** Reported ids, by user, with the number of refreshes started before the PATCH returned. */
  private remembered = new Map<string, { userId: string; refreshesBefore: number }>();
  private refreshesStarted = 0;
  /** Refreshes started and not ended. */
  private inflight = new Set<number>();
  private loaded: Promise<void> | undefined;
  private rounds = coalescing(() => this.sendAll());

  constructor(
    store: Store,
    private api: Api,
    private serverId: string,
    private clock: Clock,
    private log: Logger,
  ) {
    this.queue = store.queue(EXECUTED_QUEUE, ExecutedRewardSchema);
  }

  /** Reads the durable queue once; entries a crash interrupted are flagged as possibly not delivered. */
  load(): Promise<void> {
    this.loaded ??= (async () => {
      for (const entry of await this.read()) await this.flagUnsettled(entry);
    })().catch((e: unknown) => {
      this.loaded = undefined; // tried again by the next run: nothing runs before the queue is known
      throw e;
    });
    return this.loaded;
  }

  /**
   * Re-reads the durable queue (before `once` rewards run: rule 2 asks the durable list, not only memory). An id
   * that left it without this process reporting it (`queue retry` reported it, or `queue drop` removed it) is
   * remembered until the next refresh: VyHub then says whether it is still open.
   */
  async sync(): Promise<void> {
    await this.load();
    const before = this.queued;
    await this.read();
    for (const [id, { userId }] of before)
      if (!this.queued.has(id)) this.remembered.set(id, { userId, refreshesBefore: this.refreshesStarted });
  }

  /** The durable list, mirrored into `queued` (with this process's claims, which are in it anyway). */
  private async read(): Promise<QueueEntry<ExecutedReward>[]> {
    const entries = await this.queue.list();
    const queued = new Map(entries.map((e) => [e.data.id, { entry: e.id, userId: e.data.user_id }]));
    for (const [id, q] of this.queued) if (this.issuing.has(id)) queued.set(id, q);
    this.queued = queued;
    return entries;
  }

  /**
   * Claimed, never marked issued, and not being issued here: the process that claimed it stopped in between (or
   * could not write the settlement). Flagged durably, then told once. undefined: the entry is gone (a refused
   * command's claim settled meanwhile, or dropped): nothing to report, or VyHub would count a reward never run.
   */
  private async flagUnsettled(entry: QueueEntry<ExecutedReward>): Promise<QueueEntry<ExecutedReward> | undefined> {
    const unsettled = !entry.data.issued && !entry.data.interrupted && !this.issuing.has(entry.data.id);
    return unsettled ? this.flag(entry, "hub-agent stopped while issuing it") : entry;
  }

  /**
   * Marks the claim interrupted (it never runs again, and is reported) and tells the operator why, once. Written only
   * if the stored claim is still unsettled: `entry` may be a moment old, and a settle of this process may have marked
   * it issued since (it leaves `issuing` only after its write); then the stored entry is returned, unflagged.
   */
  private async flag(entry: QueueEntry<ExecutedReward>, why: string): Promise<QueueEntry<ExecutedReward> | undefined> {
    const flagged = await this.queue.update(
      entry.id,
      { data: { ...entry.data, interrupted: true } },
      (stored) => !stored.data.issued && !stored.data.interrupted,
    );
    // Settled meanwhile, or removed (`queue drop --force`, a refused command's claim): as it is now, if at all.
    if (!flagged) return this.queue.get(entry.id);
    const { id, reward, packet, player, player_id } = entry.data;
    this.log.warn(
      `reward ${id} (${reward}, ${packet}) for ${player} may not have been delivered: ${why}; ${interruptedAdvice(entry.id, false)}`,
      { applied_reward_id: id, player_id, entry_id: entry.id },
    );
    return flagged;
  }

  /** Rule 2 and the "never again" of the transitions: queued (refused ones too), or reported but not yet refreshed. */
  has(appliedRewardId: string): boolean {
    return this.queued.has(appliedRewardId) || this.remembered.has(appliedRewardId);
  }

  /** Writes the id durably; only then may the command be issued. */
  async claim(data: Omit<ExecutedReward, "issued">): Promise<QueueEntry<ExecutedReward>> {
    this.issuing.add(data.id);
    try {
      const entry = await this.queue.add({ ...data, issued: false });
      this.queued.set(data.id, { entry: entry.id, userId: data.user_id });
      return entry;
    } catch (e) {
      this.issuing.delete(data.id);
      throw e;
    }
  }

  /**
   * The command may or may not have run (written, its reply lost): flagged as interrupted like a crash in that
   * instant; it never runs again, and is reported.
   */
  async abandon(entry: QueueEntry<ExecutedReward>, why: string): Promise<void> {
    try {
      await this.flag(entry, why);
    } finally {
      this.issuing.delete(entry.data.id);
    }
  }

  /** After issuing: `ran` false (the bridge took nothing) forgets the claim so the reward runs again later. */
  async settle(entry: QueueEntry<ExecutedReward>, ran: boolean): Promise<void> {
    if (!ran) return this.unclaim(entry.data.id, entry.id);
    try {
      await this.queue.update(entry.id, { data: { ...entry.data, issued: true } });
    } finally {
      this.issuing.delete(entry.data.id);
    }
  }

  /**
   * Removes the claim of a reward that did not run. If the disk refuses, the claim stays known as not run (never
   * flagged nor reported, which would count a reward never given as executed) and the removal is tried again at
   * each report round; until then the reward does not run again either.
   */
  private async unclaim(rewardId: string, entryId: string): Promise<void> {
    try {
      await this.queue.remove(entryId);
    } catch (e) {
      this.unrun.set(rewardId, entryId);
      throw e;
    }
    this.unrun.delete(rewardId);
    this.queued.delete(rewardId);
    this.issuing.delete(rewardId);
  }

  /** A reward refresh begins; pass the returned number to `refreshed` when it succeeded, and to `refreshEnded`. */
  refreshStarted(): number {
    this.inflight.add(++this.refreshesStarted);
    return this.refreshesStarted;
  }

  /** The refresh ended, successfully or not: no answer of it can arrive any more. */
  refreshEnded(refresh: number): void {
    this.inflight.delete(refresh);
  }

  /**
   * Forgets the reported ids of users not online (`online`: their user ids) once no refresh that started before
   * the PATCH is still in flight: only such a refresh could still list the reward, and a user who comes back is
   * refreshed anew (by a refresh that started after the PATCH) before anything of theirs runs. Bounds the memory
   * to the online players' rewards reported within about one rewards round.
   */
  forgetOffline(online: ReadonlySet<string>): void {
    const oldest = Math.min(...this.inflight);
    for (const [id, r] of this.remembered)
      if (!online.has(r.userId) && r.refreshesBefore < oldest) this.remembered.delete(id);
  }

  /** Reported ids remembered (tests; docs/scale.md §3). */
  get rememberedSize(): number {
    return this.remembered.size;
  }

  /** A refresh of these users succeeded: ids reported before it started are now hidden by the service. */
  refreshed(refresh: number, userIds: ReadonlySet<string>): void {
    for (const [id, r] of this.remembered) {
      if (userIds.has(r.userId) && refresh > r.refreshesBefore) this.remembered.delete(id);
    }
  }

  /**
   * One PATCH round over the queue. Rounds never overlap: a call during one gets the next round, which callers
   * arriving meanwhile share (it sees every entry they added).
   */
  flush(): Promise<void> {
    return this.rounds();
  }

  get size(): number {
    return this.queued.size;
  }

  private async sendAll(): Promise<void> {
    await this.load();
    for (const [rewardId, entryId] of this.unrun) await this.unclaim(rewardId, entryId).catch(() => {});
    for (const listed of await this.queue.list()) {
      if (this.issuing.has(listed.data.id) || !awaitsReport(listed.data)) continue;
      // Read again: a round reports one entry after another, and one dropped meanwhile (`queue drop --force`: run it
      // again) must not be reported from the listing, or VyHub would stop listing a reward meant to run again.
      const current = await this.queue.get(listed.id);
      const entry = current && (await this.flagUnsettled(current));
      if (!entry) continue;
      const {
        outcome,
        error = "",
        stop,
      } = await reportEntry(this.api, this.queue, this.serverId, entry, this.clock.now());
      const { id, user_id, reward, player } = entry.data;
      if (outcome === "retry") {
        this.log.warn(`reward ${id} not reported as executed yet, retrying next round: ${error}`, {
          applied_reward_id: id,
        });
        if (stop) return;
        continue;
      }
      if (outcome === "refused") {
        this.log.error(
          `VyHub refused to mark reward ${id} (${reward} for ${player}) as executed: ${error}. Kept in the queue as refused, so it never runs again; once the cause is fixed, \`hub-agent queue retry ${entry.id}\` reports it again (or \`queue drop --force\` lets it run again)`,
          { applied_reward_id: id },
        );
        continue;
      }
      this.log.debug(`reward ${id} reported as executed`, { applied_reward_id: id });
      if (entry.data.interrupted) continue; // stays listed (and never runs) until the operator drops it
      this.remembered.set(id, { userId: user_id, refreshesBefore: this.refreshesStarted });
      this.queued.delete(id);
    }
  }
}
