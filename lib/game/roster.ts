/**
 * Who is online, as the bridge has reported it. Log lines and player-list polling both feed it, and it emits
 * each connect and disconnect once per (id, session): a session runs from a connect to the next disconnect, so
 * a join seen in the log and again by the poll is one connect.
 *
 * It also remembers what lines say about ids before a player is online: a slot's name and id (Quake 3 userinfo,
 * srcds validation) and a name's id (Minecraft "UUID of player"), so a connect line that names only a slot or a
 * name can still be reported with the right id.
 */
import type { BridgeEvent, GamePlayer } from "./bridge.ts";

/** What a console line tells of a player: any of id, name and slot (the roster finds the player from it). */
export interface LineRef {
  id?: string;
  name?: string;
  slot?: string;
}

export class Roster {
  #online = new Map<string, GamePlayer>();
  #bySlot = new Map<string, string>();
  /** What identity lines said about a slot that is not (yet) online. */
  #slotInfo = new Map<string, LineRef>();
  /** Slots whose connect line came before their id. */
  #waiting = new Set<string>();
  #nameIds = new Map<string, string>();
  /** Names players went by (lines, lists), for consoles that print chat as `<name>: <text>` (wentBy). */
  #names = new Set<string>();
  #longestName = 0;
  /** Change counter, and per id the counter at its last change, so a poll can tell what changed meanwhile. */
  #seq = 0;
  #changed = new Map<string, number>();

  constructor(private emit: (e: BridgeEvent) => void) {}

  get seq(): number {
    return this.#seq;
  }

  online(): GamePlayer[] {
    return [...this.#online.values()].map((p) => ({ ...p }));
  }

  get(id: string): GamePlayer | undefined {
    return this.#online.get(id);
  }

  /**
   * A name a player goes by, from any line or list that names one. Kept (the newest ROSTER_UNMATCHED_MAX, each at
   * most NAME_MAX characters) after the player renames or leaves: a stale name costs nothing, a missing one a forgery.
   */
  noteName(name: string): void {
    if (name === "" || name.length > NAME_MAX) return;
    remember(this.#names, name);
    this.#longestName = Math.max(this.#longestName, name.length);
  }

  /** Whether a player went by `name` (noteName). */
  wentBy(name: string): boolean {
    return this.#names.has(name);
  }

  /** The longest name noted: a console chat line's name ends before it. */
  get longestName(): number {
    return this.#longestName;
  }

  /** Whether this id connected or disconnected after change counter `seq`. */
  changedSince(id: string, seq: number): boolean {
    return (this.#changed.get(id) ?? -1) > seq;
  }

  /** The online player a line refers to, by id, then slot, then name. */
  find(ref: LineRef): GamePlayer | undefined {
    if (ref.id !== undefined) return this.#online.get(ref.id);
    if (ref.slot !== undefined) {
      const id = this.#bySlot.get(ref.slot);
      if (id !== undefined) return this.#online.get(id);
    }
    if (ref.name !== undefined) {
      for (const p of this.#online.values()) if (p.name === ref.name) return p;
    }
    return undefined;
  }

  /**
   * An identity line: remembers the slot's and the name's id; completes a connect waiting for it. A slot that is
   * online under another id (a renamed Quake player, whose name is the id) leaves and joins as the new one.
   */
  identify(ref: LineRef): void {
    if (ref.name !== undefined) this.noteName(ref.name);
    if (ref.name !== undefined && ref.id !== undefined) remember(this.#nameIds, ref.name, ref.id);
    if (ref.slot === undefined) return;
    const info = { ...this.#slotInfo.get(ref.slot), ...defined(ref) };
    remember(this.#slotInfo, ref.slot, info);
    const onlineId = this.#bySlot.get(ref.slot);
    if (onlineId !== undefined && info.id !== undefined && info.id !== onlineId) {
      this.disconnect({ id: onlineId });
      remember(this.#slotInfo, ref.slot, info);
      remember(this.#waiting, ref.slot);
    }
    if (this.#waiting.has(ref.slot) && info.id !== undefined) this.connect({ slot: ref.slot });
  }

  /** The id a ref stands for, from the ref itself or what identity lines said. */
  resolveId(ref: LineRef): string | undefined {
    if (ref.id !== undefined) return ref.id;
    if (ref.slot !== undefined) {
      const id = this.#bySlot.get(ref.slot) ?? this.#slotInfo.get(ref.slot)?.id;
      if (id !== undefined) return id;
    }
    if (ref.name === undefined) return undefined;
    return this.#nameIds.get(ref.name) ?? this.find({ name: ref.name })?.id;
  }

  /**
   * A connect. Emits player_connect unless the id is already online (same session); returns false when the id is
   * not known yet (the caller may poll the list to learn it). A slot-only connect waits for its identity line.
   */
  connect(ref: LineRef, extra?: GamePlayer["extra"]): boolean {
    if (ref.name !== undefined) this.noteName(ref.name);
    const id = this.resolveId(ref);
    const info = ref.slot !== undefined ? this.#slotInfo.get(ref.slot) : undefined;
    if (id === undefined) {
      if (ref.slot !== undefined) remember(this.#waiting, ref.slot);
      return false;
    }
    if (ref.slot !== undefined) this.#waiting.delete(ref.slot);
    const current = this.#online.get(id);
    if (current) {
      // Same session: only learn what's new (a slot from the poll, a changed name).
      if (ref.slot !== undefined && current.slot !== ref.slot) this.#setSlot(current, ref.slot);
      if (ref.name && current.name !== ref.name) current.name = ref.name;
      if (extra) current.extra = { ...current.extra, ...extra };
      return true;
    }
    const name = ref.name ?? info?.name ?? id;
    const player: GamePlayer = { id, name, ...(ref.slot !== undefined ? { slot: ref.slot } : {}) };
    if (extra) player.extra = extra;
    this.#online.set(id, player);
    if (ref.slot !== undefined) this.#setSlot(player, ref.slot);
    this.#touch(id);
    this.emit({ type: "player_connect", player: { ...player } });
    return true;
  }

  /** A disconnect of an online player (anyone else is ignored: we never reported them). */
  disconnect(ref: LineRef, reason?: string): void {
    if (ref.slot !== undefined) {
      this.#waiting.delete(ref.slot);
      this.#slotInfo.delete(ref.slot);
    }
    const player = this.find(ref);
    if (!player) return;
    this.#online.delete(player.id);
    if (this.#nameIds.get(player.name) === player.id) this.#nameIds.delete(player.name);
    if (player.slot !== undefined && this.#bySlot.get(player.slot) === player.id) {
      this.#bySlot.delete(player.slot);
      this.#slotInfo.delete(player.slot);
    }
    this.#touch(player.id);
    this.emit({ type: "player_disconnect", player: { ...player }, ...(reason !== undefined ? { reason } : {}) });
  }

  /** Drops change records older than `seq` of players who are offline (a poll that started later can't race them). */
  prune(seq: number): void {
    for (const [id, at] of this.#changed) if (at <= seq && !this.#online.has(id)) this.#changed.delete(id);
  }

  #setSlot(player: GamePlayer, slot: string): void {
    if (player.slot !== undefined && this.#bySlot.get(player.slot) === player.id) this.#bySlot.delete(player.slot);
    player.slot = slot;
    this.#bySlot.set(slot, player.id);
  }

  #touch(id: string): void {
    this.#changed.set(id, ++this.#seq);
  }
}

/**
 * What identity lines say is kept for at most this many names and slots each, the oldest forgotten first: entries
 * of players online or about to connect (seconds after their identity line) are the newest, while those of players
 * who never connected (a failed login, a name said and never used) would otherwise stay for good.
 */
export const ROSTER_UNMATCHED_MAX = 10_000;

/** The longest name noted (1 KiB): far beyond any game's (srcds: 32 bytes), and it bounds the scan of a chat line. */
export const NAME_MAX = 1024;

/** Sets (or, for a set, adds) `key` as the newest entry, dropping the oldest past ROSTER_UNMATCHED_MAX. */
function remember<V>(into: Map<string, V> | Set<string>, key: string, value?: V): void {
  into.delete(key);
  if (into instanceof Map) into.set(key, value as V);
  else into.add(key);
  if (into.size > ROSTER_UNMATCHED_MAX) into.delete(into.keys().next().value as string);
}

function defined(ref: LineRef): LineRef {
  return Object.fromEntries(Object.entries(ref).filter(([, v]) => v !== undefined)) as LineRef;
}
