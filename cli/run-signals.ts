/**
 * `run`'s signals, for the whole run (a reload replaces the agent being served, and a signal in between must not end
 * the process by its default action): SIGINT and SIGTERM ask the run to stop, SIGHUP to reload (`run` only: the
 * demo leaves it its default action). A second stop signal exits at once (128 + the signal's number), for an
 * operator who will not wait for a wrapped server's own shutdown. The run itself is lib/app/run.ts's.
 */
import { RunControl } from "../lib/app/run.ts";
import type { Logger } from "../lib/log.ts";

const SIGNAL_NUMBER: Record<string, number> = { SIGINT: 2, SIGTERM: 15 };

/** Runs `body` with the process's signals going to its RunControl, and only for as long as it runs. */
export async function withSignals<T>(
  o: { logger: Logger; hangup: boolean },
  body: (control: RunControl) => Promise<T>,
): Promise<T> {
  const control = new RunControl();
  const onStop = (signal: NodeJS.Signals) => {
    if (control.stop(signal)) return;
    o.logger.warn(`${signal} again: exiting now, without waiting for the rest`);
    process.exit(128 + (SIGNAL_NUMBER[signal] ?? 0));
  };
  const onHangup = () => control.hangup();
  process.on("SIGINT", onStop);
  process.on("SIGTERM", onStop);
  if (o.hangup) process.on("SIGHUP", onHangup);
  try {
    return await body(control);
  } finally {
    process.off("SIGINT", onStop);
    process.off("SIGTERM", onStop);
    process.off("SIGHUP", onHangup);
  }
}
