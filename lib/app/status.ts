/**
 * `hub-agent status` from another shell: whether a run is alive on this store (its instance lock), its snapshot
 * (service, jobs, players, game bridge), and what the store holds (queues, the last long delivery round, caches,
 * quarantine), as lib/monitor/status.ts reads them. Plain data; the command says it and exits by `run.alive`.
 */
import { type StatusView, readStatus } from "../monitor/status.ts";
import { type StoreDeps, openConfiguredStore } from "./storage.ts";

export type { StatusView } from "../monitor/status.ts";
export { playersOnline } from "../monitor/status.ts";

export async function agentStatus(deps: StoreDeps): Promise<StatusView> {
  return readStatus(await openConfiguredStore(deps), Date.now());
}
