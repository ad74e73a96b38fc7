import type { Agent } from "../agent.ts";
import { adverts } from "./adverts.ts";
import { bans } from "./bans.ts";
import { dashboard } from "./dashboard.ts";
import { groups } from "./groups.ts";
import { online } from "./online.ts";
import { playtime } from "./playtime.ts";
import { rewards } from "./rewards.ts";

/**
 * A feature installs its jobs, event listeners and commands on the agent at hub_ready. One module a concern;
 * the agent only wires them.
 */
export type Feature = (agent: Agent) => void;

/** Bans come first: a banned player is kicked at connect before anything else is done for them. */
export const FEATURES: readonly Feature[] = [online, bans, groups, playtime, rewards, adverts, dashboard];
