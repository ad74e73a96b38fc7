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

/** A partial line longer than this is delivered as it is, so a stream without line breaks can't grow memory. */
export const MAX_LINE_CHARS = 64 * 1024;

/** Terminal escapes (colours, cursor moves) and stray NULs (a log written past a truncation). */
export function cleanLine(text: string): string {
  return stripVTControlCharacters(text).replaceAll("\0", "");
}

/**
 * Cuts a byte stream into lines: UTF-8 decoded across chunk boundaries, `\n`, `\r\n` and a lone `\r` end a
 * line, the unfinished tail is kept until its end arrives (or `flush()`). Empty lines are dropped.
 */
export class LineSplitter {
  #decoder = new TextDecoder("utf-8");
  #partial = "";

  constructor(private onLine: (line: string) => void) {}

  push(chunk: Uint8Array | string): void {
    this.#take(typeof chunk === "string" ? chunk : this.#decoder.decode(chunk, { stream: true }));
  }

  /** Delivers what is left (the stream ended or the file rotated away). */
  flush(): void {
    this.#take(this.#decoder.decode());
    const rest = this.#partial;
    this.#partial = "";
    this.#emit(rest);
  }

  #take(text: string): void {
    const s = this.#partial + text;
    let start = 0;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      // A trailing "\r" may be the first half of "\r\n": wait for the next chunk.
      if (c === 13 && i === s.length - 1) break;
      this.#emit(s.slice(start, i));
      if (c === 13 && s.charCodeAt(i + 1) === 10) i++;
      start = i + 1;
    }
    let rest = s.slice(start);
    while (rest.length > MAX_LINE_CHARS) {
      this.#emit(rest.slice(0, MAX_LINE_CHARS));
      rest = rest.slice(MAX_LINE_CHARS);
    }
    this.#partial = rest;
  }

  #emit(raw: string): void {
    const line = cleanLine(raw);
    if (line.trim() !== "") this.onLine(line);
  }
}
