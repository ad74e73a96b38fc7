/**
 * Requests stay small whatever the player count. A proxy in front of the service reads the request line into one
 * header buffer (nginx: 8 KiB, answering 414 past it), so a query that repeats a key once per player (the applied
 * rewards' `user_id`) is split into requests whose URL, path and query as sent, stays within MAX_URL_BYTES.
 */
import { buildQuery, joinUrl, type Query } from "./url.ts";

/** Half of nginx's 8 KiB request line: room for the method, the protocol and a longer base path. */
export const MAX_URL_BYTES = 4096;

/** The path and query as they go on the request line (the base URL's path included). */
export function urlBytes(base: string, path: string, query: Query): number {
  const url = new URL(joinUrl(base, path) + buildQuery(query));
  return new TextEncoder().encode(url.pathname + url.search).byteLength;
}

/**
 * Splits `values`, sent as the repeated query key `key` beside `query`, into groups each of whose requests stays
 * within `max` bytes of URL. Order is kept; none is empty. A single value too long for any request is a bug of the
 * caller (ids are short) and throws.
 */
export function chunkQuery(
  base: string,
  path: string,
  query: Query,
  key: string,
  values: readonly string[],
  max = MAX_URL_BYTES,
): string[][] {
  const fixed = urlBytes(base, path, query);
  const chunks: string[][] = [];
  let chunk: string[] = [];
  let size = fixed;
  for (const value of values) {
    // `&key=value` (or `?key=value` for the first item of a query without others: the same length).
    const cost = new TextEncoder().encode(new URLSearchParams([[key, value]]).toString()).byteLength + 1;
    if (fixed + cost > max)
      throw new Error(
        `a ${key} does not fit in a ${max}-byte URL: the base URL and the query already take ${fixed} bytes (is api.url right?)`,
      );
    if (size + cost > max) {
      chunks.push(chunk);
      chunk = [];
      size = fixed;
    }
    chunk.push(value);
    size += cost;
  }
  if (chunk.length) chunks.push(chunk);
  return chunks;
}
