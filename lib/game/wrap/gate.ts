/**
 * Something waited for with an abort signal: wait() resolves while the gate is open, waits while it is shut, and
 * rejects for good once it failed (the server stopped, or its restarts were given up).
 */
export class Gate {
  #open: boolean;
  #failed?: Error;
  #waiters = new Set<{ resolve: () => void; reject: (e: Error) => void }>();

  constructor(open = false) {
    this.#open = open;
  }

  get isOpen(): boolean {
    return this.#open;
  }

  open(): void {
    this.#open = true;
    for (const w of this.#waiters) w.resolve();
  }

  shut(): void {
    this.#open = false;
  }

  /** Rejects every waiter, now and later, with `e`. */
  fail(e: Error): void {
    this.#failed ??= e;
    for (const w of this.#waiters) w.reject(this.#failed);
  }

  wait(signal?: AbortSignal): Promise<void> {
    if (this.#open) return Promise.resolve();
    if (this.#failed) return Promise.reject(this.#failed);
    return new Promise((resolve, reject) => {
      const w = { resolve: () => done(resolve), reject: (e: Error) => done(() => reject(e)) };
      const onAbort = () => w.reject(signal?.reason);
      const done = (fn: () => void) => {
        this.#waiters.delete(w);
        signal?.removeEventListener("abort", onAbort);
        fn();
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#waiters.add(w);
    });
  }
}
