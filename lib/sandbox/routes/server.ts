// Server, serverbundle and general endpoints: the agent's startup read, the status heartbeat, the ban list.
import { bundleModel, banReduced, serverModel, warningModel } from "../models.ts";
import { byPath, must, type Ctx, type Route } from "../http.ts";
import { SERVER_TYPES, type ServerRecord } from "../state.ts";
import { opt, req } from "../validate.ts";

interface ServerPatch {
  users_max: number | null;
  users_current: number | null;
  map: string | null;
  name: string | null;
  type: string | null;
  address: string | null;
  port: number | null;
  serverbundle_id: string | null;
  extra: Record<string, unknown> | null;
  hidden: boolean | null;
  is_alive: boolean | null;
  user_activities: { user_id: string; extra: Record<string, unknown> | null }[] | null;
}

const SERVER_PATCH = {
  users_max: opt("int"),
  users_current: opt("int"),
  map: opt("str"),
  name: opt("str"),
  type: opt({ enum: SERVER_TYPES }),
  address: opt("str"),
  port: opt("int"),
  serverbundle_id: opt("uuid"),
  extra: opt("dict"),
  hidden: opt("bool"),
  is_alive: opt("bool"),
  user_activities: opt({ list: "any" }),
  secrets: opt("dict"),
};

const server = (ctx: Ctx): ServerRecord => byPath(ctx, ctx.state.servers, "Server");

function patchServer(ctx: Ctx) {
  const { input, state } = ctx;
  const s = server(ctx);
  const patch = input.body<ServerPatch>(ctx.body, SERVER_PATCH);
  const activities = (patch.user_activities ?? []).map((a, i) =>
    input.body<{ user_id: string; extra: Record<string, unknown> | null }>(
      a,
      { user_id: req("uuid"), extra: opt("dict") },
      ["body", "user_activities", i],
    ),
  );
  input.done();
  if (patch.serverbundle_id) must(state.serverbundles, patch.serverbundle_id, "Serverbundle");
  // Only fields the client sent change; Pydantic's exclude_unset.
  const sent = ctx.body as Record<string, unknown>;
  for (const key of [
    "users_max",
    "users_current",
    "map",
    "name",
    "type",
    "address",
    "port",
    "serverbundle_id",
    "extra",
    "hidden",
  ] as const)
    if (key in sent) Object.assign(s, { [key]: patch[key] });
  if (patch.is_alive) {
    s.last_update = state.now();
    s.status = "ONLINE";
  }
  for (const a of activities) {
    const user = state.users.get(a.user_id);
    if (user) user.activities = [{ extra: a.extra, last_online: state.now() }];
  }
  return serverModel(state, s);
}

/** `{[user.identifier]: T[]}` of a bundle's records plus global ones (serverbundle null), newest first. */
function keyedByIdentifier<R extends { user_id: string; serverbundle_id: string | null; created_on: number }, M>(
  ctx: Ctx,
  records: Iterable<R>,
  isActive: (r: R) => boolean,
  model: (r: R) => M,
): Record<string, M[]> {
  const bundle = byPath(ctx, ctx.state.serverbundles, "Serverbundle");
  const active = ctx.input.query<boolean>(ctx.query, "active", "bool");
  ctx.input.done();
  const out: Record<string, M[]> = {};
  const chosen = [...records]
    .filter((r) => r.serverbundle_id === null || r.serverbundle_id === bundle.id)
    .filter((r) => !active || isActive(r))
    .sort((a, b) => b.created_on - a.created_on);
  for (const r of chosen) {
    const user = ctx.state.users.get(r.user_id);
    if (user) (out[user.identifier] ??= []).push(model(r));
  }
  return out;
}

export const serverRoutes: Route[] = [
  {
    method: "GET",
    path: "/server/bundle/{uuid}",
    handle: (ctx) => bundleModel(ctx.state, byPath(ctx, ctx.state.serverbundles, "Serverbundle").id),
  },
  {
    method: "GET",
    path: "/server/bundle/{uuid}/ban",
    handle: (ctx) =>
      keyedByIdentifier(
        ctx,
        ctx.state.bans.values(),
        (b) => ctx.state.banActive(b),
        (b) => banReduced(ctx.state, b),
      ),
  },
  {
    method: "GET",
    path: "/server/bundle/{uuid}/warning",
    handle: (ctx) =>
      keyedByIdentifier(
        ctx,
        ctx.state.warnings.values(),
        (w) => ctx.state.warningActive(w),
        (w) => warningModel(ctx.state, w),
      ),
  },
  { method: "GET", path: "/server/{uuid}", handle: (ctx) => serverModel(ctx.state, server(ctx)) },
  { method: "PATCH", path: "/server/{uuid}", handle: patchServer },
  { method: "GET", path: "/general/frontend-url", handle: (ctx) => ({ frontend_url: ctx.state.frontendUrl }) },
];
