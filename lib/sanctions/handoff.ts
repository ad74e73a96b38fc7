/**
 * A one-shot command and a running `run` on the same store: the command never waits for `run`'s delivery round (a
 * backlog after an outage can take minutes). It writes its queue entry as always, then hands it over: on the desk
 * line (kick-line.ts, a socket `run` answers on), or where there is none a note in the box "handoff" naming it, which
 * `run` watches. `run` kicks the player at once if it is a ban (from the queue, before any refresh of the ban list),
 * delivers the player's entries before the rest of its round, and answers with the entry's fate on the line, or in
 * the box "outcome", which the command reads and deletes. The command waits for that answer a bounded time and never
 * for a lock; without an answer the entry is still queued, and `run` delivers it.
 *
 * `run` says it takes such notes in the cache "deliverer" (its pid) once it watches the box; a command hands off only
 * to that pid while it holds the storage directory's instance lock, and does its own round otherwise (no `run`, a
 * `run` not ready yet, `run --once`, or an older version).
 */
import { type FSWatcher, watch } from "node:fs";
import * as v from "valibot";
import { mkdir } from "../fsio.ts";
import type { Store } from "../store/index.ts";
import { instanceHolder } from "../store/instance.ts";
import { pidAlive } from "../store/lock.ts";
import type { DeliveryOutcome } from "./deliver.ts";
import { type DeskLine, openLine } from "./kick-line.ts";
import { QUEUED_BAN_STATUSES } from "./schemas.ts";

export const HANDOFF_BOX = "handoff";
export const OUTCOME_BOX = "outcome";
export const DELIVERER_CACHE = "deliverer";

/** An answer no command picked up (it gave up waiting, or was killed) is deleted after this long. */
export const OUTCOME_TTL_MS = 10 * 60_000;
/** How often a waiting command looks for the answer where its folder cannot be watched; and checks `run` lives. */
const POLL_MS = 5;
const ALIVE_CHECK_MS = 250;

const KINDS = ["ban", "unban", "warning"] as const;
const RESULTS = ["delivered", "not_found", "refused", "cancelled", "kept", "elsewhere"] as const;

/** What became of the command's own entry (a delivery round's outcome for it, or why there is none). */
export interface EntryFate {
  /**
   * `kept`: still queued (the service did not answer, or it waits for an earlier entry of its player, or for `run`);
   * `elsewhere`: another process settled it.
   */
  result: DeliveryOutcome["result"] | "elsewhere";
  outcome?: DeliveryOutcome;
  error?: string;
  /** kept: a request may have reached the service; it is looked up there before it is sent again. */
  uncertain?: boolean;
}

const HandoffSchema = v.object({ kind: v.picklist(KINDS), pid: v.number() });
export type Handoff = v.InferOutput<typeof HandoffSchema>;

/** The answer: only its shape is checked, the outcome is what `run`'s round reported (its own store, its own user). */
const FateSchema = v.object({
  result: v.picklist(RESULTS),
  error: v.optional(v.string()),
  uncertain: v.optional(v.boolean()),
  outcome: v.optional(
    v.looseObject({
      kind: v.picklist(KINDS),
      result: v.picklist(RESULTS),
      entry: v.looseObject({
        id: v.string(),
        data: v.looseObject({ target: v.looseObject({}), status: v.optional(v.picklist(QUEUED_BAN_STATUSES)) }),
      }),
    }),
  ),
});

const DelivererSchema = v.object({ pid: v.number() });
/** An answer on the desk line. */
const AnswerSchema = v.object({ fate: FateSchema as unknown as v.GenericSchema<EntryFate> });

export const handoffBox = (store: Store) => store.box(HANDOFF_BOX, HandoffSchema);
export const outcomeBox = (store: Store) => store.box(OUTCOME_BOX, FateSchema as unknown as v.GenericSchema<EntryFate>);
export const delivererCache = (store: Store) => store.cache(DELIVERER_CACHE, DelivererSchema);

/** The pid of a running `run` that takes handed-off entries, if there is one on this host; else undefined. */
export async function deliverer(store: Store): Promise<number | undefined> {
  const said = await saidPid(store);
  return said ? holding(store, said) : undefined;
}

/** The pid a `run` said it takes entries with (cache "deliverer"); undefined when none said so (or said 0). */
const saidPid = async (store: Store): Promise<number | undefined> =>
  (
    await delivererCache(store)
      .get()
      .catch(() => undefined)
  )?.data.pid || undefined;

/** `pid`, when it holds the store's instance lock (a `run` that said it takes entries still serves the store). */
async function holding(store: Store, pid: number): Promise<number | undefined> {
  const held = await instanceHolder(store.dir).catch(() => undefined);
  return held?.verdict === "live" && held.holder.pid === pid ? pid : undefined;
}

/**
 * The running `run` a command hands its entry to, and its desk line when it listens: a listening socket in the
 * store is proof enough that a serving `run` holds it (only the instance lock's holder makes one, and removes it when
 * it stops; a killed one's refuses connections), so the instance lock is read only where there is no line.
 */
export async function findDeliverer(store: Store): Promise<{ pid: number; line?: DeskLine } | undefined> {
  const said = await saidPid(store);
  if (!said) return undefined;
  const line = await openLine(store.dir);
  if (line) return { pid: said, line };
  const pid = await holding(store, said);
  return pid === undefined ? undefined : { pid };
}

/** The note that hands `kind` entry `entryId` to the running `run`, which takes it at once. */
export const announce = (store: Store, kind: Handoff["kind"], entryId: string): Promise<void> =>
  handoffBox(store).put(entryId, { kind, pid: process.pid });

/** How a command handed its entry over as soon as it was in place (lib/app/sanction.ts): on its line, or a note. */
export type Early = { line: DeskLine; note?: undefined } | { line?: undefined; note: Promise<void> };

/** The take line that hands `kind` entry `entryId` over on `line`; false when it could not be sent. */
export const takeOn = (line: DeskLine, kind: Handoff["kind"], entryId: string): boolean =>
  line.send({ take: { kind, id: entryId, pid: process.pid } });

/**
 * Hands `kind` entry `entryId` (written) to the running `run` with `pid` and waits up to `waitMs` for its fate.
 * undefined when that `run` died meanwhile: the caller delivers it itself. After `waitMs` without an answer: kept.
 * `early`: handed over already, as soon as the entry was in place (before its flush: lib/app/sanction.ts).
 */
export async function handOff(
  store: Store,
  kind: Handoff["kind"],
  entryId: string,
  pid: number,
  waitMs: number,
  early?: Early,
): Promise<EntryFate | undefined> {
  const started = performance.now();
  let line = early ? early.line : await openLine(store.dir);
  if (line && !early && !takeOn(line, kind, entryId)) line = (line.close(), undefined);
  if (line) {
    const said = await line.answer(waitMs);
    line.close();
    if (said === "late") return late(pid, waitMs);
    const fate = said === "closed" ? undefined : v.safeParse(AnswerSchema, parseJson(said));
    if (fate?.success) return fate.output.fate;
    // No answer (a `run` that stopped hangs up on the commands it has not answered): by note, to the one after it.
    const next = await deliverer(store);
    if (next === undefined) return undefined;
    pid = next;
  }
  const left = waitMs - (performance.now() - started);
  return byNote(store, kind, entryId, pid, left, line ? undefined : early?.note);
}

/** The answer after `waitMs` without one: the entry stays queued, and `run` delivers it. */
const late = (pid: number, waitMs: number): EntryFate => ({
  result: "kept",
  error: `the running hub-agent (pid ${pid}) is delivering it and had not answered within ${Math.round(waitMs / 1000)} s; its log will say how VyHub answered`,
});

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

/** handOff by a note in the box "handoff", answered in the box "outcome"; `announced`: the note, put already. */
async function byNote(
  store: Store,
  kind: Handoff["kind"],
  entryId: string,
  pid: number,
  waitMs: number,
  announced?: Promise<void>,
): Promise<EntryFate | undefined> {
  const outcomes = outcomeBox(store);
  const answered = await answerWatch(outcomes.dir);
  try {
    await (announced ?? announce(store, kind, entryId));
    const started = performance.now();
    let checked = started;
    for (;;) {
      const fate = await outcomes.get(entryId);
      if (fate) {
        await outcomes.remove(entryId).catch(() => {});
        return fate;
      }
      const now = performance.now();
      if (now - checked >= ALIVE_CHECK_MS) {
        checked = now;
        if (!pidAlive(pid)) {
          await handoffBox(store)
            .remove(entryId)
            .catch(() => {});
          return undefined;
        }
      }
      if (now - started >= waitMs) return late(pid, waitMs);
      await answered.next(Math.min(answered.watching ? ALIVE_CHECK_MS : POLL_MS, waitMs - (now - started)));
    }
  } finally {
    answered.close();
  }
}

/**
 * Wakes the waiting command as soon as `run` writes into the outcome box (an inotify watch: polling every 5 ms
 * cost 2.5 ms of a handed-off `ban` on average). Where the folder cannot be watched, `next` sleeps POLL_MS.
 */
async function answerWatch(dir: string) {
  let wake: (() => void) | undefined;
  // A change seen while the command was reading, not waiting: the next wait returns at once.
  let changed = false;
  let watcher: FSWatcher | undefined;
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    watcher = watch(dir, { persistent: false }, () => (wake ? wake() : (changed = true)));
    watcher.on("error", () => {
      watcher?.close();
      watcher = undefined;
    });
  } catch {
    watcher = undefined;
  }
  return {
    get watching() {
      return watcher !== undefined;
    },
    next: (ms: number) =>
      new Promise<void>((resolve) => {
        if (changed) {
          changed = false;
          return resolve();
        }
        const timer = setTimeout(done, Math.max(0, ms));
        function done() {
          clearTimeout(timer);
          wake = undefined;
          resolve();
        }
        wake = done;
      }),
    close: () => watcher?.close(),
  };
}
