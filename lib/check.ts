/**
 * One line of `hub-agent doctor`: what was checked, the outcome, and how to fix a failure. Its own module: the
 * service checks (doctor.ts) and the game's (game/doctor.ts) both make them, and doctor.ts runs the game's.
 */
export interface Check {
  name: "config" | "storage" | "service" | "server" | "clock" | "game" | "log";
  status: "ok" | "warn" | "fail" | "skipped";
  message: string;
  fix?: string;
  /** What a failure means (the CLI turns it into its exit code): the key or server id, no answer, or else. */
  kind?: FailureKind;
}

export type FailureKind = "config" | "unreachable" | "store" | "failure";
