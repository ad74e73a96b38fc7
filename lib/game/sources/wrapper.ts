import { type ChildProcess, spawn } from "node:child_process";
import { type Clock, systemClock } from "../../clock.ts";
import { childEnv } from "../../child-env.ts";
import { type Logger, silentLogger } from "../../log.ts";
import { CommandQueue, type QueuedCommand } from "../transports/command-queue.ts";
import {
  errorMessage,
  type SendOptions,
  StateEvents,
  type Transport,
  TransportError,
  type TransportState,
} from "../transports/transport.ts";
import { LineSplitter, type LineSource, type LineStream, type OnLine } from "./lines.ts";

/** Restart after a crash: delays double from `delayMs` to `maxDelayMs`; more than `maxRestarts` in a row is a crash loop. */
export interface RestartPolicy {
  /** Restarts in a row before giving up (default 5). A run that lasted `stableMs` starts a new row. */
  maxRestarts?: number;
  /** Delay before the first restart of a row (default 1 s). */
  delayMs?: number;
  maxDelayMs?: number;
  /** A run at least this long counts as healthy: the next crash restarts after `delayMs` again (default 10 min). */
  stableMs?: number;
}

export interface WrapperOptions {
  /** The dedicated server and its arguments (`game.wrapper.command`); run directly, no shell. */
  command: readonly string[];
  cwd?: string;
  /** Variables the operator passes (`[game.wrapper.env]`), added to the few every program needs (childEnv). */
  env?: Record<string, string>;
  /** The console command that shuts the server down cleanly (`quit`, `stop`); without one, SIGTERM. */
  stopCommand?: string;
  /** How long the server may take to exit after the stop command before it gets SIGTERM (default 30 s). */
  stopTimeoutMs?: number;
  /** How long after SIGTERM before SIGKILL (default 10 s). */
  killTimeoutMs?: number;
  /** The line that says the server took its map and reads commands; without it, ready once spawned. */
  ready?: RegExp;
  /**
   * Renders a console command that prints `marker` on a line of its own (`(m) => "echo " + m`). Replies are the
   * lines between a command and its marker. Without it (Minecraft has no echo) commands are fire-and-forget and
   * resolve with "", unless the call passes `until`.
   */
  echo?: (marker: string) => string;
  /** Default per-command timeout: waiting for the server to be ready, in the queue, and for the reply (default 10 s). */
  timeoutMs?: number;
  /** Restart the server when it exits on its own; off unless given. */
  restart?: RestartPolicy;
  /** The operator's console (hub-agent's stdin): lines are passed through to the server unless intercepted. */
  input?: NodeJS.ReadableStream;
  /**
   * The operator's view of the console (hub-agent's stdout; its own log goes to stderr): the server's lines are
   * copied here, except the replies to hub-agent's own commands (the player list every poll would drown the rest).
   */
  output?: NodeJS.WritableStream;
  /** Applied to every line copied to `output`: a server that prints a secret must not put it on the console. */
  redact?: (line: string) => string;
  /** Lines for which this holds become `operator_input` events instead of reaching the server. */
  intercept?: (line: string) => boolean;
  clock?: Clock;
  logger?: Logger;
}

export interface WrapperSendOptions extends SendOptions {
  /** The reply ends with the first line that matches (included); for consoles without an echo command. */
  until?: RegExp;
}

/** A command in the wrapper's queue: its reply ends at `until` (else at the echo marker); `operator`: a typed line. */
interface WrapperJob {
  command: string;
  until?: RegExp;
  operator?: boolean;
}

export interface ExitInfo {
  code: number | null;
  signal: string | null;
  /** For logs and the `down` event: "exited with code 1", "stopped by hub-agent", … */
  reason: string;
  /** Whether hub-agent asked for it (stop()). */
  requested: boolean;
  /** Whether a restart follows. */
  restarting: boolean;
}

interface WrapperEvents {
  state: [state: TransportState, error?: Error];
  /** The ready line was seen (after every start and restart). */
  ready: [];
  /** The server went away; with a restart policy it may come back (another `ready`). */
  down: [reason: string];
  /** An intercepted line the operator typed into the wrapped console. */
  operator_input: [line: string];
  exit: [info: ExitInfo];
}

/** A marker line: unlikely in any game's output, and recognisable when a stale one arrives late. */
const MARKER = /hubagent_end_[0-9a-f]{12}$/;

interface PendingReply {
  lines: string[];
  done: (line: string) => boolean;
  /** Lines that only close the reply (the marker) are neither part of it nor game output. */
  swallow: boolean;
  /** The operator's own line: its answer is theirs to see, not a reply to hub-agent. */
  show: boolean;
  resolve: (text: string) => void;
  reject: (e: Error) => void;
}

/** The words a wrapped console's intercept checks: `ban …`, `Warn …` (case-insensitive, first word only). */
export function interceptWords(words: Iterable<string>): (line: string) => boolean {
  const set = new Set([...words].map((w) => w.toLowerCase()));
  return (line) => set.has(line.trim().split(/\s+/, 1)[0]?.toLowerCase() ?? "");
}

/**
 * The wrapper (`game.bridge = "wrapper"`): hub-agent runs the dedicated server as its child.
 *
 * - As a LineSource it delivers the server's stdout and stderr lines (ioq3 writes its console to stderr), always
 *   draining both pipes so the server never blocks on a full one.
 * - As a Transport it writes commands to the server's stdin, one at a time; with an echo command it brackets
 *   each with a marker and returns the lines in between. Those lines also go to `onLine`, since a command's
 *   output may hold events (`addbot` prints ClientConnect).
 * - It passes the operator's typed lines through, in turn with hub-agent's commands, except intercepted ones
 *   (ban, warn, …), which become `operator_input` events, and the stop command, which stops the server as stop()
 *   does; at EOF of hub-agent's stdin the server's stdin stays open. The server's console is copied to `output`,
 *   without the replies to hub-agent's own commands.
 * - stop() (called by `hub-agent run` on SIGINT/SIGTERM) sends the stop command, waits, then SIGTERM, then
 *   SIGKILL. The server runs in its own process group so a Ctrl-C in the terminal reaches hub-agent only.
 *
 * States: "connecting" (starting, or waiting to restart), "connected" (ready), "closed" (stopped or gave up).
 */
export class Wrapper implements LineSource, Transport {
  readonly name: string;
  #o: WrapperOptions & Required<Pick<WrapperOptions, "stopTimeoutMs" | "killTimeoutMs" | "timeoutMs">>;
  #log: Logger;
  #clock: Clock;
  #state = new StateEvents();
  #listeners = new Map<keyof WrapperEvents, Set<(...args: never[]) => void>>();
  #queue: CommandQueue<WrapperJob>;
  #onLine: OnLine = () => {};
  #child?: ChildProcess;
  #exited?: Promise<void>;
  #spawning?: Promise<void>;
  #startedAt = 0;
  #ready = false;
  #readyWaiters = new Set<{ resolve: () => void; reject: (e: Error) => void }>();
  #pending?: PendingReply;
  #stopping?: Promise<void>;
  #closed = false;
  /** Why commands fail once the wrapper is closed. */
  #gone?: TransportError;
  #stopRestart = new AbortController();
  #restartsInRow = 0;
  #input?: { stream: NodeJS.ReadableStream; onData: (d: Buffer | string) => void; onEnd: () => void };
  #killOnExit = () => this.#signal("SIGTERM");
  /** Restarts since start, for logs and tests. */
  restarts = 0;

  constructor(opts: WrapperOptions) {
    if (!opts.command.length || !opts.command[0]) {
      throw new Error(
        'game.wrapper.command is empty: give the server and its arguments, e.g. ["./srcds_run", "-game", "garrysmod"]',
      );
    }
    this.#o = { stopTimeoutMs: 30_000, killTimeoutMs: 10_000, timeoutMs: 10_000, ...opts };
    if (opts.ready) this.#o.ready = singleMatch(opts.ready);
    this.name = opts.command[0];
    this.#clock = opts.clock ?? systemClock;
    this.#log = (opts.logger ?? silentLogger).withTag("wrapper");
    this.#queue = new CommandQueue(
      this.#clock,
      (job) => this.#run(job),
      (command, ms) =>
        new TransportError("timeout", `${this.name}: no reply to "${command.split(" ", 1)[0]}" within ${ms} ms`),
    );
  }

  get state(): TransportState {
    return this.#state.state;
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** Spawns the server; rejects when it can't be started (not found, not executable). */
  async start(onLine: OnLine = () => {}): Promise<void> {
    if (this.#closed) throw new Error(`${this.name}: the wrapper was stopped`);
    if (this.#spawning) throw new Error(`${this.name}: the wrapper was already started`);
    this.#onLine = onLine;
    this.#spawning = this.#spawn();
    try {
      await this.#spawning;
    } catch (e) {
      this.#spawning = undefined;
      throw e;
    }
    this.#attachInput();
  }

  on<K extends keyof WrapperEvents>(event: K, fn: (...args: WrapperEvents[K]) => void): () => void {
    if (event === "state") return this.#state.on(fn as (s: TransportState, e?: Error) => void);
    const set = this.#listeners.get(event) ?? new Set();
    this.#listeners.set(event, set);
    set.add(fn as (...args: never[]) => void);
    return () => set.delete(fn as (...args: never[]) => void);
  }

  /** Resolves when the server is ready (at once if it is); rejects when it stops for good first. */
  whenReady(signal?: AbortSignal): Promise<void> {
    if (this.#ready) return Promise.resolve();
    if (this.#closed) return Promise.reject(this.#gone ?? new TransportError("closed", `${this.name}: stopped`));
    return new Promise((resolve, reject) => {
      const w = {
        resolve: () => done(resolve),
        reject: (e: Error) => done(() => reject(e)),
      };
      const onAbort = () => w.reject(signal?.reason);
      const done = (fn: () => void) => {
        this.#readyWaiters.delete(w);
        signal?.removeEventListener("abort", onAbort);
        fn();
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#readyWaiters.add(w);
    });
  }

  /**
   * Writes one console command. Waits for the server to be ready. With an echo command (or `until`) resolves
   * with the reply's lines; otherwise with "" once written.
   */
  send(command: string, opts?: WrapperSendOptions): Promise<string> {
    if (this.#closed) return Promise.reject(this.#gone ?? new TransportError("closed", `${this.name}: stopped`));
    if (/[\0\r\n]/.test(command)) {
      // A line break would make the rest a second command.
      return Promise.reject(new TransportError("invalid", "console commands can't contain NUL or line breaks"));
    }
    const until = opts?.until && singleMatch(opts.until);
    return this.#queue.push({ command, ...(until ? { until } : {}) }, opts?.timeoutMs ?? this.#o.timeoutMs);
  }

  close(): Promise<void> {
    return this.stop();
  }

  /** Stops the server (stop command, then SIGTERM, then SIGKILL) and the pass-through; idempotent. */
  stop(): Promise<void> {
    this.#stopping ??= this.#stop();
    return this.#stopping;
  }

  async #stop(): Promise<void> {
    this.#closed = true;
    this.#stopRestart.abort();
    this.#detachInput();
    const closed = (this.#gone ??= new TransportError("closed", `${this.name}: stopped`));
    this.#queue.abortAll(closed);
    for (const w of this.#readyWaiters) w.reject(closed);
    await this.#spawning?.catch(() => {});
    const exited = this.#exited;
    if (this.#child && exited) {
      const { stopCommand, stopTimeoutMs, killTimeoutMs } = this.#o;
      if (stopCommand) {
        this.#log.info(`stopping the server with "${stopCommand}"`);
        this.#write(`${stopCommand}\n`);
      } else this.#signal("SIGTERM");
      if (!(await this.#within(exited, stopTimeoutMs))) {
        this.#log.warn(`the server did not exit within ${stopTimeoutMs} ms: sending SIGTERM`);
        this.#signal("SIGTERM");
        if (!(await this.#within(exited, killTimeoutMs))) {
          this.#log.warn(`the server did not exit within ${killTimeoutMs} ms of SIGTERM: sending SIGKILL`);
          this.#signal("SIGKILL");
          await exited;
        }
      }
    }
    this.#state.emit("closed");
  }

  async #within(p: Promise<void>, ms: number): Promise<boolean> {
    const timer = new AbortController();
    const won = await Promise.race([
      p.then(() => true),
      this.#clock.sleep(ms, timer.signal).then(
        () => false,
        () => false,
      ),
    ]);
    timer.abort();
    return won;
  }

  /** Signals the server's whole process group (wrapper scripts such as srcds_run fork the real server). */
  #signal(sig: NodeJS.Signals): void {
    const pid = this.#child?.pid;
    if (pid === undefined || !this.#exited) return;
    try {
      if (process.platform === "win32") this.#child?.kill(sig);
      else process.kill(-pid, sig);
    } catch {
      // already gone
    }
  }

  #spawn(): Promise<void> {
    const [file, ...args] = this.#o.command as [string, ...string[]];
    this.#ready = false;
    this.#state.emit("connecting");
    const child = spawn(file, args, {
      cwd: this.#o.cwd,
      env: childEnv(this.#o.env),
      stdio: ["pipe", "pipe", "pipe"],
      detached: process.platform !== "win32",
    });
    this.#child = child;
    return new Promise<void>((resolve, reject) => {
      child.once("error", (e) => {
        // Only a failed spawn lands here before "spawn"; later errors (a failed kill) are logged.
        if (child.pid === undefined) {
          this.#child = undefined;
          reject(new Error(`game.wrapper.command: cannot start ${JSON.stringify(file)}: ${errorMessage(e)}`));
        } else this.#log.warn(`server process error: ${errorMessage(e)}`);
      });
      child.once("spawn", () => {
        this.#startedAt = this.#clock.monotonic();
        this.#log.info(`started ${file}`, { pid: child.pid });
        this.#exited = this.#watch(child);
        process.on("exit", this.#killOnExit);
        if (!this.#o.ready) this.#markReady();
        resolve();
      });
    });
  }

  /** Reads both pipes to the end and resolves when the process is gone. */
  #watch(child: ChildProcess): Promise<void> {
    const splitters = (["stdout", "stderr"] as const).map((stream) => {
      const splitter = new LineSplitter((line) => this.#line(line, stream));
      child[stream]?.on("data", (d: Buffer) => splitter.push(d));
      return splitter;
    });
    child.stdin?.on("error", (e) => this.#log.debug(`server stdin: ${errorMessage(e)}`));
    return new Promise((resolve) => {
      let exit: { code: number | null; signal: string | null } | undefined;
      let finished = false;
      const finish = () => {
        if (finished || !exit) return;
        finished = true;
        for (const s of splitters) s.flush();
        resolve();
        if (this.#child !== child) return;
        process.off("exit", this.#killOnExit);
        this.#exit(exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`, exit);
      };
      child.once("exit", (code, signal) => {
        exit = { code, signal };
        // "close" follows once the pipes are drained; a grandchild holding them open must not stall us.
        this.#clock.sleep(2000).then(finish, finish);
      });
      child.once("close", () => finish());
    });
  }

  #line(line: string, stream: LineStream): void {
    const pending = this.#pending;
    if (pending?.done(line)) {
      this.#pending = undefined;
      if (!pending.swallow) {
        pending.lines.push(line);
        this.#deliver(line, stream);
      }
      pending.resolve(pending.lines.join("\n"));
      return;
    }
    if (MARKER.test(line.trimEnd())) return; // the marker of a command that timed out
    if (pending && !pending.show) pending.lines.push(line);
    else this.#o.output?.write(`${this.#o.redact ? this.#o.redact(line) : line}\n`);
    if (!this.#ready && this.#o.ready?.test(line)) this.#markReady();
    this.#deliver(line, stream);
  }

  #deliver(line: string, stream: LineStream): void {
    try {
      this.#onLine(line, stream);
    } catch (e) {
      this.#log.warn(`line handler failed: ${errorMessage(e)}`);
    }
  }

  #markReady(): void {
    this.#ready = true;
    this.#log.info("the server is ready");
    this.#state.emit("connected");
    for (const w of this.#readyWaiters) w.resolve();
    this.#emit("ready");
  }

  /** After the process ended (or a restart could not spawn it): restart, or give up and close. */
  #exit(how: string, status: { code: number | null; signal: string | null }): void {
    const { code, signal } = status;
    this.#child = undefined;
    this.#exited = undefined;
    this.#ready = false;
    const requested = this.#closed;
    const policy = this.#o.restart;
    if (!requested && policy && this.#clock.monotonic() - this.#startedAt >= (policy.stableMs ?? 600_000)) {
      this.#restartsInRow = 0;
    }
    const restarting = !requested && !!policy && this.#restartsInRow < (policy.maxRestarts ?? 5);
    const reason = requested ? `stopped by hub-agent (${how})` : `the server ${how}`;
    // The command in flight may or may not have run: it fails. Queued ones wait for a restart (or fail below).
    const pending = this.#pending;
    this.#pending = undefined;
    pending?.reject(new TransportError("disconnected", `${this.name}: ${reason} while a command ran`));
    if (requested) this.#log.info(reason);
    else if (restarting) this.#log.warn(reason);
    else {
      this.#log.error(
        policy ? `${reason}; ${this.#restartsInRow} restarts in a row failed: giving up` : `${reason}; not restarting`,
      );
    }
    this.#emit("exit", { code, signal, reason, requested, restarting });
    this.#emit("down", reason);
    if (restarting) void this.#restart();
    else if (!requested) {
      this.#closed = true;
      this.#gone = new TransportError("closed", `${this.name}: ${reason}`);
      this.#detachInput();
      // Queued commands fail when their turn comes (whenReady), after the one in flight got its own error.
      for (const w of this.#readyWaiters) w.reject(this.#gone);
      this.#state.emit("closed");
    }
  }

  async #restart(): Promise<void> {
    const policy = this.#o.restart ?? {};
    const base = policy.delayMs ?? 1000;
    const delay = Math.min(base * 2 ** this.#restartsInRow, policy.maxDelayMs ?? 60_000);
    this.#restartsInRow++;
    this.#state.emit("connecting");
    this.#log.info(`restarting the server in ${delay} ms`, { restart: this.#restartsInRow });
    try {
      await this.#clock.sleep(delay, this.#stopRestart.signal);
    } catch {
      return; // stopped meanwhile
    }
    this.restarts++;
    this.#spawning = this.#spawn();
    try {
      await this.#spawning;
    } catch (e) {
      // Counts like a crash: the next attempt waits longer, and the row ends in giving up.
      this.#startedAt = this.#clock.monotonic();
      this.#exit(`could not be started again (${errorMessage(e)})`, { code: null, signal: null });
    }
  }

  async #run(job: QueuedCommand<WrapperJob>): Promise<string> {
    await this.whenReady(job.signal);
    const { command, until, operator = false } = job;
    const echo = this.#o.echo;
    if (!until && !echo) {
      if (!this.#write(`${command}\n`)) throw new TransportError("disconnected", `${this.name}: the server is gone`);
      job.written = true;
      return "";
    }
    const marker = `hubagent_end_${randomHex(6)}`;
    const echoLine = echo?.(marker) ?? "";
    return new Promise<string>((resolve, reject) => {
      const onAbort = () => {
        if (this.#pending === pending) this.#pending = undefined;
        if (operator)
          resolve(""); // written: only its marker is late (a `map` change holds the console)
        else reject(job.signal.reason);
      };
      const pending: PendingReply = {
        lines: [],
        swallow: !until,
        show: operator,
        done: until
          ? (line) => until.test(line)
          : (line) => line.trimEnd().endsWith(marker) && !line.includes(echoLine),
        resolve: (text) => {
          job.signal.removeEventListener("abort", onAbort);
          resolve(text);
        },
        reject: (e) => {
          job.signal.removeEventListener("abort", onAbort);
          if (operator)
            resolve(""); // written; the server went away (the operator typed `quit`)
          else reject(e);
        },
      };
      if (job.signal.aborted) return onAbort();
      job.signal.addEventListener("abort", onAbort, { once: true });
      this.#pending = pending;
      // One write, so an operator's typed line can't land between the command and its marker.
      if (!this.#write(until ? `${command}\n` : `${command}\n${echoLine}\n`)) {
        this.#pending = undefined;
        reject(new TransportError("disconnected", `${this.name}: the server is gone`));
      } else job.written = true;
    });
  }

  #write(text: string): boolean {
    const stdin = this.#child?.stdin;
    if (!stdin || stdin.destroyed || !stdin.writable) return false;
    stdin.write(text);
    return true;
  }

  #attachInput(): void {
    const stream = this.#o.input;
    if (!stream || this.#input) return;
    const splitter = new LineSplitter((line) => this.#operatorLine(line));
    const onData = (d: Buffer | string) => splitter.push(d);
    const onEnd = () => {
      splitter.flush();
      // Some consoles exit or spin at EOF, so the server's stdin stays open (systemd, docker run without -i).
      this.#log.info("the operator console closed; the server keeps running");
    };
    stream.on("data", onData);
    stream.once("end", onEnd);
    this.#input = { stream, onData, onEnd };
  }

  #detachInput(): void {
    const input = this.#input;
    if (!input) return;
    this.#input = undefined;
    input.stream.off("data", input.onData);
    input.stream.off("end", input.onEnd);
    input.stream.pause();
  }

  #operatorLine(line: string): void {
    if (this.#o.intercept?.(line)) {
      this.#emit("operator_input", line.trim());
      return;
    }
    const stop = this.#o.stopCommand;
    if (stop && line.trim().toLowerCase() === stop.toLowerCase()) {
      // The operator means it: hub-agent's own stop (no restart follows; `hub-agent run` then ends cleanly).
      this.#log.info(`the operator typed "${stop}": stopping the server`);
      void this.stop();
      return;
    }
    if (!this.#o.echo || line.includes("\0")) {
      if (!this.#write(`${line}\n`)) this.#log.warn(`the server is not running; not passed on: ${line}`);
      return;
    }
    // In the command queue with a marker of its own: written directly, its answer could arrive after hub-agent's
    // next command was written and be taken for that command's reply (hidden from the operator, and misread).
    this.#queue
      .push({ command: line, operator: true }, OPERATOR_TIMEOUT_MS)
      .catch((e: Error) => this.#log.warn(`not passed on to the server (${e.message}): ${line}`));
  }

  #emit<K extends keyof WrapperEvents>(event: K, ...args: WrapperEvents[K]): void {
    for (const fn of this.#listeners.get(event) ?? []) {
      try {
        (fn as (...a: WrapperEvents[K]) => void)(...args);
      } catch (e) {
        this.#log.warn(`${event} listener failed: ${errorMessage(e)}`);
      }
    }
  }
}

/** How long a typed line may wait for the server to be ready (a map loading, a restart) before it is dropped. */
const OPERATOR_TIMEOUT_MS = 5 * 60_000;

/** Without `g`/`y`, test() keeps no state between lines. */
function singleMatch(re: RegExp): RegExp {
  return re.global || re.sticky ? new RegExp(re.source, re.flags.replace(/[gy]/g, "")) : re;
}

function randomHex(bytes: number): string {
  return [...crypto.getRandomValues(new Uint8Array(bytes))].map((b) => b.toString(16).padStart(2, "0")).join("");
}
