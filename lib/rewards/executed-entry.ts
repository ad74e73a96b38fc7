/**
 * An entry of the executed queue of `once` rewards, and whether `run` still reports it: the format alone, so what
 * only reads the queue (`queue status`) does not load the service client (./executed.ts does the reporting).
 */
import * as v from "valibot";

export const EXECUTED_QUEUE = "reward_executed";

export const ExecutedRewardSchema = v.object({
  /** The applied reward id (what PATCH takes), not the reward definition's id. */
  id: v.string(),
  user_id: v.string(),
  player_id: v.string(),
  /** The nick at execution, for operators reading `queue status`. */
  player: v.string(),
  reward: v.string(),
  packet: v.string(),
  /** false from the queue write until the bridge has taken the command: a crash in between leaves it false. */
  issued: v.boolean(),
  /** VyHub refused the report (4xx): never sent again by `run`, kept so the reward never runs again. */
  refused: v.optional(v.boolean()),
  /** hub-agent stopped between the claim and the game's answer: it may not have been delivered (operator warned). */
  interrupted: v.optional(v.boolean()),
  /** An interrupted reward VyHub took the report of: kept only for the operator to check and drop. */
  reported: v.optional(v.boolean()),
});
export type ExecutedReward = v.InferOutput<typeof ExecutedRewardSchema>;

/** Does `run` still send this entry of the executed queue? Not when refused or already reported (`queue status`). */
export const awaitsReport = (data: unknown): boolean => {
  const d = (typeof data === "object" && data !== null ? data : {}) as { refused?: unknown; reported?: unknown };
  return d.refused !== true && d.reported !== true;
};
