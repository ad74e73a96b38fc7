/**
 * The models of this server (docs/service-api.md §4): the server record and the status report sent to the service
 * (what it shows: schemas-adverts.ts). One domain a module; schemas.ts is the index importers use.
 */
import * as v from "valibot";
import { Id, Json } from "./lenient.ts";
import { ServerStatusSchema, ServerTypeSchema, ServerbundleShortSchema, TimestampSchema } from "./schemas-common.ts";

export const ServerSchema = v.looseObject({
  id: Id,
  name: v.string(),
  type: ServerTypeSchema,
  address: v.nullish(v.string()),
  port: v.nullish(v.number()),
  users_max: v.nullish(v.number()),
  users_current: v.nullish(v.number()),
  map: v.nullish(v.string()),
  serverbundle_id: v.nullish(Id),
  extra: v.nullish(Json),
  hidden: v.nullish(v.boolean()),
  last_update: v.nullish(TimestampSchema),
  serverbundle: v.nullish(ServerbundleShortSchema),
  status: v.nullish(ServerStatusSchema),
});
export type Server = v.InferOutput<typeof ServerSchema>;

// Request bodies (see schemas.ts).

export interface UserActivityAdd {
  /** VyHub user id. */
  user_id: string;
  extra?: Record<string, unknown>;
}
export interface ServerStatusPatch {
  users_max?: number;
  users_current?: number;
  map?: string;
  is_alive?: boolean;
  user_activities?: UserActivityAdd[];
}
