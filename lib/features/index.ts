import type { Agent } from "../agent.ts";
import { bans } from "./bans.ts";
import { online } from "./online.ts";
import { playtime } from "./playtime.ts";
import { rewards } from "./rewards.ts";

/**
 * A feature installs its jobs, event listeners and commands on the agent at hub_ready. One module a concern;
 * the agent only wires them.
 */
export type Feature = (agent: Agent) => void;

export const FEATURES: readonly Feature[] = [online, bans, playtime, rewards];
