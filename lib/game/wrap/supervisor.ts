/**
 * The wrapped game server as a process (`game.bridge = "wrapper"`, docs/game-consoles.md §2.3): hub-agent runs the
 * dedicated server as its child and owns its life. Commands and the operator's typed lines are the business of
 * ./stdio-transport.ts and ./operator-console.ts; this module only starts, watches, restarts and stops.
 */
import { type Clock, systemClock } from "../../clock.ts";
import { type Logger, silentLogger } from "../../log.ts";
import { boundLine, type LineSource, type LineStream, type OnLine } from "../sources/lines.ts";
import { errorMessage, StateEvents, TransportError, type TransportState } from "../transports/transport.ts";
import { type ChildOptions, type ChildStatus, type ServerChild, spawnChild, type StopSteps } from "./child.ts";
import { Emitter } from "./emitter.ts";
import { Gate } from "./gate.ts";
import { type RestartPolicy, Restarts } from "./restarts.ts";

export type { RestartPolicy } from "./restarts.ts";

export interface SupervisorOptions extends Omit<ChildOptions, "clock" | "logger">, Partial<StopSteps> {
  /** The line that says the server took its map and reads commands; without it, ready once spawned. */
  ready?: RegExp;
  /** Restart the server when it exits on its own; off unless given. */
  restart?: RestartPolicy;
  clock?: Clock;
  logger?: Logger;
}

export interface ExitInfo extends ChildStatus {
  /** For logs and the `down` event: "exited with code 1", "stopped by hub-agent", … */
  reason: string;
  /** Whether hub-agent asked for it (stop()). */
  requested: boolean;
  /** Whether a restart follows. */
  restarting: boolean;
}

/**
 * What the reader of the console (the stdio transport) makes of a line before the sources get it:
 * - `console`: the game's output: the operator sees it, it may be the ready line, the sources get it;
 * - `reply`: part of the reply to one of hub-agent's commands: the sources get it (`addbot` prints ClientConnect),
 *   the operator does not (the player list every poll would drown the rest);
 * - `drop`: a reply marker, for no one.
 */
export type LineUse = "console" | "reply" | "drop";

export interface SupervisorEvents {
  state: [state: TransportState, error?: Error];
  /** A server process was spawned (the first start and every restart). */
  started: [];
  /** The ready line was seen (after every start and restart). */
  ready: [];
  /** A line of the server's console for the operator's view (`console` lines only). */
  console: [line: string];
  /** stop() began: commands fail now with `error`, the operator's console closes. */
  stopping: [error: TransportError];
  /** The server went away; with a restart policy it may come back (another `ready`). */
  down: [reason: string];
  exit: [info: ExitInfo];
}

/**
 * Runs the server as a child, in its own process group (a Ctrl-C in the terminal reaches hub-agent only, and
 * signals reach the scripts' children too), with the clean environment of lib/child-env.ts. As a LineSource it
 * delivers the server's stdout and stderr lines (ioq3 writes its console to stderr), always draining both pipes
 * so the server never blocks on a full one. stop() (`hub-agent run` on SIGINT/SIGTERM) sends the stop command,
 * waits, then SIGTERM, then SIGKILL. A crash restarts the server with backoff when a restart policy is given.
 *
 * States: "connecting" (starting, or waiting to restart), "connected" (ready), "closed" (stopped or gave up).
 */
export class Supervisor implements LineSource {
  readonly name: string;
  #o: SupervisorOptions & Required<Pick<SupervisorOptions, "stopTimeoutMs" | "killTimeoutMs">>;
  #log: Logger;
  #clock: Clock;
  #state = new StateEvents();
  #events: Emitter<Omit<SupervisorEvents, "state">>;
  #onLine: OnLine = () => {};
  #readLine: (line: string) => LineUse = () => "console";
  #child?: ServerChild;
  #spawning?: Promise<void>;
  #restarts: Restarts;
  #ready = new Gate();
  #stopping?: Promise<void>;
  /** Why commands fail once the server is stopped or given up; undefined while it runs. */
  #gone?: TransportError;
  #stopRestart = new AbortController();
  /** Restarts since start, for logs and tests. */
  restarts = 0;

  constructor(opts: SupervisorOptions) {
    if (!opts.command.length || !opts.command[0]) {
      throw new Error(
        'game.wrapper.command is empty: give the server and its arguments, e.g. ["./srcds_run", "-game", "garrysmod"]',
      );
    }
    this.#o = { stopTimeoutMs: 30_000, killTimeoutMs: 10_000, ...opts };
    if (opts.ready) this.#o.ready = singleMatch(opts.ready);
    this.name = opts.command[0];
    this.#clock = opts.clock ?? systemClock;
    this.#log = (opts.logger ?? silentLogger).withTag("wrapper");
    this.#restarts = new Restarts(opts.restart, this.#clock);
    this.#events = new Emitter<Omit<SupervisorEvents, "state">>((event, e) =>
      this.#log.warn(`${event} listener failed: ${errorMessage(e)}`),
    );
  }

  get state(): TransportState {
    return this.#state.state;
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** Set once stop() was called or the restarts were given up: the error commands fail with. */
  get gone(): TransportError | undefined {
    return this.#gone;
  }

  /** The one reader that decides, line by line, what is a reply to a command (see LineUse). */
  readLines(reader: (line: string) => LineUse): void {
    this.#readLine = reader;
  }

  /** Spawns the server; rejects when it can't be started (not found, not executable). */
  async start(onLine: OnLine = () => {}): Promise<void> {
    if (this.#gone) throw new Error(`${this.name}: the wrapper was stopped`);
    if (this.#spawning) throw new Error(`${this.name}: the wrapper was already started`);
    this.#onLine = onLine;
    this.#spawning = this.#spawn();
    try {
      await this.#spawning;
    } catch (e) {
      this.#spawning = undefined;
      throw e;
    }
  }

  on<K extends keyof SupervisorEvents>(event: K, fn: (...args: SupervisorEvents[K]) => void): () => void {
    if (event === "state") return this.#state.on(fn as (s: TransportState, e?: Error) => void);
    return this.#events.on(event as Exclude<K, "state">, fn as never);
  }

  /** Resolves when the server is ready (at once if it is); rejects when it stops for good first. */
  whenReady(signal?: AbortSignal): Promise<void> {
    return this.#ready.wait(signal);
  }

  /** Writes to the server's stdin; false when there is no running server to write to. */
  write(text: string): boolean {
    return this.#child?.write(text) ?? false;
  }

  /** Stops the server (stop command, then SIGTERM, then SIGKILL); idempotent. */
  stop(): Promise<void> {
    this.#stopping ??= this.#stop();
    return this.#stopping;
  }

  async #stop(): Promise<void> {
    const gone = (this.#gone ??= new TransportError("closed", `${this.name}: stopped`));
    this.#stopRestart.abort();
    this.#events.emit("stopping", gone);
    this.#ready.fail(gone);
    await this.#spawning?.catch(() => {});
    await this.#child?.stop(this.#o);
    this.#state.emit("closed");
  }

  async #spawn(): Promise<void> {
    this.#ready.shut();
    this.#state.emit("connecting");
    const child = await spawnChild({ ...this.#o, clock: this.#clock, logger: this.#log }, (line, stream) =>
      this.#line(line, stream),
    );
    this.#child = child;
    this.#restarts.started();
    void child.exited.then((status) => this.#exit(status));
    this.#events.emit("started");
    if (!this.#o.ready) this.#markReady();
  }

  #line(line: string, stream: LineStream): void {
    const use = this.#readLine(line);
    if (use === "drop") return;
    if (use === "console") this.#events.emit("console", line);
    if (!this.#ready.isOpen && this.#o.ready?.test(boundLine(line))) this.#markReady();
    try {
      this.#onLine(line, stream);
    } catch (e) {
      this.#log.warn(`line handler failed: ${errorMessage(e)}`);
    }
  }

  #markReady(): void {
    this.#ready.open();
    this.#log.info("the server is ready");
    this.#state.emit("connected");
    this.#events.emit("ready");
  }

  /** After the process ended (or a restart could not spawn it: `failed`): restart, or give up and close. */
  #exit(status: ChildStatus, failed?: string): void {
    const { code, signal } = status;
    const how = failed ?? (signal ? `was killed by ${signal}` : `exited with code ${code}`);
    this.#child = undefined;
    this.#ready.shut();
    const requested = this.#gone !== undefined;
    const restarting = !requested && this.#restarts.restarting();
    const reason = requested ? `stopped by hub-agent (${how})` : `the server ${how}`;
    if (requested) this.#log.info(reason);
    else if (restarting) this.#log.warn(reason);
    else {
      this.#log.error(
        this.#o.restart
          ? `${reason}; ${this.#restarts.inRow} restarts in a row failed: giving up`
          : `${reason}; not restarting`,
      );
    }
    // First: the command in flight fails (it may or may not have run); queued ones wait for a restart.
    this.#events.emit("exit", { code, signal, reason, requested, restarting });
    this.#events.emit("down", reason);
    if (restarting) void this.#restart();
    else if (!requested) {
      this.#gone = new TransportError("closed", `${this.name}: ${reason}`);
      // Queued commands fail when their turn comes (whenReady), after the one in flight got its own error.
      this.#ready.fail(this.#gone);
      this.#state.emit("closed");
    }
  }

  async #restart(): Promise<void> {
    const delay = this.#restarts.nextDelay();
    this.#state.emit("connecting");
    this.#log.info(`restarting the server in ${delay} ms`, { restart: this.#restarts.inRow });
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
      this.#restarts.started();
      this.#exit({ code: null, signal: null }, `could not be started again (${errorMessage(e)})`);
    }
  }
}

/** Without `g`/`y`, test() keeps no state between lines. */
export function singleMatch(re: RegExp): RegExp {
  return re.global || re.sticky ? new RegExp(re.source, re.flags.replace(/[gy]/g, "")) : re;
}
