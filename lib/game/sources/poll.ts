/**
 * Player-list polling: the event source that always works with a command channel alone. Every interval it runs
 * the preset's list command and diffs the answer against the roster, which reports joins and leaves the logs
 * missed (or all of them, without logs). `refresh()` also serves status() and the resync after a reconnect.
 *
 * A list answer is a snapshot from before it arrived: a player whose join or leave line was handled while the
 * command ran keeps what that line said, so a slow poll can't undo a fresher event.
 */
import type { Clock } from "../../clock.ts";
import type { Logger } from "../../log.ts";
import type { PlayerList } from "../presets/types.ts";
import type { Roster } from "../roster.ts";

export interface PlayerPollOptions {
  /** Runs the list command and parses the reply. */
  list: () => Promise<PlayerList>;
  roster: Roster;
  clock: Clock;
  /** 0 polls only on demand (refresh/trigger). */
  intervalMs: number;
  logger: Logger;
  /** Every outcome, for the bridge's up/down state. */
  onResult?: (result: { ok: true; list: PlayerList } | { ok: false; error: Error }) => void;
}

export class PlayerPoll {
  #o: PlayerPollOptions;
  #running?: Promise<PlayerList>;
  #queued?: Promise<PlayerList>;
  #stop = new AbortController();
  #loop?: Promise<void>;

  constructor(o: PlayerPollOptions) {
    this.#o = o;
  }

  /** Polls now, then every interval, until stop(). */
  start(): void {
    if (this.#loop) return;
    this.#loop = (async () => {
      const signal = this.#stop.signal;
      while (!signal.aborted) {
        await this.refresh().catch(() => {});
        if (this.#o.intervalMs <= 0) return;
        await this.#o.clock.sleep(this.#o.intervalMs, signal).catch(() => {});
      }
    })();
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#loop;
    await this.#running?.catch(() => {});
  }

  /**
   * One poll whose command starts now or later: while one is in flight, the next is queued behind it (it may
   * predate the change the caller wants to see), and callers meanwhile share that next one.
   */
  refresh(): Promise<PlayerList> {
    if (this.#stop.signal.aborted) return Promise.reject(new Error("player polling stopped"));
    if (this.#running) {
      this.#queued ??= this.#running
        .catch(() => {})
        .then(() => {
          this.#queued = undefined;
          return this.refresh();
        });
      return this.#queued;
    }
    const run = this.#poll().finally(() => {
      if (this.#running === run) this.#running = undefined;
    });
    this.#running = run;
    return run;
  }

  /** A poll soon, without waiting for it (after a reconnect, or a join line without an id). */
  trigger(): void {
    if (!this.#stop.signal.aborted) this.refresh().catch(() => {});
  }

  async #poll(): Promise<PlayerList> {
    const { roster } = this.#o;
    const since = roster.seq;
    let list: PlayerList;
    try {
      list = await this.#o.list();
    } catch (e) {
      const error = e instanceof Error ? e : new Error(String(e));
      this.#o.logger.debug("player list failed", { error: error.message });
      this.#o.onResult?.({ ok: false, error });
      throw error;
    }
    this.#o.onResult?.({ ok: true, list }); // first: "ready" comes before the players it found
    const seen = new Set<string>();
    for (const row of list.players) {
      roster.noteName(row.name); // id or not: the name's console chat lines are no events
      // Rows without an id (CS2's status) still vouch for the online player in their slot.
      const id = row.id ?? roster.resolveId({ ...(row.slot !== undefined ? { slot: row.slot } : {}), name: row.name });
      if (id === undefined) continue;
      seen.add(id);
      if (roster.changedSince(id, since)) continue;
      const slot = row.slot !== undefined ? { slot: row.slot } : {};
      roster.connect({ id, name: row.name, ...slot }, row.extra);
    }
    for (const p of roster.online()) {
      if (!seen.has(p.id) && !roster.changedSince(p.id, since)) roster.disconnect({ id: p.id });
    }
    roster.prune(since);
    return list;
  }
}
