/**
 * What the sim records of the agent's actions: the record's shape and the log file (`[game.sim]
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
 * Appends each text to `file`, in call order; its promise settles once the line is written: it survives a kill -9 of
 * `run` from then on (the kernel has it), which is what the tests that kill it read back. Not fsynced: a simulated
 * game's log needs no power-cut durability, and a flush per kick, message and advert line made every other fsync of
 * a host wait for the file system's journal (a `ban`'s durable entry waited 192 ms behind ten servers' lines in
 * bench:host). Through the thread pool, not node:fs's blocking calls: the sim lives in `run`'s process.
 */
export function actionAppender(file: string): (text: string) => Promise<void> {
  const inOrder = serial();
  return (text) =>
    inOrder(async () => {
      const fh = await open(file, "a");
      try {
        await fh.writeFile(text);
      } finally {
        await fh.close();
      }
    });
}
