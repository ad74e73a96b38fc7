/**
 * A sanction's target looked up at VyHub as soon as it is issued (`run`: a command's handed-over entry, a ban at the
 * console or in chat), while the round that delivers it takes its lock and reads its entries: the round's lookup of
 * that player (round.ts) then takes this answer instead of asking again. Only GET /user (a read): creating a user
 * unknown to VyHub stays the round's, for an entry it is about to send.
 */
import type { Api, ApiResult, User } from "../api/client.ts";
import { type PlayerRef, playerKey } from "./schemas.ts";

/** A lookup not taken by a round this soon (the round was busy, the entry cancelled) is not used: asked again. */
const KEPT_MS = 2_000;
/** Lookups waiting for their round at most (a burst of sanctions); the oldest go first. */
const MAX_KEPT = 100;

export class UsersAhead {
  private readonly asked = new Map<string, { at: number; answer: Promise<ApiResult<User>> }>();

  constructor(
    private readonly api: Pick<Api, "getUser">,
    private readonly monotonic: () => number,
  ) {}

  /** Starts the lookup of `target` (nothing when its user id is known: the round needs none). */
  ask(target: PlayerRef): void {
    if (target.user_id || target.identifier === null) return;
    const now = this.monotonic();
    for (const [key, a] of this.asked) if (now - a.at >= KEPT_MS || this.asked.size >= MAX_KEPT) this.asked.delete(key);
    const key = playerKey(target);
    if (this.asked.has(key)) return;
    const answer = this.api.getUser(target.identifier, target.type);
    void answer.catch(() => {}); // the client never rejects; were it to, that is the taker's, or nobody's
    this.asked.set(key, { at: now, answer });
  }

  /**
   * The answer for this player, once (a later round asks afresh); undefined when none was asked lately. A user found
   * is as good as the round's own GET (VyHub may change right after either). "Not found" is not: it goes stale as soon
   * as anyone creates the user, an earlier entry of the same player in this very round among them (its ban creates
   * them; an unban told "not found" then would be settled unsent), so it is asked again, as is a failure.
   */
  take(p: { identifier: string; type: string }): Promise<ApiResult<User>> | undefined {
    const key = playerKey(p);
    const a = this.asked.get(key);
    if (!a) return undefined;
    this.asked.delete(key);
    if (this.monotonic() - a.at >= KEPT_MS) return undefined;
    return a.answer.then((r) => (r.ok ? r : this.api.getUser(p.identifier, p.type)));
  }
}
