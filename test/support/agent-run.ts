/**
 * A real `hub-agent run` (the compiled binary) with the sim bridge against an in-memory service in the test's
 * process: its players online from the start, every game action appended to `<dir>/actions.jsonl`, its log (JSON
 * lines) in a file, so every line written before a kill -9 can be read.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Sandbox } from "../../lib/sandbox/index.ts";
import { binary } from "../cli/binary.ts";
import { spawn } from "./procs.ts";
import { until } from "./until.ts";

export interface SimPlayer {
  id: string;
  name: string;
}

export interface AgentRun {
  proc: ReturnType<typeof spawn<"ignore", "ignore", Bun.BunFile>>;
  log: string;
  /** The parsed log lines so far; a line that is not JSON (the one-line error of a refused start) as `{ text }`. */
  lines(): Record<string, unknown>[];
}

/**
 * The complete lines of a JSON-lines file a process is still writing (a last line without its newline is left for
 * the next read), [] while it does not exist; unparsable lines as `{ text }`.
 */
export function jsonLines(file: string): Record<string, unknown>[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .slice(0, -1)
    .filter(Boolean)
    .map((l) => {
      try {
        return JSON.parse(l) as Record<string, unknown>;
      } catch {
        return { text: l };
      }
    });
}

export const actionsLog = (dir: string) => join(dir, "actions.jsonl");

/** A clean environment for hub-agent on the store `<dir>/store`, against `sb`, with the sim bridge. */
export const agentEnv = (sb: Pick<Sandbox, "url" | "key" | "serverId">, dir: string): Record<string, string> => ({
  PATH: process.env.PATH ?? "",
  HUB_API_URL: sb.url,
  HUB_API_KEY: sb.key,
  HUB_API_SERVER_ID: sb.serverId,
  HUB_GAME_BRIDGE: "sim",
  HUB_STORAGE_DIR: join(dir, "store"),
});

/** Starts `hub-agent run <args>` on the store `<dir>/store`; `name` names its log file. */
export async function startRun(opts: {
  sb: Sandbox;
  dir: string;
  name: string;
  players: readonly SimPlayer[];
  args?: string[];
  env?: Record<string, string>;
}): Promise<AgentRun> {
  const { sb, dir } = opts;
  const log = join(dir, `${opts.name}.log`);
  const proc = spawn([await binary(), "run", ...(opts.args ?? []), "--log-format", "json"], {
    cwd: dir,
    env: {
      ...agentEnv(sb, dir),
      HUB_GAME_SIM_PLAYERS: opts.players.map((p) => `${p.id}:${p.name}`).join(","),
      HUB_GAME_SIM_ACTIONS_LOG: actionsLog(dir),
      HUB_API_TIMEOUT: "2",
      ...opts.env,
    },
    stdin: "ignore",
    stdout: "ignore",
    // A file, not a pipe: every line the process wrote before a kill is there.
    stderr: Bun.file(log),
  });
  return { proc, log, lines: () => jsonLines(log) };
}

/** Waits for a log line; fails at once, with the log, if the process exits first. */
export function logged(
  run: AgentRun,
  pred: (line: Record<string, unknown>) => boolean,
  what: string,
  timeoutMs = 15_000,
): Promise<void> {
  return until(() => run.lines().some(pred), what, {
    timeoutMs,
    abort: () =>
      run.proc.exitCode === null && run.proc.signalCode === null
        ? undefined
        : `run exited (${run.proc.exitCode ?? run.proc.signalCode})`,
    diagnostics: () => readFileSync(run.log, "utf8"),
  });
}

export const ready = (run: AgentRun, timeoutMs?: number) => logged(run, (l) => l.msg === "ready", "ready", timeoutMs);

/** The status page's address (`[http] listen`), from the run's log line. */
export async function statusPageUrl(run: AgentRun): Promise<string> {
  const said = (l: Record<string, unknown>) => String(l.msg).startsWith("status page on ");
  await logged(run, said, "the status page's address");
  return /status page on (\S+)/.exec(String(run.lines().find(said)?.msg))?.[1] ?? "";
}
