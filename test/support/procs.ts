/**
 * Every process a test starts goes through `spawn` (or `track`), so none outlives its test: after each test the
 * preload (`test/support/preload.ts`) kills whatever that test left running, with its descendants (a `run` that
 * wraps a game server has a child of its own), and at the end of the run, or if bun itself exits, everything left.
 * A test that fails or times out therefore still stops what it started.
 */
import { readdirSync, readFileSync } from "node:fs";

/** "test": killed after the test that started it (default); "file": shared by a file's tests, killed at the end. */
export type Scope = "test" | "file";

interface Tracked {
  pid: number;
  scope: Scope;
  exited: () => boolean;
}

const tracked = new Set<Tracked>();

/** Registers a process started some other way (node:child_process, Bun.spawn) for the same clean-up. */
export function track<
  P extends { pid?: number | undefined; exitCode: number | null; signalCode?: string | number | null },
>(proc: P, scope: Scope = "test"): P {
  // No pid: the spawn failed, nothing runs.
  if (proc.pid !== undefined)
    tracked.add({ pid: proc.pid, scope, exited: () => proc.exitCode !== null || (proc.signalCode ?? null) !== null });
  return proc;
}

/** Bun.spawn, tracked (the same generics, so stdout/stderr keep their types). */
export function spawn<
  const In extends Bun.SpawnOptions.Writable = "ignore",
  const Out extends Bun.SpawnOptions.Readable = "pipe",
  const Err extends Bun.SpawnOptions.Readable = "inherit",
>(cmd: string[], opts?: Bun.SpawnOptions.SpawnOptions<In, Out, Err> & { scope?: Scope }): Bun.Subprocess<In, Out, Err> {
  const { scope, ...rest } = opts ?? {};
  return track(Bun.spawn(cmd, rest as Bun.SpawnOptions.SpawnOptions<In, Out, Err>), scope);
}

/** Runs a command to its end (tracked like `spawn`): its exit code and what it printed. */
export async function runToEnd(
  cmd: string[],
  opts: { env?: Record<string, string | undefined>; cwd?: string; input?: string } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const p = spawn(cmd, {
    env: opts.env,
    cwd: opts.cwd,
    stdin: new Blob([opts.input ?? ""]),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  return { code, stdout, stderr };
}

/** Parent pid of every live process, read from /proc (Linux); empty elsewhere. */
function parents(): Map<number, number> {
  const out = new Map<number, number>();
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return out;
  }
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // "pid (comm) state ppid …": comm may hold spaces and parentheses, so read after the last ")".
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      out.set(Number(name), ppid);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** The pids of `roots` and all their descendants, children first. */
function withDescendants(roots: number[]): number[] {
  const ppids = parents();
  const children = new Map<number, number[]>();
  for (const [pid, ppid] of ppids) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  const out: number[] = [];
  const visit = (pid: number) => {
    for (const c of children.get(pid) ?? []) visit(c);
    out.push(pid);
  };
  for (const r of roots) visit(r);
  return out;
}

/**
 * SIGKILLs the tracked processes of `scope` (all with "all") that are still running, and their descendants.
 * Returns how many were left running: a test that stops its own processes leaves none.
 */
export function killTracked(scope: Scope | "all"): number {
  const chosen = [...tracked].filter((t) => scope === "all" || t.scope === scope);
  for (const t of chosen) tracked.delete(t);
  const alive = chosen.filter((t) => !t.exited());
  // Descendants too: a tracked process that already exited may have left an orphan (re-parented, so not found).
  for (const pid of withDescendants(alive.map((t) => t.pid))) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  return alive.length;
}
