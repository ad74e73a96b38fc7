/**
 * Where `run`'s signals go, installed once for the whole run (a reload replaces the agent being served, and a signal
 * in between must not end the process by its default action). SIGINT and SIGTERM stop the agent being served, or
 * the next one as soon as it is there; a second one exits at once (128 + the signal's number), for an operator who
 * will not wait for a wrapped server's own shutdown. SIGHUP goes to the served agent's handler (`run` only).
 */
const SIGNAL_NUMBER: Record<string, number> = { SIGINT: 2, SIGTERM: 15 };

export interface Served {
  stop(why: string): void;
  hangup?(): void;
}

export class RunSignals {
  #served: Served | undefined;
  #pending: string | undefined;
  #stops = 0;
  /** A stop signal came (SIGINT or SIGTERM), as opposed to the end of `--once` or a demo's time. */
  signalled = false;

  constructor(private o: { hangup: boolean; onForce: (signal: string, code: number) => void }) {}

  readonly #onStop = (signal: NodeJS.Signals) => {
    this.signalled = true;
    if (++this.#stops > 1) return this.o.onForce(signal, 128 + (SIGNAL_NUMBER[signal] ?? 0));
    if (this.#served) this.#served.stop(signal);
    else this.#pending ??= signal;
  };

  readonly #onHangup = () => this.#served?.hangup?.();

  install(): void {
    process.on("SIGINT", this.#onStop);
    process.on("SIGTERM", this.#onStop);
    if (this.o.hangup) process.on("SIGHUP", this.#onHangup);
  }

  uninstall(): void {
    process.off("SIGINT", this.#onStop);
    process.off("SIGTERM", this.#onStop);
    process.off("SIGHUP", this.#onHangup);
  }

  /** The agent now served gets the signals (a stop that came meanwhile at once); the returned function ends that. */
  serve(served: Served): () => void {
    this.#served = served;
    if (this.#pending) served.stop(this.#pending);
    return () => {
      if (this.#served === served) this.#served = undefined;
    };
  }
}
