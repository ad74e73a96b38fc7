/**
 * Event sources deliver the game's console as text lines; one preset parser turns lines into bridge events.
 * Sources know nothing about games.
 */
import { stripVTControlCharacters } from "node:util";

/** Where a line came from: the wrapped server's stdout or stderr, or a tailed log file. */
export type LineStream = "stdout" | "stderr" | "log";

export type OnLine = (line: string, stream: LineStream) => void;

export interface LineSource {
  /**
   * Starts delivering lines (ANSI-stripped, complete, without the line break). Resolves once the source runs
   * (a process spawned, a tail started); rejects when it cannot start at all. `onLine` must not block: sources
   * keep draining their input while it runs.
   */
  start(onLine: OnLine): Promise<void>;
  /** Stops and releases everything; idempotent. */
  stop(): Promise<void>;
}

/**
 * The longest line a source delivers (1 MiB): what goes beyond is dropped up to the line's end, never delivered as
 * a line of its own (its start would be whatever text sat there: a player's). Minecraft's `list uuids` answer is
 * one line of ~55 characters a player, so this still holds ~19,000 players.
 */
export const MAX_LINE_CHARS = 1024 * 1024;

/**
 * The part of a line a pattern sees (64 KiB): far beyond any game's chat or list row, and short enough that a
 * linear pattern takes well under a millisecond on it (docs/game-consoles.md §8). A list parser sees a whole reply.
 */
export const MATCH_CHARS = 64 * 1024;

/**
 * Terminal escapes (colours, cursor moves) and stray NULs (a log written past a truncation) are removed. Line ends
 * left inside a text (`\r`, `\n`, U+2028, U+2029: JavaScript's `.` stops at each) become spaces, so `.` matches every
 * character of a line and a pattern ending in `(.*)$` can't fail on one (and backtrack over it again and again).
 */
export function cleanLine(text: string): string {
  return stripVTControlCharacters(text)
    .replace(/\0/g, "")
    .replace(/[\n\r\u2028\u2029]/g, " ");
}

/** What a pattern sees of a line: cleaned, and cut at MATCH_CHARS. */
export function boundLine(text: string): string {
  return cleanLine(text.length > MATCH_CHARS ? text.slice(0, MATCH_CHARS) : text);
}

/**
 * Cuts a byte stream into lines: UTF-8 decoded across chunk boundaries, `\n`, `\r\n` and a lone `\r` end a
 * line, the unfinished tail is kept until its end arrives (or `flush()`), at most MAX_LINE_CHARS of it: the rest of
 * a longer line is dropped. Empty lines are dropped.
 */
export class LineSplitter {
  #decoder = new TextDecoder("utf-8");
  #partial = "";
  /** The current line passed MAX_LINE_CHARS: its start was kept, the rest is skipped up to its end. */
  #cut = false;

  constructor(private onLine: (line: string) => void) {}

  push(chunk: Uint8Array | string): void {
    this.#take(typeof chunk === "string" ? chunk : this.#decoder.decode(chunk, { stream: true }));
  }

  /** Delivers what is left (the stream ended or the file rotated away). */
  flush(): void {
    this.#take(this.#decoder.decode());
    const rest = this.#partial;
    this.#partial = "";
    this.#line(rest);
  }

  #take(text: string): void {
    // Only as much of the current line as can still be kept joins it: a line without an end can't grow memory.
    const s = this.#partial + text;
    let start = 0;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      // A trailing "\r" may be the first half of "\r\n": wait for the next chunk.
      if (c === 13 && i === s.length - 1) break;
      this.#line(s.slice(start, i));
      if (c === 13 && s.charCodeAt(i + 1) === 10) i++;
      start = i + 1;
    }
    const rest = s.slice(start);
    if (rest.length <= MAX_LINE_CHARS || this.#cut) this.#partial = this.#cut ? rest.slice(-1) : rest;
    else {
      this.#emit(rest.slice(0, MAX_LINE_CHARS));
      this.#cut = true;
      this.#partial = rest.slice(-1); // a "\r" whose "\n" may follow
    }
  }

  /** A line ended: delivered, unless it is the rest of a line already cut. */
  #line(text: string): void {
    if (this.#cut) this.#cut = false;
    else this.#emit(text);
  }

  #emit(raw: string): void {
    const line = cleanLine(raw.length > MAX_LINE_CHARS ? raw.slice(0, MAX_LINE_CHARS) : raw);
    if (line.trim() !== "") this.onLine(line);
  }
}
