import type { Feature } from "../feature.ts";
import { adverts } from "./adverts.ts";
import { bans } from "./bans.ts";
import { dashboard } from "./dashboard.ts";
import { groups } from "./groups.ts";
import { online } from "./online.ts";
import { playtime } from "./playtime.ts";
import { rewards } from "./rewards.ts";
import { status } from "./status.ts";
import { users } from "./users.ts";

export type { Feature };

/**
 * Bans come first: a banned player is kicked at connect before anything else is done for them. Users (rule 6) runs
 * for the players let in, and is the last to register its job (`run --once` runs jobs in this order).
 */
export const FEATURES: readonly Feature[] = [
  online,
  bans,
  groups,
  playtime,
  rewards,
  adverts,
  dashboard,
  status,
  users,
];

/**
 * What `run` installs when the disk refuses every write, so it can't hold the storage directory's instance lock:
 * everything that stays right with two agents on one store. Not rewards (both would run a `once` reward) nor
 * playtime (both would count it).
 */
export const FEATURES_WITHOUT_INSTANCE: readonly Feature[] = FEATURES.filter((f) => f !== rewards && f !== playtime);
