/**
 * The `run` lifecycle, shared by `hub-agent run` and `demo`: the instance lock, then an agent served until it is
 * stopped (or for one round with `once`), and served again with the new configuration after a reload (SIGHUP). It
 * ends with a typed outcome, which the command renders and maps to an exit code; it never prints and never exits.
 * Stop and reload requests arrive through a RunControl (cli/run-signals.ts gives it the process's signals).
 */
import { resolve } from "node:path";
import { systemClock, within } from "../clock.ts";
import { createBridge } from "../game/index.ts";
import type { Logger } from "../log.ts";
import { FINAL_STEP_MS } from "../shutdown.ts";
import { DISK_REFUSES, describeFsError, fsErrorLine, isStoreDirErrno } from "../store/errors.ts";
import { holdInstance, InstanceBusyError, InstanceLockError, type Instance } from "../store/instance.ts";
import { serve } from "./run-serve.ts";
import type { RunAgentOptions, RunOutcome } from "./run-types.ts";

export { RunControl } from "./run-control.ts";
export type { RunAgentOptions, RunOutcome } from "./run-types.ts";

/** `hub-agent run`: the configured game bridge, then the run. */
export async function startRun(
  opts: Omit<RunAgentOptions, "bridge" | "clock"> & {
    /** A wrapped server's console is copied to stdout for the operator, unless stdout is kept for --json. */
    copyConsole: boolean;
    /** Applied to the copied console (the configured secrets). */
    redact: (text: string) => string;
    /** The operator's console for a wrapped server; default hub-agent's stdin (a host gives none: lib/app/host.ts). */
    input?: NodeJS.ReadableStream;
  },
): Promise<RunOutcome> {
  const { copyConsole, redact, input, ...run } = opts;
  const clock = systemClock;
  // Without `output`, the wrapper takes process.stdout itself (Node's stream objects, memory no other bridge needs).
  const output = copyConsole ? undefined : null;
  const bridge = await createBridge(run.config, {
    clock,
    logger: run.logger,
    output,
    redact,
    ...(input ? { input } : {}),
  });
  return runAgent({ ...run, bridge, clock });
}

/** Holds the instance lock, then serves the agent until it stops; a reload serves it again (bridge and lock stay). */
export async function runAgent(opts: RunAgentOptions): Promise<RunOutcome> {
  let instance: Instance | undefined;
  try {
    const held = await holdLock(opts.config.storage.dir, opts.logger);
    if ("kind" in held) return held;
    instance = held.instance;
    let served = { ...opts, unlocked: !instance, startedAt: opts.clock.now() };
    for (;;) {
      const result = await serve(served);
      if (result.kind !== "reload") return result;
      served = { ...served, config: result.config };
    }
  } catch (e) {
    const line = describeFsError(e);
    if (line) return { kind: "store-error", line };
    throw e;
  } finally {
    // Bounded (lib/shutdown.ts FINAL_STEP_MS): a lock left names this pid, dead once the process exits.
    if (instance) await within(opts.clock, instance.release(), FINAL_STEP_MS);
  }
}

/**
 * The instance lock, held before anything starts (the game bridge too), for the whole run: two agents on one store
 * would each execute `once` rewards and report their own view of the server. No instance: a full or read-only disk.
 */
async function holdLock(dir: string, logger: Logger): Promise<{ instance?: Instance } | RunOutcome> {
  const path = resolve(dir);
  try {
    const instance = await holdInstance(path);
    if (instance.tookOverFrom) {
      const { pid, host, since } = instance.tookOverFrom;
      logger.info(
        `took over the storage directory from a run that is gone (pid ${pid} on ${host}, since ${new Date(since).toISOString()})`,
      );
    }
    return { instance };
  } catch (e) {
    if (e instanceof InstanceBusyError)
      return { kind: "instance-held", line: e.message, holder: `${e.holder.pid}@${e.holder.host}` };
    if (!(e instanceof InstanceLockError)) throw e;
    // A path set up wrong (no permission, a file in the way) is the store's exit code, like every other command's.
    if (!e.code || !DISK_REFUSES.has(e.code))
      return { kind: isStoreDirErrno(e.code) ? "store-error" : "failed", line: e.message };
    // A full or read-only disk must not stop enforcement: bans are kicked from the cache, without what needs the lock.
    logger.error(
      `${fsErrorLine(e.code, path, path)}; running without the instance lock: bans are enforced from the cache, ` +
        "rewards and playtime stay off until hub-agent is restarted with a writable store",
    );
    return {};
  }
}
