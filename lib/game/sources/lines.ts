/**
 * Event sources deliver the game's console as text lines; one preset parser turns lines into bridge events.
 * Sources know nothing about games.
 */
import { stripVTControlCharacters } from "node:util";
import { cutLine, MAX_LINE_CHARS } from "./cut.ts";

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

export { MATCH_CHARS, MAX_LINE_CHARS } from "./cut.ts";

/**
 * Terminal escapes (colours, cursor moves) and stray NULs (a log written past a truncation) are removed, and line
 * ends left inside a text become spaces (cut.ts).
 */
export function cleanLine(text: string): string {
  return stripVTControlCharacters(text)
    .replaceAll("\0", "")
    .replace(/[\n\r\u2028\u2029]/g, " ");
}

/** What a pattern sees of a line: cut (cutLine) and cleaned. */
export function boundLine(text: string): string {
  return cleanLine(cutLine(text));
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
