/**
 * Where a `run`'s stop and reload requests go (cli/run-signals.ts turns SIGINT, SIGTERM and SIGHUP into them), one
 * control for the whole run: a reload replaces the agent being served, and a request in between must not be lost.
 * A stop goes to the agent being served, or to the next one as soon as it is there; a reload to the served agent.
 */
export interface Served {
  stop(why: string): void;
  hangup?(): void;
}

export class RunControl {
  #served: Served | undefined;
  #pending: string | undefined;
  #stops = 0;
  /** A stop was asked for (SIGINT or SIGTERM), as opposed to the end of `--once` or a demo's time. */
  signalled = false;

  /** A stop (the signal's name says why); false when one was asked for already: the caller gives up waiting. */
  stop(why: string): boolean {
    this.signalled = true;
    if (++this.#stops > 1) return false;
    if (this.#served) this.#served.stop(why);
    else this.#pending ??= why;
    return true;
  }

  /** SIGHUP: the served agent reads its configuration again (a `run` without a reread ignores it). */
  hangup(): void {
    this.#served?.hangup?.();
  }

  /** The agent now served gets the requests (a stop that came meanwhile at once); the returned function ends that. */
  serve(served: Served): () => void {
    this.#served = served;
    if (this.#pending) served.stop(this.#pending);
    return () => {
      if (this.#served === served) this.#served = undefined;
    };
  }
}
