/**
 * A byte stream cut into bounded lines, as the plugin link reads each connection. Separate from plugin-link.ts
 * because it is pure framing: no socket, no protocol, only the limit (which may change as the peer is trusted).
 */

/** Splits a byte stream into lines (UTF-8 across chunks, `\n` or `\r\n`), dropping any line over the limit whole. */
export class BoundedLines {
  #decoder = new TextDecoder("utf-8");
  #parts: string[] = [];
  #bytes = 0;
  #dropping = false;

  constructor(
    private onLine: (line: string) => void,
    private onTooLong: (bytes: number) => void,
    private limit: () => number,
  ) {}

  push(chunk: Uint8Array): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      const piece = chunk.subarray(start, nl === -1 ? chunk.length : nl);
      this.#take(piece, nl !== -1);
      if (nl === -1) return;
      start = nl + 1;
    }
  }

  #take(piece: Uint8Array, ends: boolean): void {
    if (!this.#dropping) {
      this.#bytes += piece.length;
      if (this.#bytes > this.limit()) {
        this.#dropping = true;
        this.#parts = [];
        this.#decoder = new TextDecoder("utf-8");
        this.onTooLong(this.limit());
      } else this.#parts.push(this.#decoder.decode(piece, { stream: !ends }));
    }
    if (!ends) return;
    const line = this.#parts.join("").replace(/\r$/, "");
    const dropped = this.#dropping;
    this.#parts = [];
    this.#bytes = 0;
    this.#dropping = false;
    if (!dropped && line.trim() !== "") this.onLine(line);
  }
}
