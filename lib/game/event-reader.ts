/**
 * What the game says, read into roster changes and bridge events: a console line through the preset's patterns
 * (docs/game-consoles.md §8), or a structured console's event (the plugin protocol). Separate from preset-bridge.ts,
 * which sends commands and tracks whether the game is up: this is where text a player can forge (a name, a chat line)
 * meets the roster.
 */
import type { Logger } from "../log.ts";
import type { BridgeEvent, BridgeEventType, GamePlayer } from "./bridge.ts";
import { parseChatCommand } from "./chat.ts";
import type { OwnGroupChanges } from "./echoes.ts";
import type { LineKind, Preset } from "./presets/types.ts";
import { LINE_KINDS } from "./presets/types.ts";
import type { LineRef, Roster } from "./roster.ts";
import { boundLine } from "./sources/lines.ts";
import type { PlayerPoll } from "./sources/poll.ts";
import type { StructuredEvent } from "./structured.ts";
import { errorMessage } from "./transports/transport.ts";

/** The longest chat prefix (#chatEcho) read: srcds' team and state marks, a few dozen characters. */
const CHAT_PREFIX_MAX = 64;

export interface EventReaderOptions {
  preset: Preset;
  roster: Roster;
  /** The group changes the agent made itself: their echoes are not reported. */
  own: OwnGroupChanges;
  /** Asked for the list when a line says less than the roster needs. */
  poll: Pick<PlayerPoll, "trigger">;
  emit(e: BridgeEvent): void;
  log: Logger;
  /** hub-agent runs the server: the wrapper reports it ready itself. */
  wrapped: boolean;
}

export class EventReader {
  readonly preset: Preset;
  #roster: Roster;
  #own: OwnGroupChanges;
  #poll: Pick<PlayerPoll, "trigger">;
  #emit: (e: BridgeEvent) => void;
  #log: Logger;
  #wrapped: boolean;

  constructor(o: EventReaderOptions) {
    this.preset = o.preset;
    this.#roster = o.roster;
    this.#own = o.own;
    this.#poll = o.poll;
    this.#emit = o.emit;
    this.#log = o.log;
    this.#wrapped = o.wrapped;
  }

  /** One line of the game's console or log. */
  line(raw: string): void {
    // Cut and cleaned before any pattern runs (docs/game-consoles.md §8).
    const line = boundLine(raw).trimEnd();
    if (!line || this.#chatEcho(line)) return;
    for (const kind of LINE_KINDS) {
      for (const re of this.preset.lines[kind] ?? []) {
        const m = re.exec(line);
        if (!m) continue;
        try {
          this.#handle(kind, m.groups ?? {});
        } catch (e) {
          this.#log.warn(`could not handle a ${kind} line: ${errorMessage(e)}`, { line });
        }
        return;
      }
    }
  }

  /**
   * Whether a line is a player's chat as the console prints it (`preset.consoleChat`: `<prefix><name>: <text>`) for a
   * name a player went by: then it is no event, whatever follows, since a name can be anything, even the log's date
   * prefix (docs/game-consoles.md §8). Every `: ` is tried, so a name that starts another's is no way around it.
   */
  #chatEcho(line: string): boolean {
    const prefix = this.preset.consoleChat;
    if (!prefix) return false;
    const roster = this.#roster;
    // A chat prefix is short ("(Counter-Terrorist) *DEAD* "): read past that, a long line's scan would grow with it.
    const from = prefix.exec(line.slice(0, CHAT_PREFIX_MAX))?.[0].length ?? 0;
    const said = (name: string) => roster.wentBy(name) || roster.wentBy(this.preset.cleanName(name));
    const last = from + roster.longestName;
    for (let at = line.indexOf(": "); at >= 0 && at <= last; at = line.indexOf(": ", at + 1)) {
      if (said(line.slice(0, at)) || (from > 0 && said(line.slice(from, at)))) return true;
    }
    return false;
  }

  #handle(kind: LineKind, g: Record<string, string | undefined>): void {
    const roster = this.#roster;
    const ref = lineRef(this.preset, g, "");
    // Whoever a line names goes by that name: their console chat lines are no events (#chatEcho).
    for (const name of [ref.name, g.killer_name && this.preset.cleanName(g.killer_name)])
      if (name) roster.noteName(name);
    switch (kind) {
      case "ready":
        // A (re)started server: its list is the truth now. With a wrapper, the wrapper reports ready itself.
        if (!this.#wrapped) this.#poll.trigger();
        return;
      case "identity":
        roster.identify(ref);
        return;
      case "connect":
        // A join line with only a name (Minecraft without the UUID line), or only a slot that no identity line
        // will name (DDNet): the list knows the rest.
        if (!roster.connect(ref) && (ref.slot === undefined || !this.preset.lines.identity?.length))
          this.#poll.trigger();
        return;
      case "disconnect":
        roster.disconnect(ref, g.reason);
        return;
      case "spawn": {
        const player = roster.find(ref);
        if (player) this.#emit({ type: "player_spawn", player });
        return;
      }
      case "death": {
        const player = roster.find(ref);
        const killer = roster.find(lineRef(this.preset, g, "killer_"));
        if (player) this.#emit({ type: "player_death", player, ...(killer ? { killer } : {}) });
        return;
      }
      case "chat": {
        const player = this.#speaker(ref);
        const parsed = parseChatCommand(g.text ?? "", this.preset.commandPrefix);
        if (player && parsed) this.#emit({ type: "chat_command", player, ...parsed });
        return;
      }
      case "group_add":
      case "group_remove": {
        const op = kind === "group_add" ? "add" : "remove";
        const id = roster.resolveId(ref);
        if (id === undefined || !g.group) return;
        if (this.#own.isEcho(id, g.group, op)) return; // our own change, reported back
        const player = roster.get(id) ?? { id, name: ref.name ?? id };
        this.#emit({ type: "group_change", player, group: g.group, op });
        return;
      }
    }
  }

  /**
   * Who said a chat line. Where the name is the identity and the line gives the slot too (Teeworlds, DDNet), it is
   * the player in that slot, and only if the line names them by their own name: a line can't tell where a name
   * holding ": " ends, and `Bob: !ban Eve 1 x` (a name) saying anything must not be Bob saying `!ban Eve 1 x`.
   */
  #speaker(ref: LineRef): GamePlayer | undefined {
    if (this.preset.identity !== "name" || ref.slot === undefined) return this.#roster.find(ref);
    const player = this.#roster.find({ slot: ref.slot });
    return player && (ref.name === undefined || player.name === ref.name) ? player : undefined;
  }

  /** One event of a structured console. */
  structured(e: StructuredEvent): void {
    const roster = this.#roster;
    const ref = lineRef(this.preset, { id: e.player.id, name: e.player.name, slot: e.player.slot }, "");
    if (ref.id === undefined) {
      this.#log.debug(`ignored a ${e.type} event of a player without a usable id`, { id: e.player.id });
      return;
    }
    switch (e.type) {
      case "connect":
        roster.connect(ref, e.ip ? { ip: e.ip } : undefined);
        return;
      case "disconnect":
        roster.disconnect(ref, e.reason);
        return;
      case "spawn":
      case "death": {
        const player = roster.find(ref);
        if (!player) return;
        if (e.type === "spawn") return this.#emit({ type: "player_spawn", player });
        const killer = e.killer && roster.find(lineRef(this.preset, { id: e.killer.id, name: e.killer.name }, ""));
        return this.#emit({ type: "player_death", player, ...(killer ? { killer } : {}) });
      }
      case "chat": {
        const player = roster.find(ref);
        const parsed = parseChatCommand(e.text, this.preset.commandPrefix);
        if (player && parsed) this.#emit({ type: "chat_command", player, ...parsed });
        return;
      }
      case "group": {
        if (this.#own.isEcho(ref.id, e.group, e.op)) return; // our own change, reported back
        const player = roster.get(ref.id) ?? { id: ref.id, name: ref.name ?? ref.id };
        const seconds = e.seconds !== undefined ? { seconds: e.seconds } : {};
        this.#emit({ type: "group_change", player, group: e.group, op: e.op, ...seconds });
        return;
      }
    }
  }
}

/** The player a match names: `{prefix}id` normalised, `{prefix}name` cleaned, `{prefix}slot`. */
export function lineRef(preset: Preset, g: Record<string, string | undefined>, prefix: "" | "killer_"): LineRef {
  const ref: LineRef = {};
  const rawId = g[`${prefix}id`];
  const rawName = g[`${prefix}name`];
  const slot = g[`${prefix}slot`];
  if (rawName !== undefined) ref.name = preset.cleanName(rawName);
  if (slot !== undefined) ref.slot = slot;
  const id =
    rawId !== undefined
      ? preset.normaliseId(rawId)
      : preset.identity === "name" && rawName !== undefined
        ? preset.normaliseId(rawName)
        : undefined;
  if (id !== undefined) ref.id = id;
  return ref;
}

/** What a preset bridge can report: joins and leaves always (polling), the rest where the preset has lines for it. */
export function eventTypes(preset: Preset, has: { lines: boolean; wrapped: boolean }): Set<BridgeEventType> {
  const types = new Set<BridgeEventType>(["ready", "down", "player_connect", "player_disconnect"]);
  const lines = (kind: LineKind) => has.lines && !!preset.lines[kind]?.length;
  if (lines("spawn")) types.add("player_spawn");
  if (lines("death")) types.add("player_death");
  if (lines("chat")) types.add("chat_command");
  if (lines("group_add") || lines("group_remove")) types.add("group_change");
  if (has.wrapped) types.add("operator_input");
  return types;
}
