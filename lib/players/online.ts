import * as v from "valibot";
import type { Store } from "../store/index.ts";

/**
 * Who is online, for one-shot commands (`hub-agent ban <nick> …`): `run` keeps the store cache "online" current on
 * every connect, disconnect and user lookup (features/online.ts), and rewrites it every status round so its age
 * tells a reader whether a `run` is keeping it up to date at all. Read by ./resolve.ts.
 */
export const OnlinePlayerSchema = v.object({
  id: v.string(),
  name: v.string(),
  /** The service user id, null until the user lookup succeeded. */
  user_id: v.nullable(v.string()),
});
export type OnlinePlayer = v.InferOutput<typeof OnlinePlayerSchema>;

export const OnlineSchema = v.object({
  /** The bridge's user type: the ids above are of this kind. */
  user_type: v.string(),
  players: v.array(OnlinePlayerSchema),
});
export type Online = v.InferOutput<typeof OnlineSchema>;

export const onlineCache = (store: Store) => store.cache("online", OnlineSchema, { durable: false });
