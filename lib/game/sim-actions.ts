/**
 * What the sim records of the agent's actions: the record's shape and the durable log file (`[game.sim]
 * actions_log`) a test reads back after killing a `run`. Apart from sim.ts because that file is read by other
 * processes, so its format and its durability are a contract of their own.
 */
import { open } from "../fsio.ts";
import { serial } from "../serial.ts";

export type SimActionType = "kick" | "message" | "broadcast" | "set_group" | "exec" | "script";

/** What the agent did to the game. */
export interface SimAction {
  type: SimActionType;
  at: number;
  player?: string;
  /** Kick reason or message text. */
  text?: string;
  group?: string;
  op?: "add" | "remove";
  seconds?: number;
  command?: string;
  /** A script run by `script.run`. */
  script?: string;
}

/**
 * Appends each text to `file`, in call order, and fsyncs before its promise settles: the line survives a kill -9
 * (and a power loss) once the action's call has returned. Through the thread pool, not node:fs's blocking calls:
 * the sim lives in `run`'s process, and a synchronous fsync (a few ms on a busy disk, for every kick, message and
 * advert line) stalled every agent of a host, and every kick with it, by up to 200 ms in bench:host.
 */
export function durableAppender(file: string): (text: string) => Promise<void> {
  const inOrder = serial();
  return (text) =>
    inOrder(async () => {
      const fh = await open(file, "a");
      try {
        await fh.writeFile(text);
        await fh.sync();
      } finally {
        await fh.close();
      }
    });
}
