/**
 * What this server shows (docs/service-api.md §4): its adverts and the community's web address. Apart from the server
 * record (schemas-server.ts), which a one-shot command reads from the store's cache and builds alone.
 */
import * as v from "valibot";
import { Id, lenientArray } from "./lenient.ts";
import { ServerbundleShortSchema } from "./schemas-common.ts";

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
