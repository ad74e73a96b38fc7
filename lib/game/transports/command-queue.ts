import type { Clock } from "../../clock.ts";

/** What a transport queues: at least the command; a transport may add what its runner needs (a reply pattern, …). */
export interface Job {
  command: string;
}

export type QueuedCommand<J extends Job = Job> = J & {
  /** Aborts (with the error the caller receives) on timeout or close; the runner must stop promptly. */
  signal: AbortSignal;
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
    private timeoutError: (command: string, ms: number) => Error,
  ) {}

  push(job: J, timeoutMs: number): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      const controller = new AbortController();
      const stopTimer = new AbortController();
      let settled = false;
      const finish = (e?: Error, value?: string) => {
        if (settled) return;
        settled = true;
        stopTimer.abort();
        if (e) reject(e);
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
      this.#pending.push({ job: { ...job, signal: controller.signal }, abort, finish });
      void this.#pump();
    });
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
