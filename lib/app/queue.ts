/**
 * The durable queues as an operator manages them (`hub-agent queue`): what each holds and what was quarantined, an
 * entry found by its id, an entry sent again (a reward report, or a sanction through the sanction operations), an entry
 * dropped. Plain data and typed outcomes, never a line printed. What only some outcomes need loads when they do:
 * `queue status --json` reads the queues and nothing else.
 */
import { join } from "node:path";
import type { Api } from "../api/client.ts";
import { type QueueName, type QueueSummary, entryUncertain, findEntry, queueStatus as readQueues } from "../queues.ts";
import type { QueueEntry, Store } from "../store/index.ts";
import type { IssuedBase } from "./outcome.ts";
import type { FateStatus } from "./sanction.ts";
import type { Session } from "./session.ts";
import { type StoreDeps, openConfiguredStore } from "./storage.ts";

export { type FoundEntry, type QueueName, type QueueSummary, MIN_ID_PART, findEntry } from "../queues.ts";
export { QUARANTINE_FIX } from "../store/records.ts";

/** Records moved aside as unreadable (`<storage.dir>/corrupt/`): never acted on, so shown every time. */
export interface Quarantine {
  dir: string;
  count: number;
  /** The newest files (all of them, or as many as asked for), newest first. */
  files: { key: string; file: string; at: string }[];
}

export interface QueueStatus {
  queues: QueueSummary[];
  quarantine: Quarantine;
  /** Each listed entry in one line for people (describeEntry), by id; filled only when asked for. */
  what: Record<string, string>;
}

/**
 * Every queue (the oldest `limit` entries of each, or all of them) and the quarantine (the newest `limit` files, or
 * all of them: files pile up there until the operator deletes them).
 */
export async function queueStatus(
  deps: StoreDeps,
  opts: { limit?: number; describe?: boolean } = {},
): Promise<QueueStatus> {
  const store = await openConfiguredStore(deps);
  const queues = await readQueues(store, Date.now(), opts.limit === undefined ? {} : { limit: opts.limit });
  const corrupt = await store.corrupt(); // after the queues were read: what reading them moved aside counts too
  const quarantine = {
    dir: join(store.dir, "corrupt"),
    count: corrupt.length,
    files: corrupt
      .slice(0, opts.limit ?? corrupt.length)
      .map((c) => ({ key: c.key, file: c.file, at: new Date(c.at).toISOString() })),
  };
  const what: Record<string, string> = {};
  if (opts.describe)
    for (const q of queues)
      for (const i of q.items) what[i.id] = await describeEntry(q.queue, i.data, i.attempts, i.id);
  return { queues, quarantine, what };
}

/** No entry has that id, or a part of an id matches several (`matches`). */
export interface Unfound {
  reason: "none" | "ambiguous";
  matches: { queue: QueueName; id: string }[];
}

export type DropOutcome =
  | ({ kind: "unfound" } & Unfound)
  /** An executed reward not yet reported: without its entry VyHub keeps the reward open and it runs again. */
  | { kind: "needs_force"; id: string; what: string }
  /** Another process held the entry's own lock for the lock's whole wait. */
  | { kind: "busy" }
  /** Sent or dropped by another process between finding and removing it. */
  | { kind: "gone"; id: string }
  /** `uncertain`: its answer was lost, so VyHub may have carried it out already. */
  | { kind: "dropped"; queue: QueueName; entry: QueueEntry<unknown>; what: string; uncertain: boolean };

/** Removes one entry without sending it; `force` also drops a reward report still to be sent. */
export async function dropEntry(deps: StoreDeps, id: string, opts: { force?: boolean } = {}): Promise<DropOutcome> {
  const store = await openConfiguredStore(deps);
  const f = await findEntry(store, id);
  if (!f.ok) return { kind: "unfound", reason: f.reason, matches: f.matches };
  const { queue, entry } = f;
  const what = await describeEntry(queue, entry.data, entry.attempts, entry.id);
  // A reported entry (interrupted delivery, kept for the operator) is safe to drop: VyHub no longer lists the reward.
  const reported = queue === "reward_executed" && (entry.data as { reported?: unknown }).reported === true;
  if (queue === "reward_executed" && !reported && !opts.force) return { kind: "needs_force", id: entry.id, what };
  // A sanction through its queue as rounds open it, so that its index markers go with it.
  const q = queue.startsWith("reward_")
    ? store.queue(queue, (await import("./valibot-parts.ts")).unknown())
    : (await import("../sanctions/index.ts")).sanctionQueues(store)[queue as "ban" | "unban" | "warning"];
  // Taken under the entry's own lock, as a round records its attempt before it sends (Attempt.record): the drop
  // comes first (the round finds it gone and sends nothing) or it sees the attempt (uncertain, said so). So a drop
  // never waits for a round, not even a drain of 50,000 entries that holds the delivery lock for minutes.
  let removed: QueueEntry<unknown> | undefined;
  try {
    removed = await q.take(entry.id);
  } catch (e) {
    if (!(e instanceof (await import("../store/index.ts")).LockTimeoutError)) throw e;
    return { kind: "busy" }; // a process stalled while it held the entry (a round records an attempt in milliseconds)
  }
  if (!removed) return { kind: "gone", id: entry.id };
  const said = await describeEntry(queue, removed.data, removed.attempts, removed.id);
  // Dropping stops a resend, not what a lost answer may already have done: the operator must look at VyHub.
  return { kind: "dropped", queue, entry: removed, what: said, uncertain: entryUncertain(queue, removed) };
}

/** A reward report sent again now: PATCH executed_on, the same rules as `run`'s rounds (lib/rewards/executed.ts). */
export async function retryRewardReport(s: { api: Api; store: Store; serverId: string }, entry: QueueEntry<unknown>) {
  const { ExecutedRewardSchema, EXECUTED_QUEUE, retryReport } = await import("../rewards/executed.ts");
  const queue = s.store.queue(EXECUTED_QUEUE, ExecutedRewardSchema);
  return retryReport(s.api, queue, s.serverId, entry, Date.now());
}
export type ReportRetry = Awaited<ReturnType<typeof retryRewardReport>>;

/**
 * Waits until an uncertain entry may be looked up at the service: it may still be working on the lost request, and
 * looking it up sooner could miss it and send it twice. `onWait` hears how long, when there is a wait.
 */
export async function awaitLookup(
  entry: QueueEntry<unknown>,
  settleMs: number,
  onWait: (ms: number) => void,
): Promise<void> {
  const { isUncertain, lookupDueAt } = await import("../sanctions/index.ts");
  if (!isUncertain(entry) || entry.lastAttemptAt === undefined) return;
  const wait = lookupDueAt(entry.lastAttemptAt, settleMs, Date.now()) - Date.now();
  if (wait <= 0) return;
  onWait(wait);
  await new Promise((resolve) => setTimeout(resolve, wait));
}

/** One line saying what an entry is about, for people; "" when its data is not of a known shape. */
export async function describeEntry(queue: QueueName, data: unknown, attempts: number, entryId: string) {
  const [v, s, { formatLength }, { ExecutedRewardSchema, interruptedAdvice }, f] = await Promise.all([
    import("./valibot-parts.ts"),
    import("../sanctions/index.ts"),
    import("../duration.ts"),
    import("../rewards/executed.ts"),
    import("../rewards/failures.ts"),
  ]);
  const who = (p: { name: string; identifier: string | null; user_id: string | null }) =>
    p.identifier === null
      ? `VyHub user ${p.user_id} (game id resolved at delivery)`
      : p.name
        ? `${p.name} (${p.identifier})`
        : p.identifier;
  const onAccept = (e: { enforce?: string }) =>
    e.enforce === "on_accept" ? " — takes effect once VyHub accepts it (the issuer's permission is checked there)" : "";
  const by = (c: { name: string } | null) => `by ${c ? c.name : "the console"}`;
  if (queue === "ban") {
    const r = v.safeParse(s.BanEntrySchema, data);
    if (!r.success) return "";
    const b = r.output;
    const cancelled = b.status === "UNBANNED" ? " — lifted by an unban, will not be sent" : "";
    return `ban ${who(b.target)} ${formatLength(b.length)} "${b.reason}" ${by(b.creator)}${cancelled || onAccept(b)}`;
  }
  if (queue === "unban") {
    const r = v.safeParse(s.UnbanEntrySchema, data);
    return r.success ? `unban ${who(r.output.target)} ${by(r.output.processor)}${onAccept(r.output)}` : "";
  }
  if (queue === "warning") {
    const r = v.safeParse(s.WarningEntrySchema, data);
    return r.success ? `warn ${who(r.output.target)} "${r.output.reason}" ${by(r.output.creator)}` : "";
  }
  if (queue === "reward_failed") {
    const r = v.safeParse(f.FailedRewardSchema, data);
    if (!r.success) return "";
    const e = r.output;
    const what = `reward ${e.reward} (${e.packet}) for ${e.player}, applied reward ${e.id}, refused by the game`;
    return f.gaveUp({ attempts })
      ? `${what} — given up: fix the command at VyHub (or what the game allows), then drop this entry to try again`
      : `${what} — \`run\` tries it again after a pause`;
  }
  const r = v.safeParse(ExecutedRewardSchema, data);
  if (!r.success) return "";
  const e = r.output;
  const note = e.refused
    ? " — VyHub refused the report, so it never runs again: `queue retry` reports it again once the cause is fixed, `queue drop --force` lets it run again"
    : e.interrupted
      ? ` — may not have been delivered (hub-agent stopped while issuing it)${e.reported ? ", reported to VyHub" : ""}; ${interruptedAdvice(entryId, e.reported === true)}`
      : e.issued
        ? ""
        : " — being issued, or issuing was interrupted";
  return `reward ${e.reward} (${e.packet}) ${e.interrupted ? "claimed" : "executed"} for ${e.player}, applied reward ${e.id}${note}`;
}

/** What `queue retry` made of an entry. */
export type RetryOutcome =
  | ({ kind: "unfound" } & Unfound)
  /** A reward the game refused: nothing to send (run tries it again by itself). */
  | { kind: "reward_failed"; id: string }
  /** A reward report sent again (retryRewardReport's outcome). */
  | { kind: "report"; id: string; report: ReportRetry }
  /** A sanction sent in its own round: `status` as every sanction operation answers, `message` its sentence. */
  | (Sent & { status: IssuedBase["status"] })
  | (Sent & { status: Exclude<FateStatus, IssuedBase["status"]> | "credentials" });
interface Sent {
  kind: "sanction";
  id: string;
  queue: "ban" | "unban" | "warning";
  message: string;
  error?: string;
}

/**
 * Sends one queued entry now: a reward report again, or a sanction in its own round (an uncertain one looked up at
 * the service first, once it may be: `onWait` hears how long that is), asking the service even when it was down
 * moments ago.
 */
export async function retryEntry(
  s: Session,
  id: string,
  onWait: (ms: number, id: string) => void,
): Promise<RetryOutcome> {
  const [store, config] = await Promise.all([s.store(), s.config()]);
  const f = await findEntry(store, id);
  if (!f.ok) return { kind: "unfound", reason: f.reason, matches: f.matches };
  const { queue, entry } = f;
  if (queue === "reward_failed") return { kind: "reward_failed", id: entry.id };
  if (queue === "reward_executed") {
    const report = await retryRewardReport({ api: await s.api(), store, serverId: config.api.server_id }, entry);
    return { kind: "report", id: entry.id, report };
  }
  await awaitLookup(entry, await s.settleMs(), (ms) => onWait(ms, entry.id));
  const [{ deliverEntry }, { outcomeMessage }] = await Promise.all([
    import("./sanction.ts"),
    import("../sanctions/index.ts"),
  ]);
  const d = await deliverEntry(s, queue, entry.id, { askAnyway: true });
  if (d.status === "credentials") return { kind: "sanction", id: entry.id, queue, ...d };
  const { fate } = d;
  const message =
    (fate.outcome && outcomeMessage(await s.messages(), fate.outcome)) ??
    (fate.result === "elsewhere"
      ? `${entry.id}: sent by another hub-agent process at the same moment; its log has the answer`
      : `${entry.id} is still queued${fate.error ? `: ${fate.error}` : ""}`);
  const error = fate.error ? { error: fate.error } : {};
  return { kind: "sanction", id: entry.id, queue, status: d.status, message, ...error } as RetryOutcome;
}
