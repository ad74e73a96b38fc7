import type { Clock } from "../clock.ts";

/**
 * The group changes a bridge made itself, remembered for a while: many games print a group change however it was
 * made, and the agent's own change reported back must not be taken for an admin's in-game change (rule 8). Every
 * bridge passes its group_change reports through one, so features never see the echo.
 */
export class OwnGroupChanges {
  #until = new Map<string, number>();

  constructor(
    private clock: Clock,
    private ttlMs = 30_000,
  ) {}

  /** Before the change is sent: the game may print it before the command's reply arrives. */
  note(playerId: string, group: string, op: "add" | "remove"): void {
    const now = this.clock.monotonic();
    for (const [key, until] of this.#until) if (until <= now) this.#until.delete(key);
    this.#until.set(key(playerId, group, op), now + this.ttlMs);
  }

  /** Whether a reported change is the echo of one this bridge made within the last `ttlMs`. */
  isEcho(playerId: string, group: string, op: "add" | "remove"): boolean {
    return (this.#until.get(key(playerId, group, op)) ?? 0) > this.clock.monotonic();
  }
}

const key = (playerId: string, group: string, op: string) => `${playerId}\n${group}\n${op}`;
