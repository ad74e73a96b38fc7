/**
 * "Deliver this entry and tell me what became of it": a one-shot command's delivery. With a running `run` that
 * takes handed-off entries, the entry goes to it (handoff.ts) and the command waits a bounded time for its answer,
 * never for a lock. Otherwise the command's own round (exclusive across processes) takes the entry's player's
 * queued sanctions, in order, read through the queues' index; other players' entries are left to `run`, so
 * concurrent commands never take each other's, and the round costs the same however long the queues are. Then the
 * fate of the entry: settled here, still queued, or settled by another process that took it first.
 *
 * A round that found no service (connection refused, timed out) leaves a note (box "service", not fsynced: losing
 * it costs one attempt); the commands of the next UNREACHABLE_HOLD_MS queue their entry without a round of their
 * own, as `run` (or the next command after that) sends it. `queue retry` asks the service all the same.
 */
import * as v from "valibot";
import type { Messages } from "../messages.ts";
import { type Store, isUncertain } from "../store/index.ts";
import { describeFsError } from "../store/errors.ts";
import { markSanctionsChanged } from "./changed.ts";
// Types only: the round (deliver.ts, reconcile.ts) is loaded when this command runs one.
import type { DeliverDeps, DeliveryOutcome, DeliveryReport } from "./deliver.ts";
import { type Early, type EntryFate, deliverer, handOff } from "./handoff.ts";
import { outcomeMessage } from "./report.ts";
import { playerKey, sanctionQueues } from "./schemas.ts";

/** After a command's round found no service, the commands of this long after it do not ask it again. */
export const UNREACHABLE_HOLD_MS = 10_000;
const UNREACHABLE = "unreachable";
const serviceBox = (store: Store) =>
  store.box(
    "service",
    v.object({ at: v.number(), url: v.string(), error: v.string() }) as v.GenericSchema<{
      at: number;
      url: string;
      error: string;
    }>,
  );

export type { EntryFate } from "./handoff.ts";

export interface OwnEntryDeps extends Omit<DeliverDeps, "settleMs"> {
  /** The round's settle time (DeliverDeps.settleMs), asked for only when this command runs a round. */
  settleMs?: () => Promise<number>;
  /** The language, loaded when a line about another entry is logged (a command that holds its entry never loads it). */
  messages: () => Promise<Messages>;
  handoffWaitMs?: number;
  /** Ask the service even when a round found none moments ago (`queue retry`: the operator asks for an attempt). */
  askAnyway?: boolean;
  /** The service's URL: a note about another URL (the configuration changed since) holds nothing back. */
  serviceUrl?: string;
}

/** A running `run` found before the entry was written, and how it was handed over (null: looked, none). */
export type EarlyHandoff = ({ pid: number } & Early) | null;

export async function deliverOwnEntry(
  deps: OwnEntryDeps,
  kind: DeliveryOutcome["kind"],
  entryId: string,
  early?: EarlyHandoff,
): Promise<EntryFate> {
  const log = deps.logger;
  const queue = sanctionQueues(deps.store)[kind];
  // Handed over already (early): `run` may have settled it by now, and answers all the same.
  let mine = early ? undefined : await queue.get(entryId);
  if (!early && !mine) return { result: "elsewhere" };
  const pid = !deps.handoffWaitMs ? undefined : early !== undefined ? early?.pid : await deliverer(deps.store);
  if (pid !== undefined) {
    const fate = await handOff(deps.store, kind, entryId, pid, deps.handoffWaitMs as number, early ?? undefined);
    if (fate) return fate;
    log?.info(`the running hub-agent (pid ${pid}) stopped; delivering the ${kind} from here`);
    mine = await queue.get(entryId); // as that run left it
  }
  if (!mine) return { result: "elsewhere" };
  const note = unreachableNote(deps);
  const held = await note.holding();
  if (held) {
    await markChanged(deps, kind);
    return { result: "kept", uncertain: isUncertain(mine), error: held };
  }
  const key = playerKey(mine.data.target);
  let own: DeliveryOutcome | undefined;
  // A kept entry stops the player's later entries for the round: theirs is then the reason ours waits too.
  let blocked: string | undefined;
  let report;
  try {
    // Loaded here: a command that hands its entry over, or holds it, never needs the round's modules.
    const { deliverQueues } = await import("./round.ts");
    const { settleMs: settle, ...round } = deps;
    const settleMs = await settle?.();
    report = await deliverQueues(
      { ...round, ...(settleMs === undefined ? {} : { settleMs }) },
      {
        players: new Set([key]),
        onOutcome: async (o) => {
          // The cached ban list must not kick a player this round unbanned (`run` starting next enforces it first).
          if (o.kind === "unban" && o.result === "delivered")
            await (await import("./banlist.ts")).liftCachedBans(deps.store, [o.entry.data], (deps.now ?? Date.now)());
          if (o.entry.id === entryId) own = o;
          else if (o.result === "kept" && playerKey(o.entry.data.target) === key) blocked = o.error;
          else if (o.result !== "kept") log?.info(outcomeMessage(await deps.messages(), o) ?? `${o.kind} ${o.result}`);
        },
      },
    );
  } catch (e) {
    // The entry is written: whatever failed after that (a lock path that is a directory), the caller must hear
    // that it is queued, or an operator retrying would queue it twice.
    const entry = await queue.get(entryId).catch(() => undefined);
    if (!entry) throw e;
    await markChanged(deps, kind);
    return { result: "kept", uncertain: !!entry.uncertain, error: describeFsError(e) ?? (e as Error).message };
  }
  await note.after(report);
  const still = own?.result === "kept" || !own ? await queue.get(entryId) : undefined;
  if (own && own.result !== "kept") {
    await markChanged(deps, kind);
    return { result: own.result, outcome: own, ...(own.error ? { error: own.error } : {}) };
  }
  if (!still) return { result: "elsewhere" }; // the process that settled it refreshed its own list
  // Still queued: a running `run` enforces a queued ban, once it knows to look.
  await markChanged(deps, kind);
  const why = report.busy
    ? "another hub-agent process is delivering; it goes with the next round"
    : (own?.error ?? blocked ?? still.lastError);
  const uncertain = isUncertain(still);
  const error = uncertain ? `uncertain: will be checked before it is sent again${why ? `; ${why}` : ""}` : why;
  return {
    result: "kept",
    ...(own ? { outcome: own } : {}),
    uncertain,
    ...(error ? { error } : {}),
  };
}

/** The note a round that found no service leaves, and what it holds back for UNREACHABLE_HOLD_MS. */
function unreachableNote(deps: OwnEntryDeps) {
  const notes = serviceBox(deps.store);
  const url = deps.serviceUrl ?? "";
  const now = (deps.now ?? Date.now)();
  let seen: { at: number; url: string; error: string } | undefined;
  return {
    /** Why this command does not ask the service now; undefined when it does. */
    async holding(): Promise<string | undefined> {
      seen = await notes.get(UNREACHABLE).catch(() => undefined);
      if (!seen || deps.askAnyway || seen.url !== url || seen.at > now || now - seen.at >= UNREACHABLE_HOLD_MS) return;
      const ago = Math.max(1, Math.round((now - seen.at) / 1000));
      return `VyHub did not answer ${ago} s ago (${seen.error}); not asked again so soon: \`hub-agent run\` sends it`;
    },
    /** After a round: the note left, or gone once the service answered. Best effort: a lost one costs an attempt. */
    async after(report: DeliveryReport): Promise<void> {
      if (report.unreachable) await notes.put(UNREACHABLE, { at: now, url, error: report.unreachable }).catch(() => {});
      else if (seen) await notes.remove(UNREACHABLE).catch(() => {});
    },
  };
}

/** Tells a running `run` to refresh its ban list now (changed.ts); a failure only delays that. */
async function markChanged(deps: Pick<DeliverDeps, "store" | "logger">, kind: DeliveryOutcome["kind"]): Promise<void> {
  try {
    await markSanctionsChanged(deps.store, [kind]);
  } catch (e) {
    deps.logger?.warn(
      `a running hub-agent will notice this ${kind} at its next ban-list refresh: ${(e as Error).message}`,
    );
  }
}
