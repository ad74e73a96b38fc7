/**
 * `run`'s side of a command's handed-over sanction (lib/sanctions/handoff.ts): it takes each entry handed over on the
 * desk line (kick-line.ts, answered there) or by a note in the box "handoff", which it watches, telling commands so
 * (cache "deliverer"). The entry's player goes to `issue` (kick first, delivered before the rest of a round), and the
 * command is answered once the entry is settled, kept, or could not be reached; a delivery as soon as VyHub's answer
 * says so, before its entry is removed (DeliverOptions.onKnown). Answers in the box "outcome" that nobody picked up
 * are deleted after OUTCOME_TTL_MS. Used by the bans feature (bans.ts).
 */
import type { FSWatcher } from "node:fs";
import type { FeatureContext } from "../feature.ts";
import {
  type DeliveryOutcome,
  type EntryFate,
  type PlayerRef,
  playerKey,
  playerLabel,
  sanctionQueues,
} from "../sanctions/index.ts";
import { OUTCOME_TTL_MS, delivererCache, handoffBox, outcomeBox } from "../sanctions/handoff.ts";
import type { TakeLine } from "../sanctions/kick-line.ts";
import type { Reply } from "./kick-line.ts";
import { StoreWriteError } from "../store/index.ts";
import { coalescing } from "../serial.ts";
import { systemClock } from "../clock.ts";
import type { Logger } from "../log.ts";

/** Outcomes remembered for an entry handed over just after a round had settled it. */
const RECENT_OUTCOMES = 1_000;
/**
 * A pause the service asked for that ends sooner than this is waited out with the command (answered "delivered" a
 * moment later); a longer one is answered "queued" at once. A command's answer is due within 100 ms: its own start
 * and write take about 30 ms, the delivery after the pause 15-20 ms. At 100 ms, every `ban` slower than 100 ms during
 * a rate-limited drain had waited out a pause (5,000 bans at 300 requests/s, 60 commands: 100-147 ms; at 40 ms, at
 * most 89 ms).
 */
export const HOLD_ANSWER_MS = 30;
/** How long a request that found no service says so for a command's answer (longer: one attempt is waited for). */
const DOWN_FRESH_MS = 30_000;
/** While commands wait, how often the API client's 429 gates are looked at (a user lookup waits one out unseen). */
const GATE_LOOK_MS = 25;

export interface HandoffDesk {
  /** Every outcome of a round: the command waiting for that entry gets it; it is remembered a while. */
  outcome(o: DeliveryOutcome): Promise<void>;
  /**
   * A round served these players (or ended first: `ended`, or another process held the round: `busy`), their entries
   * read at `listedAt` (performance.now()): the handed-over entries of theirs taken before then that got no outcome
   * are still queued, and their commands are told why. One taken later was not in that round (a command that started
   * the moment the one before had its answer): its own round answers it. Busy, or the round `failed` (it threw):
   * every command waiting is told, as no round serves them until the next one.
   */
  served(players: ReadonlySet<string>, why: ServedWhy, listedAt: number): Promise<void>;
  /** Takes the notes not taken yet. */
  take(): Promise<void>;
  /** Takes an entry handed over on the desk line (kick-line.ts), answered there. */
  takeLine(t: TakeLine, reply: Reply): Promise<void>;
  /** Deletes answers nobody picked up. */
  sweep(): Promise<void>;
  /** Watches the box and tells commands that this run takes their entries (not done when watching is impossible). */
  accept(): Promise<void>;
}

export function handoffDesk(agent: FeatureContext, issue: (target: PlayerRef) => Promise<void>): HandoffDesk {
  const { store, logger } = agent.deps;
  const log = logger.withTag("bans");
  const queues = sanctionQueues(store);
  const outcomes = outcomeBox(store);
  const handoffs = handoffBox(store);
  // Entries handed over and not answered yet (by id), and what recent rounds made of entries.
  const awaiting: Awaiting = new Map();
  const recent = new Map<string, EntryFate>();
  // Answers being written: their notes are still in the box, and a `take` meanwhile must not take them again (it
  // would answer a second time, after the command read and deleted the first answer).
  const answering = new Set<string>();
  /** On its line, or in a file the command reads and deletes (its note goes now). */
  const answer = async (id: string, fate: EntryFate, reply = awaiting.get(id)?.reply) => {
    awaiting.delete(id);
    if (reply?.({ fate })) return;
    answering.add(id);
    try {
      await outcomes.put(id, fate);
      await handoffs.remove(id);
    } catch (e) {
      log.warn(`could not answer the command waiting for entry ${id}: ${(e as Error).message}`);
    } finally {
      answering.delete(id);
    }
  };
  const gates = heldAnswers(agent, awaiting, answer);
  /** A handed-over entry: its player's sanctions delivered first; the command answered once it is settled. */
  const takeEntry = async (t: TakeLine, reply?: Reply) => {
    // Held back (a pause VyHub asked for, or no service): a command on the line is told at once, before the read. Its
    // entry was in place when it asked; what run does with it (the kick, the round) follows as for any other.
    const told = reply && gates.heldFate();
    if (told) reply({ fate: told });
    const entry = await queues[t.kind].get(t.id);
    if (!entry) return told ? undefined : answer(t.id, recent.get(t.id) ?? { result: "elsewhere" }, reply);
    const key = playerKey(entry.data.target);
    if (!told) awaiting.set(t.id, { kind: t.kind, key, takenAt: performance.now(), ...(reply ? { reply } : {}) });
    log.info(`${t.kind} of ${playerLabel(entry.data.target)} from another hub-agent process (pid ${t.pid})`, {
      entry: t.id,
    });
    void agent.scheduler.run("sanctions", () => issue(entry.data.target));
    await gates.answerHeld();
    void gates.watchGates();
  };

  const desk: HandoffDesk = {
    async outcome(o) {
      const fate = outcomeFate(o);
      recent.set(o.entry.id, fate);
      if (recent.size > RECENT_OUTCOMES) recent.delete(recent.keys().next().value as string);
      if (awaiting.has(o.entry.id)) await answer(o.entry.id, fate);
    },

    async served(players, why, listedAt) {
      for (const [id, a] of awaiting) {
        // Busy or failed: no round serves them now, and every command waiting is told so (its own would wait as long).
        if (!why.busy && !why.failed && (!players.has(a.key) || a.takenAt > listedAt)) continue;
        const entry = await queues[a.kind].get(id).catch(() => undefined);
        await answer(id, entry ? keptFate(entry, why) : (recent.get(id) ?? { result: "elsewhere" }));
      }
    },

    take: coalescing(async () => {
      // By name: entry ids, oldest first (their files' ages are for the sweep of answers, not needed here).
      for (const id of await handoffs.ids()) {
        if (awaiting.has(id) || answering.has(id)) continue;
        const note = await handoffs.get(id);
        if (note) await takeEntry({ ...note, id });
      }
    }),

    takeLine: (t, reply) => (awaiting.has(t.id) ? Promise.resolve() : takeEntry(t, reply)),

    async sweep() {
      const now = Date.now();
      for (const o of await outcomes.list()) if (now - o.mtimeMs > OUTCOME_TTL_MS) await outcomes.remove(o.id);
    },

    accept: () => acceptHandoffs(agent, log, handoffs.dir, desk.take),
  };
  return desk;
}

/** Entries handed over and not answered yet, by id: their queue, their player (playerKey), when taken (performance.now()). */
type Awaiting = Map<string, { kind: DeliveryOutcome["kind"]; key: string; takenAt: number; reply?: Reply }>;

/** What the command that handed this entry over is told of its outcome. */
function outcomeFate(o: DeliveryOutcome): EntryFate {
  return {
    result: o.result,
    outcome: o,
    ...(o.error ? { error: o.error } : {}),
    ...(o.uncertain ? { uncertain: true } : {}),
  };
}

/** How a round ended, for HandoffDesk.served: another process held it, it ended early, or it threw. */
type ServedWhy = { busy?: boolean; ended?: string; failed?: string };

/** Why a handed-over entry a round served (or could not reach) is still queued. */
function keptFate(entry: { lastError?: string; uncertain?: boolean }, why: ServedWhy): EntryFate {
  return {
    result: "kept",
    error:
      why.failed ??
      (why.busy
        ? "another hub-agent process is delivering; it goes with the next round"
        : (why.ended ?? entry.lastError ?? "it waits for an earlier sanction of the same player")),
    ...(entry.uncertain ? { uncertain: true } : {}),
  };
}

/**
 * While the service holds this agent's requests back (a 429's Retry-After closes the API client's gates, whichever
 * request met it: the round's send, or a user lookup the client waits out by itself), or answers none of them
 * (refused, timed out: a user lookup would try again after its backoff, each attempt up to api.timeout), a
 * command's entry would wait that out with `run`: the commands waiting are answered at once that it is queued and
 * sent later (`run` still delivers it). `watchGates` looks at the client while commands wait: either may come at any
 * moment of the round.
 */
function heldAnswers(
  agent: FeatureContext,
  awaiting: Awaiting,
  answer: (id: string, fate: EntryFate) => Promise<void>,
): { heldFate(): EntryFate | undefined; answerHeld(): Promise<void>; watchGates(): Promise<void> } {
  const heldBy = (): string | undefined => {
    const { api, clock } = agent.deps;
    const ms = api.rateLimitedMs;
    if (ms > HOLD_ANSWER_MS)
      return `VyHub asked to wait until ${new Date(clock.now() + ms).toISOString()} (rate limit); the running hub-agent sends it then`;
    const down = api.unreachable;
    // Known lately: after a quiet spell, the command waits for one attempt (VyHub may be back).
    if (down && clock.monotonic() - down.last < DOWN_FRESH_MS) {
      const ago = Math.max(0, Math.round((clock.monotonic() - down.since) / 1000));
      return `VyHub has not answered the running hub-agent for ${ago} s (${down.error}); it sends it once VyHub answers`;
    }
  };
  const heldFate = (): EntryFate | undefined => {
    const why = heldBy();
    return why ? { result: "kept", error: `${why}, and its log will say how VyHub answered` } : undefined;
  };
  const answerHeld = async () => {
    const fate = heldFate();
    if (fate) for (const id of awaiting.keys()) await answer(id, fate);
  };
  let watching = false;
  const watchGates = async () => {
    if (watching) return;
    watching = true;
    try {
      while (awaiting.size && !agent.scheduler.stopped) {
        await answerHeld();
        await systemClock.sleep(GATE_LOOK_MS);
      }
    } finally {
      watching = false;
    }
  };
  return { heldFate, answerHeld, watchGates };
}

/** HandoffDesk.accept: watches the box's folder (`dir`) and says so in the cache "deliverer"; `take` on each change. */
async function acceptHandoffs(agent: FeatureContext, log: Logger, dir: string, take: () => Promise<void>) {
  const { scheduler } = agent;
  const { store } = agent.deps;
  const [{ watch }, { mkdir }, { isStoreErrno }] = await Promise.all([
    import("node:fs"),
    import("../fsio.ts"),
    import("../store/errors.ts"),
  ]);
  const takeNow = () => {
    if (!scheduler.stopped) void scheduler.run("sanction-handoffs", take);
  };
  let watcher: FSWatcher | undefined;
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const w = (watcher = watch(dir, { persistent: false }, takeNow));
    w.on("error", (e) => {
      log.info(`stopped watching ${dir} (${e.message}); commands deliver their own sanctions`);
      w.close();
      void delivererCache(store)
        .set({ pid: 0 })
        .catch(() => {});
    });
    scheduler.signal.addEventListener("abort", () => w.close(), { once: true });
    await delivererCache(store).set({ pid: process.pid });
  } catch (e) {
    watcher?.close();
    // A store that refuses writes has said so once (lib/store/index.ts); a command then fails to queue anyway.
    const quiet = e instanceof StoreWriteError || isStoreErrno((e as NodeJS.ErrnoException).code);
    log[quiet ? "debug" : "info"](
      `not watching ${dir} (${(e as Error).message}); commands deliver their own sanctions`,
    );
    return;
  }
  takeNow(); // notes written while this run was not watching yet
}
