/**
 * One run of the wrapped server's process: spawned directly (no shell) in its own process group, with the clean
 * environment of lib/child-env.ts, as another user if configured (./run-as.ts), both pipes read to the end as
 * lines, commands written to its stdin or its command pipe (./command-pipe.ts; docs/game-consoles.md §2.3).
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { childEnv } from "../../child-env.ts";
import { within, type Clock } from "../../clock.ts";
import type { Logger } from "../../log.ts";
import { LineSplitter, type LineStream } from "../sources/lines.ts";
import { errorMessage } from "../transports/transport.ts";
import { openCommandPipe } from "./command-pipe.ts";
import { resolveRunAs } from "./run-as.ts";

export interface ChildStatus {
  code: number | null;
  signal: string | null;
}

export interface ServerChild {
  readonly pid: number;
  /** Resolves once the process is gone and both pipes are read (2 s after its exit at most). */
  readonly exited: Promise<ChildStatus>;
  /** Writes to the server's console (stdin, or its command pipe); false when it is closed. */
  write(text: string): boolean;
  /** Signals the whole process group (wrapper scripts such as srcds_run fork the real server); none once gone. */
  signal(sig: NodeJS.Signals): void;
  /** Ends the run: the stop command (else SIGTERM), after `stopTimeoutMs` SIGTERM, after `killTimeoutMs` SIGKILL. */
  stop(how: StopSteps): Promise<void>;
}

export interface StopSteps {
  /** The console command that shuts the server down cleanly (`quit`, `stop`); without one, SIGTERM. */
  stopCommand?: string;
  /** How long the server may take to exit after the stop command before it gets SIGTERM (default 30 s). */
  stopTimeoutMs: number;
  /** How long after SIGTERM before SIGKILL (default 10 s). */
  killTimeoutMs: number;
}

export interface ChildOptions {
  /** The dedicated server and its arguments (`game.wrapper.command`); run directly, no shell. */
  command: readonly string[];
  cwd?: string;
  /** Variables the operator passes (`[game.wrapper.env]`), added to the few every program needs (childEnv). */
  env?: Record<string, string>;
  /** A named pipe the server reads its commands from instead of stdin (`game.wrapper.command_pipe`). */
  commandPipe?: string;
  /** The account (and group) the server runs as, when hub-agent runs as root (`game.wrapper.user`, `group`). */
  user?: string;
  group?: string;
  clock: Clock;
  logger: Logger;
}

/**
 * Starts the server; rejects when it can't be started (not found, not executable, no such user, a bad command
 * pipe). Both pipes are always drained (ioq3 writes its console to stderr; a full pipe would block the game). If
 * hub-agent exits while the server runs, the server gets SIGTERM.
 */
export async function spawnChild(
  o: ChildOptions,
  onLine: (line: string, stream: LineStream) => void,
): Promise<ServerChild> {
  const [file, ...args] = o.command as [string, ...string[]];
  const runAs = o.user !== undefined ? await resolveRunAs(o.user, o.group) : undefined;
  const pipe = o.commandPipe
    ? await openCommandPipe(o.commandPipe, { ...(runAs ? { owner: runAs } : {}), clock: o.clock, logger: o.logger })
    : undefined;
  let child: ChildProcessWithoutNullStreams;
  try {
    child = spawn(file, args, {
      cwd: o.cwd,
      env: childEnv(o.env, process.env, runAs),
      stdio: ["pipe", "pipe", "pipe"],
      detached: process.platform !== "win32",
      // Only for a switch: hub-agent already running as that user keeps its groups as they are.
      ...(runAs && (runAs.uid !== process.getuid?.() || runAs.gid !== process.getgid?.())
        ? { uid: runAs.uid, gid: runAs.gid }
        : {}),
    });
  } catch (e) {
    // Bun refuses some spawns at once (EPERM for a user switch without root) instead of with an "error" event.
    pipe?.close();
    throw new Error(`game.wrapper.command: cannot start ${JSON.stringify(file)}: ${errorMessage(e)}`);
  }
  const as = runAs ? ` as ${runAs.name}` : "";
  let gone = false;
  const signal = (sig: NodeJS.Signals) => {
    if (!gone) killGroup(child, sig);
  };
  const killOnExit = () => signal("SIGTERM");

  const splitters = (["stdout", "stderr"] as const).map((stream) => {
    const splitter = new LineSplitter((line) => onLine(line, stream));
    child[stream].on("data", (d: Buffer) => splitter.push(d));
    return splitter;
  });
  child.stdin.on("error", (e) => o.logger.debug(`server stdin: ${errorMessage(e)}`));
  const exited = new Promise<ChildStatus>((resolve) => {
    let status: ChildStatus | undefined;
    const finish = () => {
      if (gone || !status) return;
      gone = true;
      for (const s of splitters) s.flush();
      process.off("exit", killOnExit);
      resolve(status);
    };
    child.once("exit", (code, sig) => {
      status = { code, signal: sig };
      pipe?.close(); // what the server did not read must not run on the next one
      // What the server forked (a script's real server) ends with it: left, it would keep the game's port and its
      // players, out of hub-agent's sight and bans. SIGTERM now, SIGKILL 2 s on (the group's id is not yet reused).
      signal("SIGTERM");
      const reap = () => {
        killGroup(child, "SIGKILL");
        finish();
      };
      // "close" follows once the pipes are drained; a grandchild holding them open must not stall us.
      o.clock.sleep(2000).then(reap, reap);
    });
    child.once("close", () => finish());
  });

  return new Promise((resolve, reject) => {
    child.once("error", (e) => {
      // Only a failed spawn lands here before "spawn"; later errors (a failed kill) are logged.
      if (child.pid === undefined) {
        pipe?.close();
        reject(new Error(`game.wrapper.command: cannot start ${JSON.stringify(file)}${as}: ${errorMessage(e)}`));
      } else o.logger.warn(`server process error: ${errorMessage(e)}`);
    });
    child.once("spawn", () => {
      o.logger.info(`started ${file}${as}`, { pid: child.pid });
      process.on("exit", killOnExit);
      // With a command pipe, stdin stays open and unused (some servers exit at its end).
      const write = pipe
        ? (text: string) => pipe.write(text)
        : (text: string) => {
            if (child.stdin.destroyed || !child.stdin.writable) return false;
            child.stdin.write(text);
            return true;
          };
      const run: ServerChild = { pid: child.pid as number, exited, signal, write, stop: (how) => stop(run, how, o) };
      resolve(run);
    });
  });
}

/** Signals the child's process group (on Windows, the child); nothing when it is gone. */
function killGroup(child: ChildProcessWithoutNullStreams, sig: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    if (process.platform === "win32") child.kill(sig);
    else process.kill(-child.pid, sig);
  } catch {
    // already gone
  }
}

async function stop(child: ServerChild, how: StopSteps, o: ChildOptions): Promise<void> {
  const { stopCommand, stopTimeoutMs, killTimeoutMs } = how;
  const exitedWithin = (ms: number) => within(o.clock, child.exited, ms);
  if (stopCommand) {
    o.logger.info(`stopping the server with "${stopCommand}"`);
    child.write(`${stopCommand}\n`);
  } else child.signal("SIGTERM");
  if (await exitedWithin(stopTimeoutMs)) return;
  o.logger.warn(`the server did not exit within ${stopTimeoutMs} ms: sending SIGTERM`);
  child.signal("SIGTERM");
  if (await exitedWithin(killTimeoutMs)) return;
  o.logger.warn(`the server did not exit within ${killTimeoutMs} ms of SIGTERM: sending SIGKILL`);
  child.signal("SIGKILL");
  await child.exited;
}
