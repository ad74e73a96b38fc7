/**
 * The models of this server and what it shows (docs/service-api.md §4): the server record, adverts, the community's
 * web address, and the status report sent to the service. One domain a module; schemas.ts is the index importers use.
 */
import * as v from "valibot";
import { Id, Json, lenientArray } from "./lenient.ts";
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

export const AdvertSchema = v.looseObject({
  id: Id,
  title: v.nullish(v.string()),
  /** Multi-line; may hold <red>…</red> colour tags. */
  content: v.string(),
  sort_id: v.nullish(v.number()),
  /** Pydantic Color: a CSS name, #rgb, #rrggbb or with alpha. */
  color: v.nullish(v.string()),
  enabled: v.boolean(),
  serverbundles: v.nullish(v.array(ServerbundleShortSchema)),
});
export type Advert = v.InferOutput<typeof AdvertSchema>;

export const AdvertListSchema = lenientArray(AdvertSchema);

/** GET /general/frontend-url: the community's web address, for links such as the server dashboard. */
export const FrontendUrlSchema = v.looseObject({ frontend_url: v.pipe(v.string(), v.url()) });

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
