/**
 * How often a player may use chat commands (README "What `run` does", "Chat commands"). Each costs requests to VyHub
 * (a ban or an unban two, a warning three, `!warns` and `!dashboard` one) and an answer through the game's console,
 * and VyHub limits the server's key, not the player: one player typing `!ban` 100 times would otherwise spend the
 * budget every job shares. A player may type `burst` commands at once, then one more every `refillMs`; more are
 * refused here, before anything is sent. The player is told at the first refusal after an allowed command, and once
 * per `tellEveryMs` while refusals go on, so the answers are bounded too. The console is not limited. Time is
 * monotonic; memory is bounded.
 */

export interface CommandLimit {
  burst: number;
  refillMs: number;
  tellEveryMs: number;
}

export const COMMAND_LIMIT: CommandLimit = { burst: 5, refillMs: 10_000, tellEveryMs: 60_000 };

/** Players remembered; past this, those whose allowance is whole again are forgotten first. */
const MAX_PLAYERS = 1000;

interface Bucket {
  tokens: number;
  at: number;
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

  /** One command of `player` (their normalised id): allowed, or refused with the wait and whether to tell them. */
  take(player: string): Allowance {
    const now = this.monotonic();
    const b = this.#refilled(player, now) ?? this.#add(player, now);
    if (b.tokens >= 1) {
      b.tokens--;
      b.refusing = false;
      return { ok: true };
    }
    const tell = !b.refusing || now - b.toldAt >= this.limit.tellEveryMs;
    b.refusing = true;
    if (tell) b.toldAt = now;
    return { ok: false, retryMs: Math.ceil((1 - b.tokens) * this.limit.refillMs), tell };
  }

  #refilled(player: string, now: number): Bucket | undefined {
    const b = this.#buckets.get(player);
    if (!b) return undefined;
    b.tokens = Math.min(this.limit.burst, b.tokens + (now - b.at) / this.limit.refillMs);
    b.at = now;
    return b;
  }

  #add(player: string, now: number): Bucket {
    if (this.#buckets.size >= MAX_PLAYERS) {
      for (const [id, b] of this.#buckets)
        if (b.tokens + (now - b.at) / this.limit.refillMs >= this.limit.burst) this.#buckets.delete(id);
      for (const id of this.#buckets.keys()) {
        if (this.#buckets.size < MAX_PLAYERS) break;
        this.#buckets.delete(id);
      }
    }
    const b: Bucket = { tokens: this.limit.burst, at: now, refusing: false, toldAt: -Infinity };
    this.#buckets.set(player, b);
    return b;
  }
}
