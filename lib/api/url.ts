/**
 * The request's URL: the base joined with the canonical path, each id encoded as one path segment, the query
 * rendered. Apart from the transport (http.ts) because the request-size limit (request-size.ts) measures URLs with
 * the same code before any request is sent.
 */

export type QueryValue = string | number | boolean | null | undefined | readonly (string | number | boolean)[];
export type Query = Record<string, QueryValue>;

/** Joins by string: strip trailing slashes from the base, then append the canonical path. */
export function joinUrl(base: string, path: string): string {
  return base.replace(/\/+$/, "") + (path.startsWith("/") ? path : `/${path}`);
}

/** Encodes one path segment (identifiers are user-controlled strings). */
export function seg(id: string): string {
  return encodeURIComponent(id);
}

/**
 * A path with each interpolated id encoded (`seg`), and its route with each id as `{id}`:
 * at`/server/${id}` → { path: "/server/541d…", route: "/server/{id}" }.
 */
export function at(strings: TemplateStringsArray, ...ids: string[]): { path: string; route: string } {
  return {
    path: strings.reduce((out, s, i) => out + s + (i < ids.length ? seg(ids[i] as string) : ""), ""),
    route: strings.join("{id}"),
  };
}

/** Arrays become repeated keys, booleans "true"/"false"; null and undefined are left out. */
export function buildQuery(query: Query | undefined): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value === null || value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) params.append(key, String(item));
  }
  const s = params.toString();
  return s ? `?${s}` : "";
}
