/** What the `run` lifecycle (lib/app/run.ts) is given and what it ends with. */
import type { Config, LoadResult } from "./config.ts";
import type { RunControl } from "./run-control.ts";
import type { GameBridge } from "../game/bridge.ts";
import type { Clock } from "../clock.ts";
import type { Logger } from "../log.ts";
import type { RunMonitor } from "../monitor/monitor.ts";
import type { OnceSummary } from "../monitor/once.ts";
import type { PaceOptions } from "../pace.ts";

/** How a `run` ended; the command maps each kind to its exit code (README, "Exit codes"). */
export type RunOutcome =
  /** Stopped: a signal, the demo's time, the wrapped server's own stop command. */
  | { kind: "stopped" }
  /** `--once`: every job of the round done; `waiting` entries still wait for the service (exit 6 when any). */
  | { kind: "once"; summary: OnceSummary; waiting: number }
  /** `--once` could not start (no service, no usable cached server record), or its jobs did not reach the service. */
  | { kind: "unreachable"; line: string; summary: OnceSummary }
  /** `--once` met a refused key or an unknown server id. */
  | { kind: "credentials"; line: string; summary?: OnceSummary }
  /** Another `run` holds the storage directory. */
  /** `holder`: the run holding it, "<pid>@<host>". */
  | { kind: "instance-held"; line: string; holder?: string }
  /** The storage directory can't be used (permissions, a path in the way, …). */
  | { kind: "store-error"; line: string }
  /** Several servers (lib/app/host.ts), and no server's configuration is valid. */
  | { kind: "config"; line: string }
  /** The game's side could not start, a wrapped server ended on its own for good, or `--once`'s jobs failed. */
  | { kind: "failed"; line: string; summary?: OnceSummary };

export interface RunAgentOptions {
  config: Config;
  bridge: GameBridge;
  clock: Clock;
  logger: Logger;
  /** Stop and reload requests (cli/run-signals.ts). */
  control: RunControl;
  /** One round of every periodic job, then stop (`run --once`). */
  once?: boolean;
  /** Stops the run when it settles (the demo's time). */
  until?: Promise<void>;
  /** Reads the configuration again on a reload (`run`); without it a reload is ignored (the demo). */
  reread?: () => Promise<LoadResult>;
  /** The pace of per-player requests (bench/: scaled with its intervals); default lib/pace.ts's. */
  pace?: PaceOptions;
  /** Told each agent's monitor as it starts, and undefined as it stops (a host's status page: lib/app/host.ts). */
  onMonitor?: (monitor: RunMonitor | undefined) => void;
}
