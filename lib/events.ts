import type { Logger } from "./log.ts";
import type { GamePlayer } from "./game/bridge.ts";
import type { Server, User } from "./api/client.ts";

/** The spec's client-side events (docs/client-interface.md §7) and their data. */
export interface HubEvents {
  hub_loading_start: Record<string, never>;
  hub_loading_finish: Record<string, never>;
  hub_api_ready: { server: Server };
  hub_api_failed: { reason: string; cached_at?: number };
  hub_ready: { server: Server; source: "api" | "cache" };
  hub_ply_connected: { player: GamePlayer };
  /**
   * `resumed`: the player was already online when this run started (found by the initial status, not seen
   * connecting), so a previous run may have handled their connect already.
   */
  hub_ply_initialized: { player: GamePlayer; user: User; resumed: boolean };
}
export type HubEventName = keyof HubEvents;
export const HUB_EVENTS: HubEventName[] = [
  "hub_loading_start",
  "hub_loading_finish",
  "hub_api_ready",
  "hub_api_failed",
  "hub_ready",
  "hub_ply_connected",
  "hub_ply_initialized",
];

type Handler<K extends HubEventName> = (data: HubEvents[K]) => void | Promise<void>;

/** A small typed event bus. A failing handler is logged and never stops the others. */
export class EventBus {
  private handlers = new Map<HubEventName, Handler<never>[]>();
  private pending = new Set<Promise<void>>();
  constructor(private logger: Logger) {}

  on<K extends HubEventName>(name: K, fn: Handler<K>): () => void {
    const list = this.handlers.get(name) ?? [];
    list.push(fn as Handler<never>);
    this.handlers.set(name, list);
    return () =>
      this.handlers.set(
        name,
        (this.handlers.get(name) ?? []).filter((h) => h !== fn),
      );
  }

  /** Calls every handler; resolves when all have finished. */
  emit<K extends HubEventName>(name: K, data: HubEvents[K]): Promise<void> {
    this.logger.debug("event", { event: name });
    const runs = (this.handlers.get(name) ?? []).map(async (h) => {
      try {
        await (h as Handler<K>)(data);
      } catch (e) {
        const level = (e as { reported?: boolean })?.reported ? "debug" : "error"; // the store logged it once
        this.logger[level](`a ${name} handler failed: ${(e as Error).message}`);
      }
    });
    const all = Promise.all(runs).then(() => {});
    this.pending.add(all);
    void all.finally(() => this.pending.delete(all));
    return all;
  }

  /** Handlers still running. */
  get busy(): number {
    return this.pending.size;
  }

  /** Waits for every handler still running (shutdown). */
  async idle(): Promise<void> {
    while (this.pending.size) await Promise.all(this.pending);
  }
}
