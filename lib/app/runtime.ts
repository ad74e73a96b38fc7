import { existsSync } from "node:fs";

/**
 * The runtime settings of `run`, a process that lives for weeks beside a game server on a host whose memory is
 * shared: JavaScriptCore's optimizing JIT (DFG, and FTL above it) off, its garbage collector sized as if the machine
 * had 128 MiB (it collects before the heap doubles, not when a large machine's fraction fills), and mimalloc giving
 * freed pages back at once. Measured with 1,000 players (docs/performance.md): a quarter less peak memory and a flat
 * curve instead of one that climbs between collections, for a few percent more CPU.
 *
 * The engine and the allocator read these only when the process starts, so `run` executes itself again once with
 * them (execve: the same pid, arguments, open files and environment plus these), before it opens anything. An
 * operator who sets any of them keeps what they set (`BUN_JSC_useDFGJIT=true` turns the trade off); a runtime
 * without execve (Deno, Windows) runs as it is.
 */
export const RUNTIME_SETTINGS: Readonly<Record<string, string>> = {
  BUN_JSC_useDFGJIT: "false",
  BUN_JSC_forceRAMSize: String(128 * 1024 * 1024),
  MIMALLOC_PURGE_DELAY: "0",
};

type Execve = (file: string, args: string[], env: Record<string, string | undefined>) => never;

/** Re-executes this process with RUNTIME_SETTINGS unless they (or any of them) are set; returns when it does not. */
export function useRunSettings(env: NodeJS.ProcessEnv = process.env): void {
  if (Object.keys(RUNTIME_SETTINGS).some((name) => env[name] !== undefined)) return;
  const execve = (process as { execve?: Execve }).execve;
  if (typeof execve !== "function" || !("Bun" in globalThis)) return;
  // A compiled executable lists its embedded entry point as argv[1] and carries its own runtime flags. Only a
  // process started as the program is executed again: never a test runner that calls `run` in-process.
  const compiled = process.argv[1]?.startsWith("/$bunfs/");
  if (!compiled && !/[\\/]cli[\\/]main\.ts$/.test(process.argv[1] ?? "")) return;
  const args = compiled ? process.argv.slice(2) : [...process.execArgv, ...process.argv.slice(1)];
  // A deleted or replaced executable (an upgrade while `run` starts) is named "<path> (deleted)": Bun would print
  // its warning that execve is experimental, a line outside the log's format, before the call fails.
  if (!existsSync(process.execPath)) return;
  try {
    execve(process.execPath, [process.argv0, ...args], { ...env, ...RUNTIME_SETTINGS });
  } catch {
    // The executable is gone or not executable (replaced during an upgrade): this process runs with the defaults.
  }
}
