/**
 * One delivery round, `deliverQueues` (deliver.ts has the rules and the types): it orders and settles, and leaves
 * each kind's protocol to kinds/ban.ts, kinds/unban.ts and kinds/warning.ts. Every queued entry (or a few players'
 * own) is grouped by player in creation order, players oldest first and those with an unban last; workers send one
 * player at a time each, a kept entry stopping the rest of its player's. Urgent players (`run`: a sanction just
 * issued) are served beside them at once, in the learned pace's place (the others make room). A 429 pauses every
 * worker (or ends the round when too long), and so does a service that stopped answering.
 */
import { type ApiError, type ApiResult, type Ban, type User, type Warning, describeError } from "../api/client.ts";
import { systemClock } from "../clock.ts";
import { fileIoBlocks } from "../fsio.ts";
import { LearnedPace } from "../pace.ts";
import { serialByKey } from "../serial.ts";
import { registerUser } from "../users.ts";
import { LockTimeoutError, type Queue, isUncertain } from "../store/index.ts";
import { Attempt, type Item, type RoundServices, type SendResult, type UserLookup } from "./attempt.ts";
import {
  type DeliverDeps,
  type DeliverOptions,
  type DeliveryOutcome,
  type DeliveryReport,
  type OutcomeBase,
  UNREACHABLE_STREAK,
  lookupDueAt,
  settleTime,
} from "./deliver.ts";
import { sendBan } from "./kinds/ban.ts";
import { sendUnban } from "./kinds/unban.ts";
import { sendWarning } from "./kinds/warning.ts";
import { DEFAULT_TIMEOUT_MS } from "../api/http.ts";
import {
  type Creator,
  DELIVERY_LOCK,
  type PlayerRef,
  type SanctionQueues,
  entriesByKeys,
  groupIndexKeyOf,
  playerKey,
  sanctionQueues,
} from "./schemas.ts";

/** The shortest wait after a 429. */
const MIN_PAUSE_MS = 250;
/** User lookups a round remembers (creators and targets come back; a backlog's thousands of players do not). */
const LOOKUPS_KEPT = 1_000;
/** 429s in a row for one entry that end the round. */
const MAX_RATE_LIMITED = 20;
/** While a round lasts, how often it looks for urgent players. */
const URGENT_POLL_MS = 20;

/** Each kind's protocol, after the steps every entry shares (Round.send). */
const PROTOCOLS: { [K in Item["kind"]]: (a: Attempt<Extract<Item, { kind: K }>>) => Promise<SendResult> } = {
  ban: sendBan,
  unban: sendUnban,
  warning: sendWarning,
};

/** Sends every queued ban, unban and warning once; see the module comment for the rules. */
export async function deliverQueues(deps: DeliverDeps, opts: DeliverOptions = {}): Promise<DeliveryReport> {
  // A few players' entries are read while the lock is taken (run's file calls overlap; a command's block anyway): a
  // listing is a snapshot whether made under the lock or not (commands add entries, and an unban marks bans, without
  // it), and each entry is read again before it is sent.
  const early = opts.players && !fileIoBlocks() ? loadItems(sanctionQueues(deps.store), opts.players) : undefined;
  early?.catch(() => {}); // the round's to report; nobody's when the lock is not had
  try {
    return await deps.store.withLock(DELIVERY_LOCK, () => new Round(deps, opts).run(early), {
      timeoutMs: opts.lockTimeoutMs,
    });
  } catch (e) {
    if (e instanceof LockTimeoutError) return { busy: true, outcomes: [] };
    throw e;
  }
}

const byId = (a: Item, b: Item) => (a.entry.id < b.entry.id ? -1 : 1);

/** Every queued entry, or only those of these players (by playerKey, read through the index). */
async function loadItems(queues: SanctionQueues, players?: ReadonlySet<string>): Promise<Item[]> {
  const keys = players && [...new Set([...players].map(groupIndexKeyOf))];
  const read = <T>(q: Queue<T>) => (keys ? entriesByKeys(q, keys) : q.list());
  const [bans, unbans, warnings] = await Promise.all([read(queues.ban), read(queues.unban), read(queues.warning)]);
  const items: Item[] = [
    ...bans.map((entry) => ({ kind: "ban" as const, entry })),
    ...unbans.map((entry) => ({ kind: "unban" as const, entry })),
    ...warnings.map((entry) => ({ kind: "warning" as const, entry })),
  ];
  return players ? items.filter((i) => players.has(playerKey(i.entry.data.target))) : items;
}

/** Waits `ms`, or less when `signal` aborts (a pause for a 429 must not hold up a stop). */
const sleep = (ms: number, signal?: AbortSignal) => systemClock.sleep(ms, signal).catch(() => {});

export class Round {
  private readonly queues: SanctionQueues;
  private readonly now: () => number;
  private readonly settleMs: number;
  private readonly maxPauseMs: number;
  private readonly services: RoundServices;
  private readonly outcomes: DeliveryOutcome[] = [];
  /** Entries counted for onListed (urgent ones may come before the listing). */
  private readonly counted = new Set<string>();
  /** Users resolved this round, by player key; a creator and a target may be the same player. */
  private readonly users = new Map<string, Promise<UserLookup>>();
  // Rate limits and a service gone: shared by the workers (maxPauseMs).
  private pausedUntil = 0;
  private ended: string | undefined;
  private unanswered = 0;
  /** The last answer's failure when it found no service (refused, timed out); undefined after any answer. */
  private unreachable: string | undefined;
  /**
   * run's rounds learn the service's rate from its 429s (lib/pace.ts): a backlog then meets the limit about once,
   * and urgent players, who go at once in the pace's place (the backlog makes room), seldom find a pause to wait out.
   */
  private readonly learned: LearnedPace | undefined;
  /** One player's entries are sent by one worker at a time, whether listed or urgent. */
  private readonly onePlayer = serialByKey();
  /** Players an urgent call served afresh: their listed group is not sent again in this round. */
  private readonly served = new Set<string>();
  private readonly serving: Promise<void>[] = [];
  private urgentFailure: { error: unknown } | undefined;
  private sending = true;

  constructor(
    private readonly deps: DeliverDeps,
    private readonly opts: DeliverOptions,
  ) {
    this.queues = sanctionQueues(deps.store);
    this.now = deps.now ?? Date.now;
    this.settleMs = deps.settleMs ?? settleTime(DEFAULT_TIMEOUT_MS);
    this.maxPauseMs = opts.maxPauseMs ?? 0;
    this.learned = this.maxPauseMs ? new LearnedPace(systemClock) : undefined;
    const log = deps.logger;
    this.services = {
      api: deps.api,
      queues: this.queues,
      now: this.now,
      ...(log ? { warn: (m: string) => log.warn(m) } : {}),
      waitsOutRateLimits: this.maxPauseMs > 0,
      rateLimited: (ms) => this.rateLimited(ms),
      heard: (error) => this.heard(error),
      report: (item, base, value) => this.report(item, base, value),
      known: (item, base, value) => this.tell(this.opts.onKnown, outcomeOf(item, base, value)),
      userOf: (p, create) => this.userOf(p, create),
      claimed: new Set(),
      attempted: (id) => deps.attempts?.attempted(id),
    };
  }

  /** `early`: the players' entries, being read already (deliverQueues). */
  async run(early?: Promise<Item[]>): Promise<DeliveryReport> {
    // Read while the first urgent players are served: listing a backlog of 10,000 takes seconds.
    const listing = early ?? loadItems(this.queues, this.opts.players);
    const urgentServed = this.urgentLoop();
    try {
      const listed = await listing;
      this.count(listed);
      const players = groups(listed);
      // Players with an unban last: a ban of the same person queued under their other key is then sent or kept,
      // never in flight while the unban looks (kinds/unban.ts; an urgent unban relies on the checks there and in
      // Attempt.record).
      const hasUnban = (items: Item[]) => items.some((i) => i.kind === "unban");
      await this.sendAll(players.filter((items) => !hasUnban(items)));
      await this.sendAll(players.filter(hasUnban));
    } finally {
      this.sending = false;
      await urgentServed;
    }
    return { busy: false, outcomes: this.outcomes, ...(this.unreachable ? { unreachable: this.unreachable } : {}) };
  }

  private count(items: Item[]): void {
    const fresh = items.filter((i) => !this.counted.has(i.entry.id));
    for (const i of fresh) this.counted.add(i.entry.id);
    this.opts.onListed?.(fresh.length);
  }

  /**
   * A 429 (or its gate): every worker waits until it has passed (at least MIN_PAUSE_MS, so a `Retry-After: 0` does
   * not turn into a loop of requests), or the round ends if that is too long.
   */
  private rateLimited(retryAfterMs: number) {
    this.learned?.refused();
    const ms = Math.max(retryAfterMs, MIN_PAUSE_MS);
    if (ms > this.maxPauseMs) this.end(`the service asks to wait ${Math.ceil(ms / 1000)} s (429)`);
    else {
      this.pausedUntil = Math.max(this.pausedUntil, performance.now() + ms);
      this.opts.onPause?.({ ms });
    }
    return "rate_limited" as const;
  }

  /** What one answer says about the service as a whole (run's rounds end when it stops answering); none: success. */
  private heard(error?: ApiError): void {
    this.unreachable = error?.kind === "Network" ? describeError(error) : undefined;
    if (!this.maxPauseMs) return;
    if (error?.kind !== "Network") this.unanswered = 0;
    else if (++this.unanswered >= UNREACHABLE_STREAK)
      this.end(`the service did not answer ${this.unanswered} times in a row (${describeError(error)})`);
  }

  /** Ends the round early (the first reason stands), and says why. */
  private end(why: string): void {
    if (this.ended) return;
    this.ended = why;
    this.opts.onPause?.({ ended: why });
  }

  private lookup(p: { identifier: string; type: string; name: string }, create: boolean): Promise<UserLookup> {
    const key = `${playerKey(p)}:${create}`;
    const hit = this.users.get(key);
    if (hit) return hit;
    // GET /user asked already, after the sanction was queued (run): as good an answer as one asked now.
    const asked = findUser(this.deps.api, p, create, this.deps.usersAhead?.take(p));
    this.users.set(key, asked);
    // A backlog of thousands of players must not keep every lookup until the round ends.
    if (this.users.size > LOOKUPS_KEPT) this.users.delete(this.users.keys().next().value as string);
    // A failure is not kept: the entry asks again (after a 429's wait, or in a later round).
    void asked.then((r) => {
      if (!r.ok && this.users.get(key) === asked) this.users.delete(key);
    });
    return asked;
  }

  /** Without a user id the target has its game id (PlayerRefSchema). */
  private userOf(p: PlayerRef, create: boolean): Promise<UserLookup> {
    return p.user_id
      ? Promise.resolve({ ok: true, id: p.user_id })
      : this.lookup({ ...p, identifier: p.identifier as string }, create);
  }

  /** morph_user_id of a creator: undefined for the console. */
  private async morphOf(c: Creator | null): Promise<UserLookup | undefined> {
    if (!c) return undefined;
    if (c.user_id) return { ok: true, id: c.user_id };
    return this.lookup({ identifier: c.identifier as string, type: c.type as string, name: c.name }, true);
  }

  private async report(item: Item, base: OutcomeBase, value?: Ban | Warning): Promise<void> {
    const outcome = outcomeOf(item, base, value);
    if (this.opts.collect !== false) this.outcomes.push(outcome);
    await this.tell(this.opts.onOutcome, outcome);
  }

  /** A caller's hook: its failure is logged, and the round goes on. */
  private async tell(hook: DeliverOptions["onOutcome"], outcome: DeliveryOutcome): Promise<void> {
    try {
      await hook?.(outcome);
    } catch (e) {
      this.deps.logger?.error(`reporting a ${outcome.kind} outcome failed: ${(e as Error).message}`);
    }
  }

  /** What every entry goes through before its kind's protocol: read again, cancelled, not due yet, its creator. */
  private async send(listed: Item): Promise<SendResult> {
    const { queues, now } = this;
    // Re-read: the entry may have been dropped (`queue drop`) or its ban cancelled by an unban since the listing.
    const current = await queues[listed.kind].get(listed.entry.id);
    if (!current) return undefined;
    const item = { ...listed, entry: { ...current, uncertain: isUncertain(current) } } as Item;
    if (item.kind === "ban" && item.entry.data.status === "UNBANNED" && !item.entry.uncertain)
      return new Attempt(this.services, item).done("cancelled");
    if (item.entry.uncertain && (item.entry.lastAttemptAt ?? 0) > now()) {
      // The clock was set back since that attempt: its settle time counts from now, not from a time still to come.
      const moved = await queues[item.kind].update(item.entry.id, { lastAttemptAt: now() });
      if (!moved) return undefined;
      item.entry = { ...moved, uncertain: true } as never;
    }
    const entry = item.entry;
    let due = entry.lastAttemptAt === undefined ? 0 : lookupDueAt(entry.lastAttemptAt, this.settleMs, now());
    // Sent by this process: its settle time also passes in real time, whatever the wall clock did since.
    due = Math.max(due, now() + (this.deps.attempts?.settling(entry.id) ?? 0));
    if (entry.uncertain && now() < due) {
      // Not looked up yet: the first request may still be in progress at the service.
      const error = `${entry.lastError ?? "no answer"}; looked up from ${new Date(due).toISOString()}`;
      await this.report(item, { result: "kept", uncertain: true, error });
      return "kept";
    }
    const morph = await this.morphOf(item.kind === "unban" ? item.entry.data.processor : item.entry.data.creator);
    if (morph && !morph.ok) return new Attempt(this.services, item).answered(morph.error, false);
    const attempt = new Attempt(this.services, item, morph?.id);
    return (PROTOCOLS[item.kind] as (a: Attempt) => Promise<SendResult>)(attempt);
  }

  /** A player's entries in order; a kept one stops the rest (a later unban never overtakes the ban it lifts). */
  private async sendGroup(items: Item[], paced: boolean): Promise<void> {
    const { opts } = this;
    for (let i = 0, limited = 0; i < items.length && !this.ended;) {
      if (!paced) this.learned?.jump();
      else if (this.learned) await this.learned.take(opts.signal).catch(() => {});
      const wait = this.pausedUntil - performance.now();
      if (wait > 0) await sleep(wait, opts.signal);
      if (opts.signal?.aborted) this.end("stopping");
      if (this.ended) break;
      const result = await this.send(items[i] as Item);
      if (result === "rate_limited") {
        // The same entry once the service lets requests through; a service that never does ends the round.
        if (++limited >= MAX_RATE_LIMITED) this.end(`the service answered 429 ${limited} times in a row`);
        continue;
      }
      limited = 0;
      if (result === "kept") break;
      i++;
    }
  }

  private async serveUrgent(key: string): Promise<void> {
    this.served.add(key);
    let listedAt = 0;
    await this.onePlayer(key, async () => {
      listedAt = performance.now();
      const items = (await loadItems(this.queues, new Set([key]))).sort(byId);
      this.count(items);
      await this.sendGroup(items, false);
    });
    await this.opts.onServed?.(key, listedAt);
  }

  /**
   * Urgent players are taken by each worker before its next player, and every URGENT_POLL_MS while the round lasts
   * (workers may all be waiting for the service or the pace): served at once, beside the players in progress.
   */
  private takeUrgent(): Promise<unknown> {
    const now = (this.opts.urgent?.() ?? []).map((key) =>
      this.serveUrgent(key).catch((error: unknown) => void (this.urgentFailure ??= { error })),
    );
    this.serving.push(...now);
    return Promise.all(now);
  }

  private async urgentLoop(): Promise<void> {
    const { opts } = this;
    if (!opts.urgent) return;
    while (this.sending && !this.ended) {
      void this.takeUrgent();
      await sleep(URGENT_POLL_MS, opts.signal);
      if (opts.signal?.aborted) this.end("stopping");
    }
    await Promise.all(this.serving);
    if (this.urgentFailure) throw this.urgentFailure.error;
  }

  private async sendAll(list: Item[][]): Promise<void> {
    let next = 0;
    const worker = async () => {
      for (;;) {
        await this.takeUrgent();
        if (this.opts.signal?.aborted) this.end("stopping");
        if (this.ended || next >= list.length) return;
        const items = list[next] as Item[];
        list[next++] = []; // let go of what was sent: a backlog's entries are not all kept to the end
        const key = playerKey((items[0] as Item).entry.data.target);
        if (!this.served.has(key)) await this.onePlayer(key, () => this.sendGroup(items, true));
      }
    };
    // Every worker finishes before the round (and its lock) ends, also when one of them failed.
    const workers = Math.max(1, Math.min(this.opts.concurrency ?? 4, list.length));
    const results = await Promise.allSettled(Array.from({ length: workers }, worker));
    const failed = results.find((r) => r.status === "rejected");
    if (failed) throw failed.reason;
  }
}

/** What the round's caller is told of an entry: the entry, how it ended, and what the service returned. */
function outcomeOf(item: Item, base: OutcomeBase, value?: Ban | Warning): DeliveryOutcome {
  return item.kind === "ban"
    ? { ...item, ...base, ...(value ? { ban: value as Ban } : {}) }
    : item.kind === "warning"
      ? { ...item, ...base, ...(value ? { warning: value as Warning } : {}) }
      : { ...item, ...base };
}

/** Each player's entries in creation order; players by their oldest entry, so a backlog drains oldest first. */
function groups(items: Item[]): Item[][] {
  const byPlayer = new Map<string, Item[]>();
  for (const item of items) {
    const key = playerKey(item.entry.data.target);
    const mine = byPlayer.get(key);
    if (mine) mine.push(item);
    else byPlayer.set(key, [item]);
  }
  return [...byPlayer.values()].map((g) => g.sort(byId)).sort((a, b) => byId(a[0] as Item, b[0] as Item));
}

/**
 * GET /user/<identifier>?type=… (or its answer, `asked`); with `create`, POST /user/ on 404 (and read again if another
 * creator won).
 */
export async function findUser(
  api: RoundServices["api"],
  p: { identifier: string; type: string; name: string },
  create: boolean,
  asked?: Promise<ApiResult<User>>,
): Promise<UserLookup> {
  const got = await (asked ?? api.getUser(p.identifier, p.type));
  if (got.ok) return { ok: true, id: got.value.id };
  if (got.error.kind !== "NotFound" || !create) return { ok: false, error: got.error };
  const made = await registerUser(api, { identifier: p.identifier, type: p.type, username: p.name || undefined });
  return made.ok ? { ok: true, id: made.value.id } : { ok: false, error: made.error };
}
