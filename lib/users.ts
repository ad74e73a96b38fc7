import { describeError, isRejected, type Api, type User } from "./api/client.ts";
import type { GamePlayer } from "./game/bridge.ts";
import type { Logger } from "./log.ts";

/**
 * Rule 6: the player → service user map. `get` answers without the API; `ensure` looks the user up (and creates
 * them on 404), with concurrent calls for the same player sharing one request.
 */
export class Users {
  private known = new Map<string, User>();
  private inflight = new Map<string, Promise<User | undefined>>();
  /** Players whose lookup failed with something other than 404: retried every intervals.user_retry. */
  readonly pending = new Map<string, GamePlayer>();

  constructor(
    private api: Api,
    private userType: string,
    private logger: Logger,
  ) {}

  get(playerId: string): User | undefined {
    return this.known.get(playerId);
  }

  ensure(player: GamePlayer): Promise<User | undefined> {
    const hit = this.known.get(player.id);
    if (hit) return Promise.resolve(hit);
    let p = this.inflight.get(player.id);
    if (!p) {
      p = this.lookup(player).finally(() => this.inflight.delete(player.id));
      this.inflight.set(player.id, p);
    }
    return p;
  }

  forget(playerId: string): void {
    this.pending.delete(playerId);
  }

  private async lookup(player: GamePlayer): Promise<User | undefined> {
    let res = await this.api.getUser(player.id, this.userType);
    if (!res.ok && res.error.kind === "NotFound") {
      res = await this.api.createUser({ identifier: player.id, type: this.userType, username: player.name });
      if (res.ok)
        this.logger.info("registered a new user", { player: player.name, id: player.id, user_id: res.value.id });
      else if (isRejected(res.error)) {
        // The service will not create this user (an id it does not accept): asking again every minute cannot help.
        this.pending.delete(player.id);
        this.logger.error(`the service refused to register this player: ${describeError(res.error)}`, {
          player: player.name,
          id: player.id,
        });
        return undefined;
      }
    }
    if (!res.ok) {
      this.pending.set(player.id, player);
      this.logger.warn(`user lookup failed, retrying later: ${res.error.message}`, {
        player: player.name,
        id: player.id,
      });
      return undefined;
    }
    this.pending.delete(player.id);
    this.known.set(player.id, res.value);
    return res.value;
  }
}
