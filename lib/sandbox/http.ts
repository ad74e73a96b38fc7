// Shared pieces of the routes: the route type, JSON responses, the service's error bodies, morph checks, pages.
import { toJson } from "./format.ts";
import type { SandboxState, UserRecord } from "./state.ts";
import { Input } from "./validate.ts";

export interface Ctx {
  state: SandboxState;
  /** Path parameters in template order. */
  params: string[];
  query: URLSearchParams;
  /** Parsed JSON body; undefined when the request had none. */
  body: unknown;
  input: Input;
}

export interface Route {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  /** Template relative to the base path, e.g. "/user/{uuid}/membership"; `{…}` matches one segment. */
  path: string;
  /** Returns the response model (sent as JSON with status 200) or a ready Response. */
  handle(ctx: Ctx): unknown;
  /** false only for the unauthenticated probe. */
  auth?: boolean;
}

/** `Content-Type` exactly `application/json`: Lua clients compare the header verbatim (docs/service-api.md §1.3). */
export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(toJson(body), { status, headers: { "content-type": "application/json", ...headers } });
}

/** An application error, answered as `{detail: {code, msg, detail}}`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    msg: string,
    readonly detail: Record<string, unknown> = {},
  ) {
    super(msg);
  }
  toResponse(): Response {
    return json(this.status, { detail: { code: this.code, msg: this.message, detail: this.detail } });
  }
}

export const notFound = (what: string) => new ApiError(404, "not_found", `${what} not found.`);

/** Looks a record up by a (validated) id or throws the service's 404. */
export function must<T>(map: Map<string, T>, id: string | null | undefined, what: string): T {
  const found = id ? map.get(id) : undefined;
  if (!found) throw notFound(what);
  return found;
}

/** The record named by the uuid path parameter `index`: 422 when it is not a uuid, 404 when unknown. */
export function byPath<T>(ctx: Ctx, map: Map<string, T>, what: string, index = 0): T {
  const id = ctx.input.path(ctx.params[index]!, "uuid");
  ctx.input.done();
  return must(map, id, what);
}

/**
 * `morph_user_id`: run as that user, who must hold `property` in the bundle (admins hold all).
 * An unknown morph user is a 404 (the service resolves the user before it checks anything).
 * Returns the morph user, or null when the request runs as the token (console).
 */
export function morph(ctx: Ctx, property: string, serverbundle_id: string | null): UserRecord | null {
  const id = ctx.input.query(ctx.query, "morph_user_id", "uuid");
  ctx.input.done();
  if (!id) return null;
  const user = must(ctx.state.users, id, "Morph user");
  if (!ctx.state.hasProperty(user, property, serverbundle_id))
    throw new ApiError(403, "missing_properties", `Missing properties: ${property}`, { properties: [property] });
  return user;
}

/** fastapi-pagination: 1-based `page`, `size` 1..100 (default 50), `total` before slicing; `sort_by`/`sort_desc`. */
export function page<T extends Record<string, unknown>>(ctx: Ctx, items: T[]) {
  const { input, query } = ctx;
  const pageNo = input.query<number>(query, "page", "int") ?? 1;
  const size = input.query<number>(query, "size", "int") ?? 50;
  const sortBy = input.query(query, "sort_by") ?? "created_on";
  const desc = input.query<boolean>(query, "sort_desc", "bool") ?? false;
  if (pageNo < 1) input.issues.push(limit("page", "greater than or equal to", 1, "ge"));
  if (size < 1) input.issues.push(limit("size", "greater than or equal to", 1, "ge"));
  if (size > 100) input.issues.push(limit("size", "less than or equal to", 100, "le"));
  input.done();
  const key = (item: T) => item[sortBy] as string | number | null;
  const sorted = [...items].sort((a, b) => {
    const [x, y] = [key(a), key(b)];
    const order = x === y ? 0 : x === null ? -1 : y === null ? 1 : x < y ? -1 : 1;
    return desc ? -order : order;
  });
  return { items: sorted.slice((pageNo - 1) * size, pageNo * size), total: items.length, page: pageNo, size };
}

function limit(name: string, words: string, value: number, kind: "ge" | "le") {
  return {
    loc: ["query", name],
    msg: `ensure this value is ${words} ${value}`,
    type: `value_error.number.not_${kind}`,
    ctx: { limit_value: value },
  };
}
