/**
 * "Deliver this entry and tell me what became of it": a one-shot command's delivery. With a running `run` that
 * takes handed-off entries, the entry goes to it (handoff.ts) and the command waits a bounded time for its answer,
 * never for a lock. Otherwise the command's own round (exclusive across processes) takes the entry's player's
 * queued sanctions, in order, read through the queues' index; other players' entries are left to `run`, so
 * concurrent commands never take each other's, and the round costs the same however long the queues are. Then the
 * fate of the entry: settled here, still queued, or settled by another process that took it first.
 */
import type { Messages } from "../messages.ts";
import { describeFsError } from "../store/errors.ts";
import { markSanctionsChanged } from "./changed.ts";
import { isUncertain, type DeliverDeps, type DeliveryOutcome } from "./deliver.ts";
import { deliverQueues } from "./round.ts";
import { type EntryFate, deliverer, handOff } from "./handoff.ts";
import { outcomeMessage } from "./report.ts";
import { playerKey, sanctionQueues } from "./schemas.ts";

export type { EntryFate } from "./handoff.ts";

export async function deliverOwnEntry(
  deps: DeliverDeps & { messages: Messages; handoffWaitMs?: number },
  kind: DeliveryOutcome["kind"],
  entryId: string,
): Promise<EntryFate> {
  const log = deps.logger;
  const queue = sanctionQueues(deps.store)[kind];
  const mine = await queue.get(entryId);
  if (!mine) return { result: "elsewhere" };
  const pid = deps.handoffWaitMs ? await deliverer(deps.store) : undefined;
  if (pid !== undefined) {
    const fate = await handOff(deps.store, kind, entryId, pid, deps.handoffWaitMs as number);
    if (fate) return fate;
    log?.info(`the running hub-agent (pid ${pid}) stopped; delivering the ${kind} from here`);
  }
  const key = playerKey(mine.data.target);
  let own: DeliveryOutcome | undefined;
  // A kept entry stops the player's later entries for the round: theirs is then the reason ours waits too.
  let blocked: string | undefined;
  let report;
  try {
    report = await deliverQueues(deps, {
      players: new Set([key]),
      onOutcome: (o) => {
        if (o.entry.id === entryId) own = o;
        else if (o.result === "kept" && playerKey(o.entry.data.target) === key) blocked = o.error;
        else if (o.result !== "kept") log?.info(outcomeMessage(deps.messages, o) ?? `${o.kind} ${o.result}`);
      },
    });
  } catch (e) {
    // The entry is written: whatever failed after that (a lock path that is a directory), the caller must hear
    // that it is queued, or an operator retrying would queue it twice.
    const entry = await queue.get(entryId).catch(() => undefined);
    if (!entry) throw e;
    await markChanged(deps, kind);
    return { result: "kept", uncertain: !!entry.uncertain, error: describeFsError(e) ?? (e as Error).message };
  }
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

/** Tells a running `run` to refresh its ban list now (changed.ts); a failure only delays that. */
async function markChanged(deps: DeliverDeps, kind: DeliveryOutcome["kind"]): Promise<void> {
  try {
    await markSanctionsChanged(deps.store, [kind]);
  } catch (e) {
    deps.logger?.warn(
      `a running hub-agent will notice this ${kind} at its next ban-list refresh: ${(e as Error).message}`,
    );
  }
}
