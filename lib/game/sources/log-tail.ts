import { Buffer } from "node:buffer";
import { type FileHandle, open, stat } from "node:fs/promises";
import { type Clock, systemClock } from "../../clock.ts";
import { type Logger, silentLogger } from "../../log.ts";
import { errorMessage } from "../transports/transport.ts";
import { LineSplitter, type LineSource, type OnLine } from "./lines.ts";

export interface LogTailOptions {
  /** The log file (`game.log_file`); it need not exist yet. */
  path: string;
  /** How often to look for new lines, rotation and truncation (default 250 ms). */
  pollMs?: number;
  /** Also read what the file holds already (default: start at its end, like `tail -F`). */
  fromStart?: boolean;
  clock?: Clock;
  logger?: Logger;
}

/** Bytes remembered from just before the read position, to notice a file truncated and refilled between polls. */
const TAIL_BYTES = 64;
const CHUNK = 64 * 1024;

interface Current {
  fh: FileHandle;
  dev: number;
  ino: number;
  /** Next byte to read. */
  pos: number;
  /** The last bytes read (up to TAIL_BYTES), ending at `pos`. */
  tail: Buffer;
}

/**
 * Follows a log file like `tail -F`, by polling (file watchers differ per platform and miss renames):
 * - starts at the end; a line half-written at that moment is skipped, not delivered as a fragment;
 * - rotation by rename (or delete) and a new file: the old file is read to its end, then the new one from
 *   its start;
 * - truncation (copytruncate): reads again from the start, also when the file grew back past the old position
 *   between two polls (the bytes before the position changed);
 * - partial lines wait for their end; a missing file is waited for.
 */
export class LogTail implements LineSource {
  readonly path: string;
  #o: Required<Omit<LogTailOptions, "clock" | "logger">>;
  #clock: Clock;
  #log: Logger;
  #cur?: Current;
  #splitter?: LineSplitter;
  #skipPartial = false;
  #stop = new AbortController();
  #loop?: Promise<void>;
  #lastError = "";

  constructor(opts: LogTailOptions) {
    this.path = opts.path;
    this.#o = { pollMs: 250, fromStart: false, ...opts };
    this.#clock = opts.clock ?? systemClock;
    this.#log = (opts.logger ?? silentLogger).withTag("log-tail");
  }

  async start(onLine: OnLine): Promise<void> {
    if (this.#loop) return;
    this.#splitter = new LineSplitter((line) => {
      try {
        onLine(line, "log");
      } catch (e) {
        this.#log.warn(`line handler failed: ${errorMessage(e)}`);
      }
    });
    const cur = await this.#open(!this.#o.fromStart).catch((e: unknown) => this.#problem(e));
    if (!cur) this.#log.info(`waiting for ${this.path} to appear`);
    this.#loop = this.#run();
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#loop;
    this.#splitter?.flush();
    await this.#cur?.fh.close().catch(() => {});
    this.#cur = undefined;
  }

  async #run(): Promise<void> {
    while (!this.#stop.signal.aborted) {
      try {
        await this.#poll();
        this.#lastError = "";
      } catch (e) {
        this.#problem(e);
      }
      try {
        await this.#clock.sleep(this.#o.pollMs, this.#stop.signal);
      } catch {
        return;
      }
    }
  }

  #problem(e: unknown): undefined {
    const message = `${this.path}: ${errorMessage(e)}`;
    if (message !== this.#lastError) this.#log.warn(message); // once per distinct problem, not every poll
    this.#lastError = message;
    return undefined;
  }

  async #poll(): Promise<void> {
    const cur = this.#cur;
    if (!cur) {
      if (await this.#open(false)) await this.#drain();
      return;
    }
    const now = await stat(this.path).catch((e: NodeJS.ErrnoException) => {
      if (e.code === "ENOENT") return undefined;
      throw e;
    });
    if (now && now.ino === cur.ino && now.dev === cur.dev) {
      // A refilled file (same size or larger) is caught by #drain, which checks the bytes before the position.
      if (now.size < cur.pos) this.#truncated(cur);
      await this.#drain();
      return;
    }
    // Renamed or deleted: the old file still holds what was written before, then the new one starts.
    await this.#drain();
    this.#splitter?.flush();
    this.#cur = undefined;
    await cur.fh.close().catch(() => {});
    this.#log.info(now ? `${this.path} was rotated: following the new file` : `${this.path} was moved away`);
    if (now && (await this.#open(false))) await this.#drain();
  }

  #truncated(cur: Current): void {
    this.#log.info(`${this.path} was truncated: reading it from the start`);
    this.#splitter?.flush();
    Object.assign(cur, { pos: 0, tail: Buffer.alloc(0) });
    this.#skipPartial = false;
  }

  /** Opens the file if it exists, at its end or its start. */
  async #open(atEnd: boolean): Promise<Current | undefined> {
    let fh: FileHandle;
    try {
      fh = await open(this.path, "r");
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw e;
    }
    const s = await fh.stat();
    const cur: Current = { fh, dev: s.dev, ino: s.ino, pos: 0, tail: Buffer.alloc(0) };
    this.#skipPartial = false;
    if (atEnd && s.size > 0) {
      cur.pos = s.size;
      cur.tail = await this.#read(fh, Math.max(0, s.size - TAIL_BYTES), Math.min(TAIL_BYTES, s.size));
      // Started in the middle of a line: its start is gone, so skip to the next line.
      this.#skipPartial = cur.tail.at(-1) !== 0x0a;
    }
    this.#cur = cur;
    return cur;
  }

  async #read(fh: FileHandle, position: number, length: number): Promise<Buffer> {
    const buf = Buffer.alloc(length);
    const { bytesRead } = await fh.read(buf, 0, length, position);
    return buf.subarray(0, bytesRead);
  }

  /** Reads from the position to the current end of the file. */
  async #drain(): Promise<void> {
    const cur = this.#cur;
    if (!cur) return;
    for (;;) {
      // The bytes before the position are read in the same call as the new ones: a file truncated and refilled
      // between the poll's check and this read would otherwise be read on from the middle of its new content.
      const back = cur.tail.length;
      const both = await this.#read(cur.fh, cur.pos - back, back + CHUNK);
      if (back && !both.subarray(0, back).equals(cur.tail)) {
        this.#truncated(cur);
        continue;
      }
      let data = both.subarray(back);
      if (data.length === 0) return;
      cur.pos += data.length;
      cur.tail = Buffer.from(Buffer.concat([cur.tail, data.subarray(-TAIL_BYTES)]).subarray(-TAIL_BYTES));
      if (this.#skipPartial) {
        const nl = data.indexOf(0x0a);
        this.#skipPartial = nl < 0;
        data = data.subarray(nl + 1);
        if (nl < 0) continue;
      }
      this.#splitter?.push(data);
      if (this.#stop.signal.aborted) return;
    }
  }
}
