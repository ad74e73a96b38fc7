import type { Api, ApiResult, User, UserAdd } from "./api/client.ts";
import { describeError, isRejected } from "./api/errors.ts";
import type { Clock } from "./clock.ts";
import type { GamePlayer } from "./game/bridge.ts";
import type { Logger } from "./log.ts";
import type { Pace } from "./pace.ts";

/** A player's service user is kept this long after they leave, so a quick rejoin needs no lookup (ms). */
export const USER_KEEP_MS = 10 * 60_000;
/** At most this many players who left are kept, whatever their time: the oldest go first. */
export const USER_KEEP_MAX = 1_000;

export interface UsersOptions {
  api: Api;
  userType: string;
  logger: Logger;
  clock: Clock;
  /** Whether a player is online now (the agent's list): a lookup that ends after they left is kept as gone. */
  online: (playerId: string) => boolean;
  /** Every lookup request takes its turn here (lib/pace.ts). */
  pace?: Pace;
  /** Stops waiting for a turn (the agent stopping). */
  signal?: AbortSignal;
}

/**
 * POST /user/ for a player the service did not know. Another creator (a sanctions round, another process, the web)
 * may register them first: the service documents no answer for that duplicate, and the addons saw a 500 there
 * ("Fix 404 and 500 error on user creation"). So after any failed create the service answered (or that may have
 * reached it), the user is read again: found, that answer stands; a 404 leaves the create's own error (the create
 * really failed); another failure of the read is returned (the user may exist: try again later). Not after a 429 or
 * a request that never left this machine. `turn` is awaited before the second request.
 */
export async function registerUser(
  api: Api,
  body: UserAdd,
  turn?: () => unknown,
): Promise<
  ApiResult<User> & { /** Found by the read after a failed create: another creator registered them. */ found?: true }
> {
  const made = await api.createUser(body);
  if (made.ok) return made;
  const e = made.error;
  if (e.kind === "RateLimited" || (e.kind === "Network" && e.unsent)) return made;
  await turn?.();
  const read = await api.getUser(body.identifier, body.type);
  if (read.ok) return { ...read, found: true };
  return read.error.kind === "NotFound" ? made : read;
}

/**
 * Rule 6: the player → service user map. `get` answers without the API; `ensure` looks the user up (and creates
 * them on 404), with concurrent calls for the same player sharing one request.
 *
 * Bounded: online players, plus those who left within USER_KEEP_MS (at most USER_KEEP_MAX of them). A player
 * forgotten and back is looked up again (GET /user finds the same user): nothing depends on having kept them.
 */
export class Users {
  private known = new Map<string, User>();
  /** Known players who left, oldest first, with the monotonic time they left. */
  private gone = new Map<string, number>();
  private inflight = new Map<string, Promise<User | undefined>>();
  /** Online players whose lookup failed with something other than 404: retried every intervals.user_retry. */
  readonly pending = new Map<string, GamePlayer>();
  private api: Api;
  private userType: string;
  private logger: Logger;

  constructor(private o: UsersOptions) {
    this.api = o.api;
    this.userType = o.userType;
    this.logger = o.logger;
  }

  /** How many players' users are kept (online and gone). */
  get size(): number {
    return this.known.size;
  }

  get(playerId: string): User | undefined {
    return this.known.get(playerId);
  }

  ensure(player: GamePlayer): Promise<User | undefined> {
    this.sweep();
    const hit = this.known.get(player.id);
    if (hit) {
      if (this.o.online(player.id)) this.gone.delete(player.id);
      return Promise.resolve(hit);
    }
    let p = this.inflight.get(player.id);
    if (!p) {
      p = this.lookup(player).finally(() => this.inflight.delete(player.id));
      this.inflight.set(player.id, p);
    }
    return p;
  }

  /** The player left: no retry of a failed lookup; their user is kept a while (see USER_KEEP_MS), then forgotten. */
  left(playerId: string): void {
    this.pending.delete(playerId);
    if (this.known.has(playerId)) this.markGone(playerId);
    this.sweep();
  }

  private markGone(playerId: string): void {
    this.gone.delete(playerId); // re-inserted: the map stays in the order players left
    this.gone.set(playerId, this.o.clock.monotonic());
  }

  /** Forgets the players gone too long, and the oldest beyond the count. */
  private sweep(): void {
    const now = this.o.clock.monotonic();
    for (const [id, at] of this.gone) {
      if (this.gone.size <= USER_KEEP_MAX && now - at < USER_KEEP_MS) break;
      this.gone.delete(id);
      this.known.delete(id);
    }
  }

  private async lookup(player: GamePlayer): Promise<User | undefined> {
    await this.o.pace?.take(this.o.signal);
    let res = await this.api.getUser(player.id, this.userType);
    if (!res.ok && res.error.kind === "NotFound") {
      const turn = () => this.o.pace?.take(this.o.signal);
      await turn();
      const made = await registerUser(
        this.api,
        { identifier: player.id, type: this.userType, username: player.name },
        turn,
      );
      res = made;
      if (made.ok)
        this.logger.info(made.found ? "found the user another request had just registered" : "registered a new user", {
          player: player.name,
          id: player.id,
          user_id: made.value.id,
        });
      else if (isRejected(made.error)) {
        // The service will not create this user (an id it does not accept): asking again every minute cannot help.
        this.pending.delete(player.id);
        this.logger.error(`the service refused to register this player: ${describeError(made.error)}`, {
          player: player.name,
          id: player.id,
        });
        return undefined;
      }
    }
    if (!res.ok) {
      if (this.o.online(player.id)) this.pending.set(player.id, player);
      this.logger.warn(`user lookup failed, retrying later: ${res.error.message}`, {
        player: player.name,
        id: player.id,
      });
      return undefined;
    }
    this.pending.delete(player.id);
    this.known.set(player.id, res.value);
    if (!this.o.online(player.id)) this.markGone(player.id);
    this.sweep();
    return res.value;
  }
}
