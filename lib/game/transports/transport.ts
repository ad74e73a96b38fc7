/**
 * A transport is how console commands reach the game server (Source RCON over TCP, Quake 3 rcon over UDP, …).
 * It knows nothing about games: presets build the command text and parse the reply.
 */
import { MAX_LINE_CHARS } from "../sources/cut.ts";

/**
 * A reply to one command longer than this fails, on every network console (a status of 64 players is about 10 KB;
 * one line is at most MAX_LINE_CHARS): what a command waits for is bounded. Counted in characters where the reply
 * arrives as lines (econ), else in bytes, which are never fewer.
 */
export const MAX_REPLY_CHARS = 4 * MAX_LINE_CHARS;

export type TransportState = "connecting" | "connected" | "closed";

export interface SendOptions {
  /** Bounds the whole call: waiting in the queue, (re)connecting and the reply. */
  timeoutMs?: number;
}

export interface Transport {
  /** Sends one console command and resolves with the server's full reply text. Commands are queued: one in flight at a time unless the protocol correlates replies safely. */
  send(command: string, opts?: SendOptions): Promise<string>;
  close(): Promise<void>;
  /** "connected" | "connecting" | "closed" transitions and errors, for logs and the doctor check. */
  on(event: "state", fn: (state: TransportState, error?: Error) => void): () => void;
}

/**
 * - `auth`: the server rejected the password (not retried automatically: srcds bans IPs after repeated failures).
 * - `timeout`: no complete reply within the timeout.
 * - `disconnected`: the connection dropped while the command was in flight; it may or may not have run.
 * - `closed`: close() was called.
 * - `invalid`: the command can't be sent (too long, NUL byte).
 * - `protocol`: the server sent something that isn't valid for the protocol.
 */
export type TransportErrorCode = "auth" | "timeout" | "disconnected" | "closed" | "invalid" | "protocol";

export class TransportError extends Error {
  override name = "TransportError";
  /** The command had been written to the game before the failure (a lost reply): it may have run. */
  readonly written: boolean;
  constructor(
    readonly code: TransportErrorCode,
    message: string,
    options?: { cause?: unknown; written?: boolean },
  ) {
    super(message, options);
    this.written = options?.written ?? false;
  }
}

/** Whether a failed command may still have run in the game (it was written, and its reply was lost). */
export function mayHaveRun(e: unknown): boolean {
  return e instanceof TransportError && e.written;
}

/**
 * Whether a command failed because the console could not be reached (not connected, closed, the password refused,
 * no answer to connecting) before anything was written: not the game's answer, so nothing to hold against it.
 */
export function unreachable(e: unknown): boolean {
  return e instanceof TransportError && !e.written && e.code !== "invalid" && e.code !== "protocol";
}

type StateListener = (state: TransportState, error?: Error) => void;

/** The `on("state")` half of a transport. */
export class StateEvents {
  #listeners = new Set<StateListener>();
  #state: TransportState = "closed";

  get state(): TransportState {
    return this.#state;
  }

  on(fn: StateListener): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  emit(state: TransportState, error?: Error): void {
    this.#state = state;
    // A throwing listener must not break the transport's own bookkeeping.
    for (const fn of this.#listeners) {
      try {
        fn(state, error);
      } catch {
        // ignored on purpose
      }
    }
  }
}

export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
