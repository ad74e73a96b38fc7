/**
 * How often a player may use chat commands (docs/run.md, "Chat commands"). Each costs requests to VyHub
 * (a ban or an unban two, a warning three, `!warns` and `!dashboard` one) and an answer through the game's console,
 * and VyHub limits the server's key, not the player: one player typing `!ban` 100 times would otherwise spend the
 * budget every job shares. A player may type `burst` commands at once, then one more every `refillMs`; more are
 * refused here, before anything is sent. The player is told at the first refusal after an allowed command, and once
 * per `tellEveryMs` while refusals go on, so the answers are bounded too. The console is not limited. Time is
 * monotonic; memory is bounded.
 *
 * A player is counted by each of their keys (limitKeys): their id, and their slot where the game has one. On games
 * where the name is the id (Quake 3, Teeworlds), a rename is a new id in the same slot, which must not bring a new
 * allowance.
 */
import { type Bucket as Tokens, refill } from "./token-bucket.ts";

export interface CommandLimit {
  burst: number;
  refillMs: number;
  tellEveryMs: number;
}

export const COMMAND_LIMIT: CommandLimit = { burst: 5, refillMs: 10_000, tellEveryMs: 60_000 };

/** Keys remembered (two per player with a slot); past this, those whose allowance is whole again go first. */
const MAX_KEYS = 2000;

interface Bucket extends Tokens {
  /** The last command was refused, and when the player was last told. */
  refusing: boolean;
  toldAt: number;
}

export type Allowance = { ok: true } | { ok: false; retryMs: number; tell: boolean };

export class CommandLimiter {
  #buckets = new Map<string, Bucket>();

  constructor(
    private monotonic: () => number,
    readonly limit: CommandLimit = COMMAND_LIMIT,
  ) {}

  /**
   * One command of a player (their limitKeys): allowed when each key has one to spare, or refused with the wait and
   * whether to tell them (not if any key's refusals were told lately: a renamed player is told no more often).
   */
  take(keys: readonly string[]): Allowance {
    const now = this.monotonic();
    const buckets = keys.map((key) => this.#refilled(key, now) ?? this.#add(key, now));
    const short = buckets.filter((b) => b.tokens < 1);
    if (!short.length) {
      for (const b of buckets) {
        b.tokens--;
        b.refusing = false;
      }
      return { ok: true };
    }
    const tell = short.every((b) => !b.refusing || now - b.toldAt >= this.limit.tellEveryMs);
    for (const b of short) {
      b.refusing = true;
      if (tell) b.toldAt = now;
    }
    const retryMs = Math.ceil(Math.max(...short.map((b) => (1 - b.tokens) * this.limit.refillMs)));
    return { ok: false, retryMs, tell };
  }

  #refilled(key: string, now: number): Bucket | undefined {
    const b = this.#buckets.get(key);
    if (b) refill(b, now, this.limit);
    return b;
  }

  #add(key: string, now: number): Bucket {
    if (this.#buckets.size >= MAX_KEYS) {
      for (const [key, b] of this.#buckets)
        if (refill(b, now, this.limit) >= this.limit.burst) this.#buckets.delete(key);
      for (const id of this.#buckets.keys()) {
        if (this.#buckets.size < MAX_KEYS) break;
        this.#buckets.delete(id);
      }
    }
    const b: Bucket = { tokens: this.limit.burst, at: now, refusing: false, toldAt: -Infinity };
    this.#buckets.set(key, b);
    return b;
  }
}

/** What a player's commands are counted by: the id, and the slot (their connection) where the game has one. */
export function limitKeys(player: { id: string; slot?: string }): string[] {
  return [`id ${player.id}`, ...(player.slot !== undefined ? [`slot ${player.slot}`] : [])];
}
