/** Exit codes, documented in the README. Scripts can tell "done" from "queued" from the kind of failure. */
export const EXIT = {
  OK: 0,
  FAILURE: 1,
  USAGE: 2,
  CONFIG: 3,
  UNREACHABLE: 4,
  NOT_FOUND: 5,
  QUEUED: 6,
  /** Another `run` holds this storage directory (one `run` per store). */
  INSTANCE: 7,
  /** The storage directory can't be written (full, read-only, permissions, a path in the way): nothing was queued. */
  STORE: 8,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An operator-facing failure: one line (plus optional detail lines) and an exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly code: ExitCode = EXIT.FAILURE,
    readonly details: string[] = [],
  ) {
    super(message);
  }
}
