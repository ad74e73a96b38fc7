/**
 * The two ways concurrent work is ordered in this program, written once:
 * - serial: calls run one after another, in call order; a failure rejects only its own call.
 * - coalescing: a call while a run is in flight asks for one more run after it (never a parallel one), and every
 *   caller of that time shares the result.
 * - following: the same runs, but each caller waits only for the run that starts after its call, never for the runs
 *   later callers ask for (calls that never stop coming would make a coalescing caller wait for ever).
 * - atMost: up to n calls run at once, the others wait their turn in call order.
 */

/** Returns a function that runs each `fn` given to it after the previous ones have settled. */
export function serial(): <R>(fn: () => Promise<R>) => Promise<R> {
  let tail: Promise<unknown> = Promise.resolve();
  return (fn) => {
    const run = tail.then(fn);
    tail = run.catch(() => {});
    return run;
  };
}

/** Returns a function that runs at most `n` of the `fn`s given to it at once, the others after them in call order. */
export function atMost(n: number): <R>(fn: () => Promise<R>) => Promise<R> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (fn) => {
    if (running >= n) await new Promise<void>((resolve) => waiting.push(resolve));
    else running++;
    try {
      return await fn();
    } finally {
      const next = waiting.shift();
      if (next)
        next(); // the slot passes on as it is
      else running--;
    }
  };
}

/** serial() per key; a key's chain is forgotten once it is idle, so many keys do not pile up. */
export function serialByKey(): <R>(key: string, fn: () => Promise<R>) => Promise<R> {
  const tails = new Map<string, Promise<unknown>>();
  return (key, fn) => {
    const run = (tails.get(key) ?? Promise.resolve()).then(fn);
    const tail = run.catch(() => {});
    tails.set(key, tail);
    void tail.then(() => {
      if (tails.get(key) === tail) tails.delete(key);
    });
    return run;
  };
}

/**
 * A teardown under way per key (a lock's removal, a socket's closing) that a start on the same key waits for, though
 * its own caller may not: `track` keeps `work` until it settles, `settled` resolves once none is under way.
 */
export function teardownsByKey(): {
  track(key: string, work: Promise<void>): Promise<void>;
  settled(key: string): Promise<void>;
} {
  const pending = new Map<string, Promise<void>>();
  return {
    track(key, work) {
      const tracked: Promise<void> = work.finally(() => {
        if (pending.get(key) === tracked) pending.delete(key);
      });
      pending.set(key, tracked);
      return tracked;
    },
    settled: (key) => pending.get(key)?.catch(() => {}) ?? Promise.resolve(),
  };
}

/**
 * Wraps `fn` so that calls during a run are folded into one more run after it. The result of the whole sequence of
 * runs is `combine`d (default: the last run's).
 */
export function coalescing<R>(fn: () => Promise<R>, combine: (a: R, b: R) => R = (_a, b) => b): () => Promise<R> {
  let running: Promise<R> | undefined;
  let again = false;
  return () => {
    if (running) {
      again = true;
      return running;
    }
    // Cleared in the same step as the last look at `again`: cleared a few microtasks later (a `.finally` on the run),
    // a call in between was folded into a run that had already ended, and nothing ran for it.
    let ended = false;
    const run = (async (): Promise<R> => {
      try {
        again = false;
        let result: R = await fn();
        while (again) {
          again = false;
          result = combine(result, await fn());
        }
        return result;
      } finally {
        ended = true;
        running = undefined;
      }
    })();
    if (!ended) running = run; // an `fn` that threw at once has ended already
    return run;
  };
}

/**
 * Wraps `fn` so that a call while a run is in flight gets the one run after it, shared with the other calls made
 * meanwhile; a call with nothing in flight starts a run at once. Runs never overlap.
 */
export function following(fn: () => Promise<void>): () => Promise<void> {
  let current: Promise<void> | undefined;
  let next: Promise<void> | undefined;
  const call = (): Promise<void> => {
    if (!current) {
      current = fn().finally(() => {
        current = undefined;
      });
      return current;
    }
    next ??= current
      .catch(() => {})
      .then(() => {
        next = undefined;
        return call();
      });
    return next;
  };
  return call;
}
