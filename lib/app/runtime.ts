import { existsSync } from "node:fs";

/**
 * The runtime setting of a serving `run`, a process that lives for weeks beside a game server on a host whose memory
 * is shared: JavaScriptCore's JIT off (`BUN_JSC_useJIT=false`), the interpreter only. Measured side by side
 * (docs/performance.md, "A running agent"): peak RSS at rest 60.1 → 47.6 MB, with 1,000 players 111.8 → 57.6 MB;
 * kicks as fast; more CPU where there is much to do (a drain after an outage: half again at a rate limit).
 *
 * The engine reads it only when the process starts, so `run` executes itself again once with it (execve: the same
 * pid, arguments, open files and environment plus this), before it opens anything. An operator who sets it keeps
 * what they set (`BUN_JSC_useJIT=true` keeps the JIT); a runtime without execve (Deno) runs as it is. The game server
 * and hooks never see it (lib/child-env.ts).
 */
export const RUNTIME_SETTINGS: Readonly<Record<string, string>> = { BUN_JSC_useJIT: "false" };

/** Whether this is the compiled executable: its modules are under /$bunfs/ (B:/~BUN/ on Windows). */
export const isCompiled = (): boolean => import.meta.url.includes("$bunfs") || import.meta.url.includes("~BUN");

type Execve = (file: string, args: string[], env: Record<string, string | undefined>) => never;

/** Re-executes this process with RUNTIME_SETTINGS unless they (or any of them) are set; returns when it does not. */
export function useRunSettings(env: NodeJS.ProcessEnv = process.env): void {
  if (Object.keys(RUNTIME_SETTINGS).some((name) => env[name] !== undefined)) return;
  const execve = (process as { execve?: Execve }).execve;
  if (typeof execve !== "function" || !("Bun" in globalThis)) return;
  // A compiled executable lists its embedded entry point as argv[1] and carries its own runtime flags. Only a
  // process started as the program is executed again: never a test runner that calls `run` in-process.
  const compiled = isCompiled();
  if (!compiled && !/[\\/]cli[\\/]main\.ts$/.test(process.argv[1] ?? "")) return;
  const args = compiled ? process.argv.slice(2) : [...process.execArgv, ...process.argv.slice(1)];
  // A deleted or replaced executable (an upgrade while `run` starts) is named "<path> (deleted)": Bun would print
  // its warning that execve is experimental, a line outside the log's format, before the call fails.
  if (!existsSync(process.execPath)) return;
  try {
    execve(process.execPath, [process.argv0, ...args], { ...env, ...RUNTIME_SETTINGS });
  } catch {
    // The executable is gone or not executable (replaced during an upgrade): this process runs with the JIT.
  }
}
