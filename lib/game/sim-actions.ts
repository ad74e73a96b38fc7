/**
 * What the sim records of the agent's actions: the record's shape and the durable log file (`[game.sim]
 * actions_log`) a test reads back after killing a `run`. Apart from sim.ts because that file is read by other
 * processes, so its format and its durability are a contract of their own.
 */
import { closeSync, fsyncSync, openSync, writeSync } from "node:fs";

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

/** Appends and fsyncs before returning: the line survives a kill -9 (and a power loss) right after the call. */
export function appendDurably(file: string, text: string): void {
  const fd = openSync(file, "a");
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
