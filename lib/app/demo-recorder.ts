/**
 * What `hub-agent demo` did, for its closing summary (cli/demo-summary.ts says it): read from the simulated game
 * (joins, kicks, messages), the in-memory service (bans issued, rewards executed, every request) and the adverts the
 * agent logged showing.
 */
import type { GamePlayer } from "../game/bridge.ts";
import type { SimGame } from "../game/sim.ts";
import type { LogData, Logger } from "../log.ts";
import type { Sandbox } from "../sandbox/index.ts";

export interface DemoSummary {
  duration_s: number;
  players_joined: { id: string; name: string; joins: number }[];
  kicked: { id: string; name: string; reason: string }[];
  bans_issued: { player: string; reason: string | null; length_s: number | null; by: string }[];
  rewards_run: { player: string; reward: string; packet: string }[];
  adverts_shown: string[];
  messages_to_players: number;
  broadcast_lines: number;
  requests: { total: number; by_status: Record<string, number>; by_endpoint: Record<string, number> };
}

/** Watches one demo from its start: call before the game and the agent start. */
export class DemoRecorder {
  private started: number;
  private joins = new Map<string, { player: GamePlayer; joins: number }>();
  private adverts: string[] = [];
  private seededBans: Set<string>;

  constructor(
    private sim: SimGame,
    private sb: Sandbox,
  ) {
    this.started = Date.now();
    this.seededBans = new Set(sb.state.bans.keys());
    sim.on((e) => {
      if (e.type !== "player_connect") return;
      const seen = this.joins.get(e.player.id);
      this.joins.set(e.player.id, { player: e.player, joins: (seen?.joins ?? 0) + 1 });
    });
  }

  /** The logger, noting each advert the agent reports showing (its `advert` field names it). */
  logger(logger: Logger): Logger {
    const tap = (l: Logger): Logger => ({
      ...l,
      info: (msg: string, data?: LogData) => {
        const id = data?.advert;
        if (typeof id === "string") this.adverts.push(this.sb.state.adverts.get(id)?.title ?? id);
        l.info(msg, data);
      },
      withTag: (tag) => tap(l.withTag(tag)),
    });
    return tap(logger);
  }

  summary(): DemoSummary {
    const { state, control, serverId } = this.sb;
    const name = (id: string) => this.joins.get(id)?.player.name ?? id;
    const userName = (id: string | null) => (id ? (state.users.get(id)?.username ?? id) : "the console");
    const byEndpoint: Record<string, number> = {};
    const byStatus: Record<string, number> = {};
    const requests = control.requests();
    for (const r of requests) {
      byStatus[String(r.status)] = (byStatus[String(r.status)] ?? 0) + 1;
      const key = `${r.method} ${r.path.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\d{6,}/gi, "{id}")}`;
      byEndpoint[key] = (byEndpoint[key] ?? 0) + 1;
    }
    return {
      duration_s: Math.round((Date.now() - this.started) / 1000),
      players_joined: [...this.joins.values()].map(({ player, joins }) => ({
        id: player.id,
        name: player.name,
        joins,
      })),
      kicked: this.sim.actionsOf("kick").map((k) => ({ id: k.player!, name: name(k.player!), reason: k.text ?? "" })),
      bans_issued: [...state.bans.values()]
        .filter((b) => !this.seededBans.has(b.id))
        .map((b) => ({
          player: userName(b.user_id),
          reason: b.reason,
          length_s: b.length,
          by: userName(b.creator_id),
        })),
      rewards_run: [...state.appliedRewards.values()]
        .filter((r) => r.executed_on.includes(serverId))
        .map((r) => ({ player: userName(r.user_id), reward: r.reward.name, packet: r.applied_packet.packet.title })),
      adverts_shown: this.adverts,
      messages_to_players: this.sim.actionsOf("message").length,
      broadcast_lines: this.sim.actionsOf("broadcast").length,
      requests: {
        total: requests.length,
        by_status: byStatus,
        by_endpoint: byEndpoint,
      },
    };
  }
}
