/**
 * Writing sanctions to the durable queues: the first step of every ban, unban and warning (rule 10: "a ban is first
 * written to a persistent ban queue"). Safe from any number of processes at once: every entry is its own file.
 */
import type { Store, QueueEntry } from "../store/index.ts";
import {
  type BanEntry,
  type Creator,
  type Enforce,
  type PlayerRef,
  type UnbanEntry,
  type WarningEntry,
  entriesByKeys,
  playerIndexKeys,
  samePlayer,
  sanctionQueues,
  unbanCancels,
} from "./schemas.ts";

export interface NewBan {
  target: PlayerRef;
  /** Seconds (see lib/duration.ts parseLength); null = permanent. */
  length: number | null;
  reason: string;
  /** null = the console operator (no morph_user_id). */
  creator: Creator | null;
  serverbundleId: string;
  /** Local enforcement before delivery (see Enforce); default "now", the console's and the CLI's. */
  enforce?: Enforce;
}

export interface NewUnban {
  target: PlayerRef;
  /** null = the console operator. */
  processor: Creator | null;
  serverbundleId: string;
  /** "now" also cancels every queued ban of the player; "on_accept" only the processor's own. Default "now". */
  enforce?: Enforce;
}

export interface NewWarning {
  target: PlayerRef;
  reason: string;
  creator: Creator | null;
  serverbundleId: string;
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Told the entry's id once it is in place, before it is flushed: a running `run` may take it then (own-entry.ts). An
 * unban's also says how many queued bans it cancelled (before its entry was written).
 */
export type Shown = (entry: { id: string; cancelled?: number }) => void | Promise<void>;

/**
 * Writes a ban to the "ban" queue (status ACTIVE). From then on isBanned counts it before it is delivered, if it is
 * enforced now.
 */
export async function queueBan(
  store: Store,
  ban: NewBan,
  now = Date.now(),
  shown?: Shown,
): Promise<QueueEntry<BanEntry>> {
  const queues = sanctionQueues(store);
  const unbans = await entriesByKeys(queues.unban, playerIndexKeys(ban.target));
  return queues.ban.add(banEntry(ban, now), shown, newest(unbans));
}

/**
 * The newest id among a player's queued entries. A new sanction's id sorts after it: ids order a player's sanctions
 * (delivery, the is-banned check), and the others may come from a process whose clock was set back since (an unban
 * typed an hour "later" than the ban after it would lift that ban).
 */
const newest = (entries: QueueEntry<unknown>[]) => entries[entries.length - 1]?.id; // not .at(): cli/runner.ts

/** What the "ban" queue holds for `ban` issued at `now` (also what a command's kick line sends first: kick-line.ts). */
export function banEntry(ban: NewBan, now: number): BanEntry {
  const reason = ban.reason.trim();
  if (!reason) throw new Error("a ban needs a reason");
  return {
    target: ban.target,
    length: ban.length,
    reason,
    creator: ban.creator,
    created_on: iso(now),
    status: "ACTIVE",
    serverbundle_id: ban.serverbundleId,
    enforce: ban.enforce ?? "now",
  };
}

/**
 * Rule 11: marks queued bans of the player UNBANNED (such entries are never sent) and writes an unban entry with the
 * processor. Returns the unban entry and how many queued bans it cancelled.
 *
 * Which bans it cancels depends on who asks. An unban enforced now (console, CLI, trusted group) cancels every queued
 * ban of the player: it has the rights. One whose permission only the service can check ("on_accept") cancels only
 * the processor's own queued bans (withdrawing a request not yet sent gives them nothing they did not hold); another
 * issuer's ban stays queued, goes first (delivery keeps each player's creation order), and the unban lifts it only if
 * the service accepts the unban.
 */
export async function queueUnban(
  store: Store,
  unban: NewUnban,
  now = Date.now(),
  shown?: Shown,
): Promise<{ entry: QueueEntry<UnbanEntry>; cancelled: number }> {
  const queues = sanctionQueues(store);
  const enforce = unban.enforce ?? "now";
  let cancelled = 0;
  // Through the index: the player's queued bans, however long the queue.
  const bans = await entriesByKeys(queues.ban, playerIndexKeys(unban.target));
  for (const e of bans) {
    if (e.data.status !== "ACTIVE" || !samePlayer(e.data.target, unban.target)) continue;
    if (!unbanCancels({ enforce, processor: unban.processor }, e.data)) continue; // goes first, lifted if accepted
    // update re-reads under the queue's lock, so a concurrent attempts/lastError write is not lost.
    if (await queues.ban.update(e.id, { data: { ...e.data, status: "UNBANNED" } })) cancelled++;
  }
  const entry = await queues.unban.add(
    {
      target: unban.target,
      processor: unban.processor,
      created_on: iso(now),
      serverbundle_id: unban.serverbundleId,
      enforce,
    },
    shown && ((e) => shown({ id: e.id, cancelled })),
    newest(bans),
  );
  return { entry, cancelled };
}

/** Writes a warning to the "warning" queue; delivery sends it with POST /warning/ (see deliverQueues). */
export async function queueWarning(
  store: Store,
  warning: NewWarning,
  now = Date.now(),
  shown?: Shown,
): Promise<QueueEntry<WarningEntry>> {
  const reason = warning.reason.trim();
  if (!reason) throw new Error("a warning needs a reason");
  return sanctionQueues(store).warning.add(
    {
      target: warning.target,
      reason,
      creator: warning.creator,
      created_on: iso(now),
      serverbundle_id: warning.serverbundleId,
    },
    shown,
  );
}
