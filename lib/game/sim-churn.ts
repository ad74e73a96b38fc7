/**
 * The sim's churn mode (bench/load.ts, bench/soak.ts): generated players, some online from the start, coming and
 * going on the clock. Apart from sim.ts because the benches' crowd is no part of the scripted game the tests drive;
 * the sim hands it the few controls it needs (ChurnHost) and keeps its own join and leave.
 */
import type { Clock } from "../clock.ts";
import type { GamePlayer } from "./bridge.ts";

/**
 * Generated players (`Player<k>`, Steam ids from GENERATED_ID_BASE + k): `online` of them online from the start,
 * `churn` a second replaced (the one online longest leaves, the next joins), joins going through `distinct` ids in
 * turn (0: every join a new player), so a run of T seconds sees min(distinct, online + churn·T) distinct players.
 */
export interface SimChurn {
  online: number;
  churn: number;
  distinct: number;
}

/** The first generated player's Steam id. */
export const GENERATED_ID_BASE = 76561198400000000n;
/** Churn is applied in steps of this much clock time. */
const CHURN_STEP_MS = 100;

/** What churn uses of the sim: its clock, its player list, and its own join and leave (logged, reported). */
export interface ChurnHost {
  readonly clock: Clock;
  readonly maxPlayers: number;
  isDown(): boolean;
  isOnline(id: string): boolean;
  onlineCount(): number;
  join(player: GamePlayer): GamePlayer;
  leave(id: string): void;
}

export class SimChurner {
  /** Generated joins so far (the next one is player `joined % distinct`), and the ids online in join order. */
  private joined = 0;
  private generatedOnline = new Set<string>();
  private churnStop: AbortController | undefined;

  constructor(
    private readonly churn: SimChurn,
    private readonly host: ChurnHost,
  ) {
    const { online, distinct } = churn;
    if (distinct && distinct <= online)
      throw new Error(`sim: distinct (${distinct}) must be larger than online (${online}), or 0`);
  }

  start(): void {
    if (this.churn.churn && !this.churnStop) void this.churnLoop((this.churnStop = new AbortController()).signal);
  }

  stop(): void {
    this.churnStop?.abort();
    this.churnStop = undefined;
  }

  /** Generated players who joined so far (those online from the start included). */
  get generatedJoins(): number {
    return this.joined;
  }

  /** Distinct generated players seen so far. */
  get distinctPlayers(): number {
    const d = this.churn.distinct ?? 0;
    return d ? Math.min(d, this.joined) : this.joined;
  }

  nextGenerated(): GamePlayer {
    const d = this.churn.distinct ?? 0;
    const k = d ? this.joined % d : this.joined;
    this.joined++;
    const p = { id: String(GENERATED_ID_BASE + BigInt(k)), name: `Player${k}` };
    this.generatedOnline.add(p.id);
    return p;
  }

  /** Every CHURN_STEP_MS, as many generated players leave and join as `churn` a second makes (fractions carried). */
  private async churnLoop(signal: AbortSignal): Promise<void> {
    const { clock } = this.host;
    const perStep = (this.churn.churn ?? 0) * (CHURN_STEP_MS / 1000);
    let due = 0;
    let at = clock.monotonic();
    while (!signal.aborted) {
      try {
        await clock.sleep(CHURN_STEP_MS, signal);
      } catch {
        return;
      }
      const now = clock.monotonic();
      due += perStep * ((now - at) / CHURN_STEP_MS);
      at = now;
      for (; due >= 1; due--) this.replaceOne();
    }
  }

  /** The generated player online longest leaves and the next joins; one kicked meanwhile leaves a place to fill. */
  private replaceOne(): void {
    const { host } = this;
    if (host.isDown()) return;
    for (const id of this.generatedOnline) {
      if (host.isOnline(id) && this.generatedOnline.size < (this.churn.online ?? 0)) break;
      this.generatedOnline.delete(id); // sets keep insertion order: the first is the longest online
      if (host.isOnline(id)) {
        host.leave(id);
        break;
      }
    }
    const next = this.nextGenerated();
    if (host.isOnline(next.id) || host.onlineCount() >= host.maxPlayers) {
      this.generatedOnline.delete(next.id);
      return;
    }
    host.join(next);
  }
}
