import type { Clock } from "../../clock.ts";
import { TransportError } from "./transport.ts";

/** What a transport queues: at least the command; a transport may add what its runner needs (a reply pattern, …). */
export interface Job {
  command: string;
}

export type QueuedCommand<J extends Job = Job> = J & {
  /** Aborts (with the error the caller receives) on timeout or close; the runner must stop promptly. */
  signal: AbortSignal;
  /** Set by the runner just before the command goes to the game: a failure after it may not mean "not run". */
  written?: boolean;
};

/**
 * Runs commands strictly one at a time. Each call's timeout covers its whole life (queue, connect, reply),
 * so a caller always hears back within `timeoutMs`, even when the server is down.
 */
export class CommandQueue<J extends Job = Job> {
  #pending: { job: QueuedCommand<J>; abort: (e: Error) => void; finish: (e?: Error, v?: string) => void }[] = [];
  #running = false;

  constructor(
    private clock: Clock,
    private run: (job: QueuedCommand<J>) => Promise<string>,
    private timeoutError: (command: string, ms: number) => TransportError,
  ) {}

  push(job: J, timeoutMs: number): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      const controller = new AbortController();
      const stopTimer = new AbortController();
      let settled = false;
      const queued: QueuedCommand<J> = { ...job, signal: controller.signal };
      const finish = (e?: Error, value?: string) => {
        if (settled) return;
        settled = true;
        stopTimer.abort();
        if (e) reject(queued.written ? written(e) : e);
        else resolve(value ?? "");
      };
      const abort = (e: Error) => {
        controller.abort(e);
        finish(e);
      };
      this.clock.sleep(timeoutMs, stopTimer.signal).then(
        () => abort(this.timeoutError(job.command, timeoutMs)),
        () => {},
      );
      this.#pending.push({ job: queued, abort, finish });
      void this.#pump();
    });
  }

  /** How many commands wait behind the one running. */
  get waiting(): number {
    return this.#pending.length;
  }

  /** Fails every queued and running command with `e`. */
  abortAll(e: Error): void {
    for (const p of this.#pending.splice(0)) p.abort(e);
    this.#current?.abort(e);
  }

  #current?: { abort: (e: Error) => void };

  async #pump(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    try {
      for (let next = this.#pending.shift(); next; next = this.#pending.shift()) {
        if (next.job.signal.aborted) continue;
        this.#current = next;
        try {
          next.finish(undefined, await this.run(next.job));
        } catch (e) {
          next.finish(e instanceof Error ? e : new Error(String(e)));
        } finally {
          this.#current = undefined;
        }
      }
    } finally {
      this.#running = false;
    }
  }
}

/** The caller's error, marked as coming after the command was written (its reply lost: it may have run). */
function written(e: Error): Error {
  if (!(e instanceof TransportError) || e.written) return e;
  return new TransportError(e.code, e.message, { cause: e.cause, written: true });
}
