/**
 * The one polling helper: waits for a condition (sync or async) with a deadline on the monotonic clock, and says
 * what it waited for, with optional diagnostics (a process's log), when it gives up or when `abort` says why not.
 */
export interface UntilOptions {
  /** Default 10 s: generous for a busy 2-core machine; a passing test never waits that long. */
  timeoutMs?: number;
  /** Poll interval (default 10 ms). */
  everyMs?: number;
  /** Extra text for the error (e.g. a process's log); read only on failure. */
  diagnostics?: () => string;
  /** A reason to stop waiting at once (e.g. "run exited with 1"), or undefined to keep waiting. */
  abort?: () => string | undefined;
}

export async function until(
  cond: () => boolean | Promise<boolean>,
  what: string,
  opts: UntilOptions = {},
): Promise<void> {
  const deadline = performance.now() + (opts.timeoutMs ?? 10_000);
  for (;;) {
    if (await cond()) return;
    const why = opts.abort?.() ?? (performance.now() > deadline ? "timed out" : undefined);
    if (why) {
      const extra = opts.diagnostics?.();
      throw new Error(`${why} waiting for ${what}${extra ? `\n${extra}` : ""}`);
    }
    await Bun.sleep(opts.everyMs ?? 10);
  }
}
