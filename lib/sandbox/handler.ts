// The web-standard request handler (Request → Response): the front proxy's size limits (as nginx's defaults answer
// them), routing as Starlette does it (405, 307 to the other slash form, 404), Bearer auth, the request log and
// injected faults. No runtime-specific API here.
import type { ControlPanel } from "./control.ts";
import { ApiError, json, type Route } from "./http.ts";
import { attributeRoutes } from "./routes/attributes.ts";
import { controlRoutes } from "./routes/control.ts";
import { rewardRoutes } from "./routes/rewards.ts";
import { sanctionRoutes } from "./routes/sanctions.ts";
import { serverRoutes } from "./routes/server.ts";
import { userRoutes } from "./routes/users.ts";
import type { SandboxState } from "./state.ts";
import { Input, ValidationError } from "./validate.ts";

export interface HandlerOptions {
  /** e.g. "/sandbox/v1"; no trailing slash. */
  basePath: string;
  /** The Bearer token accepted. */
  key: string;
}

/**
 * A proxy in front of the service (nginx with its defaults) refuses a request line longer than one 8 KiB header
 * buffer with 414, and a body over `client_max_body_size` (1 MiB) with 413, before the service sees either; so does
 * the sandbox, so that a request that grows with the player count fails in tests as it would in production.
 */
export const MAX_REQUEST_LINE = 8192;
export const MAX_BODY_BYTES = 1024 * 1024;

/** nginx's own error page for these statuses (HTML, not the service's JSON). */
function proxyRefusal(status: 413 | 414): Response {
  const title = status === 414 ? "414 Request-URI Too Large" : "413 Request Entity Too Large";
  const page = `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`;
  return new Response(page, { status, headers: { "content-type": "text/html" } });
}

/** `GET /path?query HTTP/1.1`: what nginx reads into one header buffer (the path and query as sent, encoded). */
export function requestLineLength(method: string, url: URL): number {
  return `${method} ${url.pathname}${url.search} HTTP/1.1`.length;
}

const openapi: Route = {
  method: "GET",
  path: "/openapi.json",
  auth: false,
  handle: (ctx) => ({
    openapi: "3.0.2",
    info: { title: "VyHub API", version: ctx.state.apiVersion },
    paths: ROUTES.reduce<Record<string, Record<string, object>>>((paths, r) => {
      (paths[r.path] ??= {})[r.method.toLowerCase()] = {};
      return paths;
    }, {}),
  }),
};

// Specific templates before the generic ones they would also match (e.g. /server/bundle/{uuid} before /server/{uuid}).
const ROUTES: Route[] = [
  openapi,
  ...serverRoutes,
  ...attributeRoutes,
  ...sanctionRoutes,
  ...rewardRoutes,
  ...userRoutes,
];

// The sandbox's own routes are matched like the others but are no part of the API it models (not in openapi.json).
const compiled = [...ROUTES, ...controlRoutes].map((route) => {
  const source = route.path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "([^/]+)");
  return { route, pattern: new RegExp(`^${source}$`) };
});

function find(method: string, path: string): { route?: Route; params: string[]; pathOnly: boolean } {
  let pathOnly = false;
  for (const { route, pattern } of compiled) {
    const m = pattern.exec(path);
    if (!m) continue;
    if (route.method === method) return { route, params: m.slice(1).map(decodeURIComponent), pathOnly: false };
    pathOnly = true;
  }
  return { params: [], pathOnly };
}

function parseBody(text: string): { body: unknown; invalid: boolean } {
  if (!text) return { body: undefined, invalid: false };
  try {
    return { body: JSON.parse(text), invalid: false };
  } catch {
    return { body: text, invalid: true };
  }
}

export function createSandboxHandler(
  state: SandboxState,
  control: ControlPanel,
  opts: HandlerOptions,
): (req: Request) => Promise<Response> {
  return async (req) => {
    const url = new URL(req.url);
    const method = req.method.toUpperCase();
    const proxied = proxyLimits(req, method, url);
    if (proxied) {
      // Logged like any request (a test asserts no request was refused), but no body: it was never read.
      const entry = control.record({
        method,
        path: url.pathname.startsWith(`${opts.basePath}/`) ? url.pathname.slice(opts.basePath.length) : url.pathname,
        query: [...url.searchParams],
        body: null,
        headers: Object.fromEntries(req.headers),
        status: proxied.status,
        time: state.now(),
      });
      await control.handled(entry);
      return proxied;
    }
    const path = url.pathname.startsWith(`${opts.basePath}/`) ? url.pathname.slice(opts.basePath.length) : undefined;
    const text = await req.text();
    // A body sent without its length (chunked) is measured once read.
    if (new TextEncoder().encode(text).byteLength > MAX_BODY_BYTES) return proxyRefusal(413);
    const { body, invalid } = parseBody(text);
    const entry = control.record({
      method,
      path: path ?? url.pathname,
      query: [...url.searchParams],
      body: body ?? null,
      headers: Object.fromEntries(req.headers),
      status: 0,
      time: state.now(),
    });
    const res = (await control.intercept(entry)) ?? answer(path, method, url, body, invalid, req.headers);
    entry.status = res.status;
    await control.handled(entry);
    return res;
  };

  function proxyLimits(req: Request, method: string, url: URL): Response | undefined {
    if (requestLineLength(method, url) > MAX_REQUEST_LINE) return proxyRefusal(414);
    const length = Number(req.headers.get("content-length") ?? 0);
    if (length > MAX_BODY_BYTES) return proxyRefusal(413);
    return undefined;
  }

  function answer(
    path: string | undefined,
    method: string,
    url: URL,
    body: unknown,
    invalid: boolean,
    headers: Headers,
  ): Response {
    if (path === undefined) return json(404, { detail: "Not Found" });
    const { route, params, pathOnly } = find(method, path);
    if (!route) {
      if (pathOnly) return json(405, { detail: "Method Not Allowed" });
      const other = path.endsWith("/") ? path.slice(0, -1) : `${path}/`;
      if (find(method, other).route || find(method, other).pathOnly)
        return new Response(null, { status: 307, headers: { location: `${opts.basePath}${other}${url.search}` } });
      return json(404, { detail: "Not Found" });
    }
    if (route.auth !== false && headers.get("authorization") !== `Bearer ${opts.key}`)
      return new ApiError(401, "invalid_token", "Invalid token.").toResponse();
    try {
      if (invalid)
        throw new ValidationError([
          { loc: ["body", 0], msg: "Expecting value: line 1 column 1 (char 0)", type: "value_error.jsondecode" },
        ]);
      const result = route.handle({ state, params, query: url.searchParams, body, input: new Input() });
      return result instanceof Response ? result : json(200, result);
    } catch (error) {
      if (error instanceof ApiError) return error.toResponse();
      if (error instanceof ValidationError) return json(422, { detail: error.issues });
      return json(500, { detail: { code: "internal_error", msg: String(error), detail: {} } });
    }
  }
}
