/**
 * A console that speaks in players rather than lines (the plugin protocol, docs/plugin-protocol.md): it reports
 * joins, leaves, chat, spawns, deaths and group changes as structured events, lists the players itself, and kicks,
 * messages and sets groups by id. The preset bridge uses it instead of the preset's line patterns and command
 * templates; ids and names still go through the preset (normalised, cleaned), and raw commands through `exec`.
 */
import type { BridgeEventType } from "./bridge.ts";
import type { PlayerList } from "./presets/types.ts";

/** A player as the console names them: the id as the game gives it, the name, the game's own handle. */
export interface PlayerRef {
  id: string;
  name: string;
  slot?: string;
}

export type StructuredEvent =
  | { type: "connect"; player: PlayerRef; ip?: string }
  | { type: "disconnect"; player: PlayerRef; reason?: string }
  | { type: "spawn"; player: PlayerRef }
  | { type: "death"; player: PlayerRef; killer?: PlayerRef }
  | { type: "chat"; player: PlayerRef; text: string }
  | { type: "group"; player: PlayerRef; group: string; op: "add" | "remove"; seconds?: number };

export interface StructuredConsole {
  /** The bridge events it can report (from what the other side said it sends). */
  readonly events: ReadonlySet<BridgeEventType>;
  /** Starts accepting the other side (a listener: rejects when its address can't be bound). */
  start(): Promise<void>;
  /** Subscribes to its events; returns the unsubscribe function. */
  onEvent(fn: (e: StructuredEvent) => void): () => void;
  /** The players online; ids as the game gives them (the bridge normalises them). */
  players(opts?: { timeoutMs?: number }): Promise<PlayerList>;
  kick(player: PlayerRef, reason: string): Promise<void>;
  /** One line to one player, or to everyone with null. */
  message(player: PlayerRef | null, text: string): Promise<void>;
  setGroup(player: PlayerRef, group: string, op: "add" | "remove", seconds?: number): Promise<void>;
}
