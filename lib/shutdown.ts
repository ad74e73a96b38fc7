import { within, type Clock } from "./clock.ts";
import type { GameBridge } from "./game/bridge.ts";

/**
 * How long `run` gives its own work after SIGINT/SIGTERM, in monotonic time: the process exits within 2 s whatever
 * the game's console does (docs/running.md, "Stopping"). The rest of the 2 s is the status snapshot, the instance
 * lock and the exit itself (FINAL_STEP_MS each).
 */
export const STOP_BUDGET_MS = 1_500;
/**
 * Each of the steps after the stop (the final status snapshot, the instance lock's removal) gets at most this long: a
 * stalled disk holds a create, rename or unlink for seconds, and the exit must not wait for it. A snapshot not
 * written leaves the one before ("stopping"); a lock not removed names a dead pid, which the next `run` takes over.
 */
export const FINAL_STEP_MS = 100;

/**
 * Stops the agent, then the game bridge, on a budget: work in flight (a queue round, a console command) gets half of
 * it; then the bridge is closed, which fails a console command still waiting at once instead of at its timeout (an
 * unreachable host, a peer that never answers); then whatever is left of the budget. Work still running then is
 * abandoned: the process exits, and the durable queues hold what was not delivered (an entry already sent is
 * marked uncertain and looked up before it is sent again). A bridge that runs the game server is the exception:
 * its stop is waited for whole, so the server's own shutdown (a world save) is never cut short.
 */
export async function stopWithin(o: {
  clock: Clock;
  agent: { stop(): Promise<void> };
  bridge: GameBridge;
  budgetMs?: number;
}): Promise<{ abandoned: boolean }> {
  const { clock, bridge } = o;
  const budget = o.budgetMs ?? STOP_BUDGET_MS;
  const deadline = clock.monotonic() + budget;
  const left = () => Math.max(0, deadline - clock.monotonic());
  const agent = o.agent.stop();
  let agentDone = await within(clock, agent, budget / 2);
  const bridgeStop = bridge.stop();
  let bridgeDone = bridge.wrapsProcess ? (await bridgeStop.catch(() => {}), true) : false;
  if (!agentDone) agentDone = await within(clock, agent, left());
  if (!bridgeDone) bridgeDone = await within(clock, bridgeStop, left());
  return { abandoned: !agentDone || !bridgeDone };
}
