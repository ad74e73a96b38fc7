/**
 * Console commands over the wrapped server's stdin, replies read from its stdout and stderr
 * (docs/game-consoles.md §2.3). stdin has no request/response: a command that needs an answer is bracketed by echoes
 * of two random markers, and the lines in between are its reply (what the game printed before the console read the
 * command, a player's chat, comes before the first and is game output); on a console without echo a reply ends at a
 * pattern (`until`) or after a quiet period.
 */
import type { Clock } from "../../clock.ts";
import { CommandQueue, type QueuedCommand } from "../transports/command-queue.ts";
import {
  mayHaveRun,
  type SendOptions,
  type Transport,
  TransportError,
  type TransportState,
} from "../transports/transport.ts";
import { Gate } from "./gate.ts";
import { boundLine } from "../sources/lines.ts";
import { type LineUse, singleMatch, type Supervisor } from "./supervisor.ts";

export interface StdioTransportOptions {
  /**
   * Renders a console command that prints `marker` on a line of its own (`(m) => "echo " + m`). Replies are the
   * lines between a command and its marker. Without it (Minecraft has no echo) commands are fire-and-forget and
   * resolve with "", unless the call passes `until`.
   */
  echo?: (marker: string) => string;
  /**
   * Without `echo`: a reply ends once the server printed nothing for this long (ms), so every command gets one.
   * Output the game prints meanwhile (a join) is taken into the reply: the poll after it sees the join instead.
   */
  quietMs?: number;
  /** Default per-command timeout: waiting for the server to be ready, in the queue, and for the reply (default 10 s). */
  timeoutMs?: number;
  /**
   * The console reads its stdin in pieces of at most this many bytes and runs each piece as it is (ioq3: 256): a
   * line cut at a piece's end would run its rest as a command of its own. Then no more is written than it reads at
   * once: a longer line is refused, and a write waits until the console echoed the markers of what is still unread.
   */
  readBytes?: number;
  clock: Clock;
}

export interface StdioSendOptions extends SendOptions {
  /** The reply ends with the first line that matches (included); for consoles without an echo command. */
  until?: RegExp;
  /**
   * With `until`: the line the reply's own part starts with (a list's header). `until` counts only after it, so a
   * list framed by the same line above and below its rows ends at the second one, also when it has no rows.
   */
  start?: RegExp;
}

/** A command in hub-agent's queue: its reply ends at `until` (after `start`), else at the echo marker. */
interface CommandJob {
  command: string;
  until?: RegExp;
  start?: RegExp;
}

/** A command written whose reply is still open. */
interface OpenReply {
  /** Whether the reply's first line may come: its begin marker was seen (or it has none). */
  begun: boolean;
  begins: (line: string) => boolean;
  lines: string[];
  done: (line: string) => boolean;
  /** Lines that only close the reply (the marker) are neither part of it nor game output. */
  swallow: boolean;
  /** The operator's own line: its answer is theirs to see, not a reply to hub-agent. */
  show: boolean;
  /** Told of each line taken into the reply (restarts a quiet period). */
  heard?: () => void;
  resolve: (text: string) => void;
  reject: (e: Error) => void;
}

/**
 * A reply marker as hub-agent writes it (`hubagent_begin_` or `hubagent_end_` and 12 random hex digits, new for every
 * command), found anywhere in a line and in any case: consoles quote it inside a sentence (`No match for help
 * argument '…'.`) or repeat it upper-cased (`Command HUBAGENT_END_… unknown.`). See `echoEnds` for which line begins
 * or ends a reply.
 */
const MARKER = /hubagent_(?:begin|end)_[0-9a-f]{12}(?![0-9a-f])/i;

/** How many markers hub-agent remembers having written, to drop one that arrives late (after its timeout). */
const KNOWN_MARKERS = 256;

const encoder = new TextEncoder();

/** How long a typed line may wait for the server to be ready (a map loading, a restart) and for its marker. */
const TYPED_TIMEOUT_MS = 5 * 60_000;

/**
 * The transport of `game.bridge = "wrapper"`. hub-agent's commands run one at a time. The operator's typed lines
 * (type()) never wait behind them: a typed line is written as soon as the server is ready, even while a command
 * of hub-agent's waits for its reply. A console reads its stdin in order, so the lines before the command's
 * marker are still its reply and the typed line's answer comes after it; hub-agent's next command waits until
 * every typed line got its marker, so their answers are never taken for its reply.
 */
export class StdioTransport implements Transport {
  readonly name: string;
  #server: Supervisor;
  #o: StdioTransportOptions & { timeoutMs: number };
  #commands: CommandQueue<CommandJob>;
  #typedLines: CommandQueue<CommandJob>;
  /** The reply to hub-agent's command in flight. */
  #command?: OpenReply;
  /** The typed line whose marker is awaited. */
  #typed?: OpenReply;
  /** Typed lines not yet answered (waiting for the server, or for their marker); `#noTyped` is open at 0. */
  #typedCount = 0;
  #noTyped = new Gate(true);
  /** With `readBytes`: what was written and may be unread, each with the marker that proves it read. */
  #unread: { bytes: number; marker?: string }[] = [];
  #readMore: (() => void)[] = [];
  /** Shut while a reply that ends with a quiet period is open: nothing marks where a typed line's answer starts. */
  #noQuietReply = new Gate(true);
  /** The markers written lately, oldest first: a line holding one is never game output. */
  #markers = new Set<string>();

  constructor(server: Supervisor, opts: StdioTransportOptions) {
    this.#server = server;
    this.name = server.name;
    this.#o = { timeoutMs: 10_000, ...opts };
    const timeout = (command: string, ms: number) =>
      new TransportError("timeout", `${this.name}: no reply to "${command.split(" ", 1)[0]}" within ${ms} ms`);
    this.#commands = new CommandQueue(opts.clock, (job) => this.#runCommand(job), timeout);
    this.#typedLines = new CommandQueue(opts.clock, (job) => this.#runTyped(job), timeout);
    server.readLines((line) => this.#read(line));
    server.on("stopping", (gone) => {
      this.#commands.abortAll(gone);
      this.#typedLines.abortAll(gone);
    });
    // The command in flight may or may not have run: it fails. Queued ones wait for a restart (or fail).
    server.on("exit", ({ reason }) => {
      const error = new TransportError("disconnected", `${this.name}: ${reason} while a command ran`);
      for (const reply of [this.#command, this.#typed]) reply?.reject(error);
      this.#confirm(this.#unread.length); // the next server has a new stdin
    });
  }

  get state(): TransportState {
    return this.#server.state;
  }

  on(event: "state", fn: (state: TransportState, error?: Error) => void): () => void {
    return this.#server.on(event, fn);
  }

  /**
   * Writes one console command. Waits for the server to be ready. With an echo command (or `until`) resolves
   * with the reply's lines; otherwise with "" once written.
   */
  send(command: string, opts?: StdioSendOptions): Promise<string> {
    const gone = this.#server.gone;
    if (gone) return Promise.reject(gone);
    if (/[\0\r\n]/.test(command)) {
      // A line break would make the rest a second command.
      return Promise.reject(new TransportError("invalid", "console commands can't contain NUL or line breaks"));
    }
    const until = opts?.until && singleMatch(opts.until);
    const start = until && opts?.start && singleMatch(opts.start);
    return this.#commands.push(
      { command, ...(until ? { until } : {}), ...(start ? { start } : {}) },
      opts?.timeoutMs ?? this.#o.timeoutMs,
    );
  }

  /**
   * Passes on a line the operator typed: as soon as the server is ready, never behind hub-agent's commands; its
   * answer is the operator's to see. Rejects when the line could not be written.
   */
  async type(line: string): Promise<void> {
    if (!this.#o.echo || line.includes("\0")) {
      // Its answer would be taken into an open reply that ends with a quiet period: it waits that reply out (at most
      // a command's timeout), and hub-agent's next command waits until it is written.
      this.#typedCount++;
      this.#noTyped.shut();
      try {
        await this.#noQuietReply.wait();
        if (!this.#server.write(`${line}\n`)) throw new TransportError("closed", "the server is not running");
      } finally {
        if (--this.#typedCount === 0) this.#noTyped.open();
      }
      return;
    }
    this.#typedCount++;
    this.#noTyped.shut();
    try {
      await this.#typedLines.push({ command: line }, TYPED_TIMEOUT_MS);
    } catch (e) {
      if (!mayHaveRun(e)) throw e; // written: only its marker is late (a `map` change holds the console)
    } finally {
      if (--this.#typedCount === 0) this.#noTyped.open();
    }
  }

  /** Stops the server: this transport is its console. */
  close(): Promise<void> {
    return this.#server.stop();
  }

  async #runCommand(job: QueuedCommand<CommandJob>): Promise<string> {
    await this.#server.whenReady(job.signal);
    // Typed lines go first, and their answers must not be taken for this command's reply: their markers first.
    while (this.#typedCount > 0) {
      await this.#noTyped.wait(job.signal);
      await this.#server.whenReady(job.signal);
    }
    if (!job.until && !this.#o.echo && !this.#o.quietMs) {
      if (!this.#server.write(`${job.command}\n`)) throw this.#serverGone();
      job.written = true;
      return "";
    }
    return this.#exchange(job, false);
  }

  async #runTyped(job: QueuedCommand<CommandJob>): Promise<string> {
    await this.#server.whenReady(job.signal);
    return this.#exchange(job, true);
  }

  /**
   * With `readBytes`: refuses text longer than the console reads at once, and waits until it fits beside what
   * may still be unread; the caller writes it at once and records it with `#unread.push`.
   */
  async #room(text: string, signal: AbortSignal): Promise<number> {
    const bytes = encoder.encode(text).length;
    const max = this.#o.readBytes;
    if (max === undefined) return bytes;
    if (bytes > max) {
      throw new TransportError(
        "invalid",
        `${this.name}: the command is ${bytes} bytes with its marker, and this console reads ${max} at a time (a longer line would be cut, its rest run as a command of its own)`,
      );
    }
    while (this.#unread.reduce((sum, u) => sum + u.bytes, 0) + bytes > max) {
      if (signal.aborted) throw signal.reason;
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => reject(signal.reason);
        signal.addEventListener("abort", onAbort, { once: true });
        this.#readMore.push(() => {
          signal.removeEventListener("abort", onAbort);
          resolve();
        });
      });
    }
    return bytes;
  }

  /** The first `count` unread writes were read (a marker after them came back). */
  #confirm(count: number): void {
    if (count <= 0) return;
    this.#unread.splice(0, count);
    for (const wake of this.#readMore.splice(0)) wake();
  }

  /**
   * Writes the command with its marker and resolves with its reply (a typed line's: "", its answer was shown).
   * Without a marker or `until`, the reply ends after the quiet period.
   */
  async #exchange(job: QueuedCommand<CommandJob>, typed: boolean): Promise<string> {
    const { command, until, start } = job;
    const quietMs = !until && !this.#o.echo ? this.#o.quietMs : undefined;
    const id = randomHex(6);
    const marker = `hubagent_end_${id}`;
    const echoLine = this.#o.echo?.(marker) ?? "";
    // hub-agent's own commands start with a marker too: what the console printed before it read them is not theirs.
    const begin = !until && !quietMs && !typed ? `hubagent_begin_${id}` : undefined;
    const beginLine = begin ? this.#o.echo!(begin) : "";
    const text = until || quietMs ? `${command}\n` : `${begin ? `${beginLine}\n` : ""}${command}\n${echoLine}\n`;
    const bytes = await this.#room(text, job.signal);
    return new Promise<string>((resolve, reject) => {
      let quiet: AbortController | undefined;
      const settle = (fn: () => void) => {
        quiet?.abort();
        if (quietMs) this.#noQuietReply.open();
        this.#forget(reply);
        job.signal.removeEventListener("abort", onAbort);
        fn();
      };
      /** (Re)starts the quiet period: each line of the reply pushes its end back. */
      const waitQuiet = () => {
        quiet?.abort();
        const own = (quiet = new AbortController());
        this.#o.clock.sleep(quietMs ?? 0, own.signal).then(
          () => reply.resolve(reply.lines.join("\n")),
          () => {}, // a line came in, or the reply settled
        );
      };
      // A typed line was written: a late marker or a server gone (the operator typed `quit`) is no failure.
      const fail = (e: Error) => settle(() => (typed ? resolve("") : reject(e)));
      const onAbort = () => fail(job.signal.reason);
      const reply: OpenReply = {
        begun: !begin,
        begins: begin ? echoEnds(begin, beginLine) : () => true,
        lines: [],
        swallow: !until,
        show: typed,
        done: until ? endsAt(until, start) : quietMs ? () => false : echoEnds(marker, echoLine),
        ...(quietMs ? { heard: waitQuiet } : {}),
        resolve: (text) => {
          // Its end was printed, so it was read (an `until` or quiet reply has no marker line to say so).
          this.#confirm(this.#unread.findIndex((u) => u.marker === marker) + 1);
          settle(() => resolve(text));
        },
        reject: fail,
      };
      if (job.signal.aborted) return onAbort();
      job.signal.addEventListener("abort", onAbort, { once: true });
      // One write, so nothing can land between the command and its marker.
      if (!this.#server.write(text)) return settle(() => reject(this.#serverGone()));
      if (!until && !quietMs) for (const m of begin ? [begin, marker] : [marker]) this.#remember(m);
      if (this.#o.readBytes !== undefined) this.#unread.push({ bytes, marker });
      job.written = true;
      if (typed) this.#typed = reply;
      else this.#command = reply;
      if (quietMs) {
        this.#noQuietReply.shut();
        waitQuiet();
      }
    });
  }

  #remember(marker: string): void {
    this.#markers.add(marker);
    if (this.#markers.size > KNOWN_MARKERS) this.#markers.delete(this.#markers.values().next().value as string);
  }

  #forget(reply: OpenReply): void {
    if (this.#command === reply) this.#command = undefined;
    if (this.#typed === reply) this.#typed = undefined;
  }

  /** Decides what a line of the console is (see LineUse): the end or part of an open reply, or game output. */
  #read(line: string): LineUse {
    const marker = MARKER.exec(line)?.[0].toLowerCase();
    // Everything written up to this marker was read.
    if (marker) this.#confirm(this.#unread.findIndex((u) => u.marker === marker) + 1);
    for (const reply of [this.#command, this.#typed]) {
      if (!reply) continue;
      if (!reply.begun) {
        if (!reply.begins(line)) continue;
        reply.begun = true;
        return "drop";
      }
      if (!reply.done(line)) continue;
      if (!reply.swallow) reply.lines.push(line);
      reply.resolve(reply.lines.join("\n"));
      return reply.swallow ? "drop" : "reply";
    }
    // One of ours that ends no reply: late (its command timed out), or the console repeating the line it read. A
    // marker-shaped text hub-agent never wrote (a player's chat) is game output like any other line.
    if (marker && this.#markers.has(marker)) return "drop";
    // Printed before hub-agent's command was read (its begin marker is still to come): game output.
    if (this.#command && !this.#command.begun) return "console";
    // hub-agent's command was written before any typed line still open: the console answers it first.
    const open = this.#command ?? this.#typed;
    if (!open || open.show) return "console";
    open.lines.push(line);
    open.heard?.();
    return "reply";
  }

  #serverGone(): TransportError {
    return new TransportError("disconnected", `${this.name}: the server is gone`);
  }
}

/**
 * The end of a reply read up to `until`: its first match after the `start` line (the start line itself never ends
 * it), or its first match at all without `start`.
 */
function endsAt(until: RegExp, start?: RegExp): (line: string) => boolean {
  let started = !start;
  return (raw) => {
    const line = boundLine(raw); // as every pattern sees a line (docs/game-consoles.md §8)
    if (started) return until.test(line);
    started = start!.test(line);
    return false;
  };
}

/**
 * The end (or the begin) of a reply bracketed by echo lines: the first line holding the marker anywhere, in any case, except
 * one that holds the whole echo line as written — the console repeating what it read (`> help hubagent_end_…`),
 * which a console reading its input ahead may print before the command's output is complete. With an echo line
 * that is the marker alone (a bogus command answered with an error naming it) the two can't be told apart, and
 * the first line holding it ends the reply.
 */
function echoEnds(marker: string, echoLine: string): (line: string) => boolean {
  const holds = new RegExp(`${marker}(?![0-9a-f])`, "i"); // the marker is letters, digits and _ only
  const repeated = echoLine.toLowerCase();
  return (line) => holds.test(line) && (repeated === marker || !line.toLowerCase().includes(repeated));
}

function randomHex(bytes: number): string {
  return [...crypto.getRandomValues(new Uint8Array(bytes))].map((b) => b.toString(16).padStart(2, "0")).join("");
}
