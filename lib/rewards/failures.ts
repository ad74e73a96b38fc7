/**
 * Rewards the game refused (docs/pitfalls.md, pitfall 4: gmod retries a whitelist-refused command every round
 * forever). One durable queue entry per applied reward id counts the refusals: the next try waits 1, 2, 4, 8
 * rounds after the last, and the GIVE_UP_AFTER-th refusal gives up with one error line. The entries show in
 * `queue status`; `queue drop` clears one, so the reward is tried again at its next trigger. A success, or the
 * service no longer listing the reward (in an answer that left no unreadable item out), removes the entry.
 */
import * as v from "valibot";
import type { Clock } from "../clock.ts";
import type { Logger } from "../log.ts";
import type { Queue, QueueEntry, Store } from "../store/index.ts";

export const FAILED_QUEUE = "reward_failed";
export const GIVE_UP_AFTER = 5;

export const FailedRewardSchema = v.object({
  /** The applied reward id. */
  id: v.string(),
  user_id: v.string(),
  /** The nick at the last refusal, for operators reading `queue status`. */
  player: v.string(),
  reward: v.string(),
  packet: v.string(),
});
export type FailedReward = v.InferOutput<typeof FailedRewardSchema>;

/** Milliseconds after the last refusal before the next try: one round after the first, doubling after each. */
export const backoffMs = (refusals: number, roundMs: number): number => roundMs * 2 ** Math.max(0, refusals - 1);

export const gaveUp = (entry: Pick<QueueEntry<unknown>, "attempts">): boolean => entry.attempts >= GIVE_UP_AFTER;

export class RewardFailures {
  private queue: Queue<FailedReward>;
  /** Applied reward id → its entry: the durable list, mirrored in memory. */
  private byId = new Map<string, QueueEntry<FailedReward>>();
  private loaded = false;

  constructor(
    store: Store,
    private roundMs: number,
    private clock: Clock,
    private log: Logger,
  ) {
    this.queue = store.queue(FAILED_QUEUE, FailedRewardSchema);
  }

  /** Reads the queue (at the first run, then every timer round: an entry an operator dropped is tried again). */
  async load(again = false): Promise<void> {
    if (this.loaded && !again) return;
    const now = this.clock.now();
    const entries: QueueEntry<FailedReward>[] = [];
    for (const e of await this.queue.list()) {
      // A refusal dated in the future (the clock set back since) backs off from now, not until the clock catches up.
      const moved = (e.lastAttemptAt ?? 0) > now ? await this.queue.update(e.id, { lastAttemptAt: now }) : e;
      if (moved) entries.push(moved);
    }
    this.byId = new Map(entries.map((e) => [e.data.id, e]));
    this.loaded = true;
  }

  /** Not to be tried now: given up, or still waiting after its last refusal. */
  blocked(appliedRewardId: string): boolean {
    const e = this.byId.get(appliedRewardId);
    if (!e) return false;
    if (gaveUp(e)) return true;
    return this.clock.now() < (e.lastAttemptAt ?? 0) + backoffMs(e.attempts, this.roundMs);
  }

  /** The game refused the reward's command (or script) before anything ran. */
  async refused(data: FailedReward, error: string): Promise<void> {
    const now = this.clock.now();
    const known = this.byId.get(data.id);
    const patch = { data, attempts: (known?.attempts ?? 0) + 1, lastAttemptAt: now, lastError: error };
    let entry = known && (await this.queue.update(known.id, patch));
    // New, or dropped by an operator meanwhile: starts a new count.
    entry ??= await this.queue.update((await this.queue.add(data)).id, { ...patch, attempts: 1 });
    if (!entry) return;
    this.byId.set(data.id, entry);
    const { id, reward, packet, player } = data;
    if (gaveUp(entry))
      this.log.error(
        `reward ${id} (${reward}, ${packet}) for ${player}: the game refused it ${entry.attempts} times (last: ${error}); given up. Fix the command at VyHub (or what the game allows), then \`hub-agent queue drop ${entry.id}\` to try it again`,
        { applied_reward_id: id },
      );
    else
      this.log.warn(
        `reward ${id} (${reward}) for ${player} not executed: the game refused it (${error}); refusal ${entry.attempts} of ${GIVE_UP_AFTER}, trying again in ${Math.round(backoffMs(entry.attempts, this.roundMs) / 1000)} s`,
        { applied_reward_id: id },
      );
  }

  /** The reward ran (or the service no longer lists it): its count starts over. */
  async forget(appliedRewardId: string): Promise<void> {
    const e = this.byId.get(appliedRewardId);
    if (!e) return;
    this.byId.delete(appliedRewardId);
    await this.queue.remove(e.id);
  }

  /** Entries of these users whose reward a fresh listing no longer holds (expired, or executed elsewhere). */
  async forgetGone(listed: ReadonlyMap<string, ReadonlySet<string>>): Promise<void> {
    for (const [id, e] of this.byId) if (listed.get(e.data.user_id)?.has(id) === false) await this.forget(id);
  }
}
