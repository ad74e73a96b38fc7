// Users, groups and memberships.
import { groupModel, membershipModel, userModel, userShort } from "../models.ts";
import { byPath, morph, must, notFound, page, type Ctx, type Route } from "../http.ts";
import { MEMBERSHIP_PROPERTY, USER_TYPES, type MembershipRecord, type UserRecord } from "../state.ts";
import { opt, req } from "../validate.ts";

/** `{uuid}` in user paths is "UUID or username of the referenced user". */
function user(ctx: Ctx): UserRecord {
  const found = ctx.state.findUser(ctx.params[0]!);
  if (!found) throw notFound("User");
  return found;
}

function getUser(ctx: Ctx) {
  const type = ctx.input.query(ctx.query, "type", { enum: USER_TYPES });
  ctx.input.done();
  const found = ctx.state.findUser(ctx.params[0]!, type);
  if (!found) throw notFound("User");
  return userModel(found);
}

/**
 * A second user with the same (type, identifier) fails as an unhandled database error would: 500 with Starlette's
 * plain-text page. The service documents no answer; the official addons only say that creating one player twice at
 * once gave "404 and 500 error on user creation" (gmod, fixed by merging concurrent creates; minecraft by a lock).
 */
function createUser(ctx: Ctx) {
  const body = ctx.input.body<{ type: string; identifier: string; username: string | null }>(ctx.body, {
    type: req({ enum: USER_TYPES }),
    identifier: req("str"),
    username: opt("str"),
  });
  ctx.input.done();
  if (ctx.state.findUser(body.identifier, body.type))
    return new Response("Internal Server Error", {
      status: 500,
      headers: { "content-type": "text/plain; charset=utf-8" },
    });
  return userModel(
    ctx.state.addUser({ type: body.type, identifier: body.identifier, username: body.username ?? body.identifier }),
  );
}

/** Paginated search (API ≥ 2.0.19): id, identifier or a part of the username. */
function listUsers(ctx: Ctx) {
  const q = ctx.input.query(ctx.query, "query")?.toLowerCase();
  const users = [...ctx.state.users.values()].filter(
    (u) => !q || u.id === q || u.identifier.toLowerCase() === q || (u.username ?? "").toLowerCase().includes(q),
  );
  const lastOnline = (u: UserRecord) => Math.max(0, ...u.activities.map((a) => a.last_online));
  const rows = users.map((u) => ({
    ...userShort(u),
    linked_users: [],
    registered_on: u.registered_on,
    last_online: lastOnline(u),
  }));
  const result = page(ctx, rows);
  return { ...result, items: result.items.map(({ registered_on: _r, last_online: _l, ...item }) => item) };
}

function activeGroups(ctx: Ctx) {
  const u = user(ctx);
  const bundle = ctx.input.query(ctx.query, "serverbundle_id", "uuid");
  ctx.input.done();
  return ctx.state.activeGroups(u.id, bundle).map(groupModel);
}

function listGroups(ctx: Ctx) {
  const isTeam = ctx.input.query<boolean>(ctx.query, "is_team", "bool");
  ctx.input.done();
  return [...ctx.state.groups.values()].filter((g) => isTeam === null || g.is_team === isTeam).map(groupModel);
}

function addMembership(ctx: Ctx) {
  const u = user(ctx);
  const body = ctx.input.body<{ begin: number | null; end: number | null; group_id: string; serverbundle_id: string }>(
    ctx.body,
    {
      begin: opt("datetime"),
      end: opt("datetime"),
      group_id: req("uuid"),
      serverbundle_id: req("uuid"),
    },
  );
  morph(ctx, MEMBERSHIP_PROPERTY, body.serverbundle_id);
  must(ctx.state.groups, body.group_id, "Group");
  must(ctx.state.serverbundles, body.serverbundle_id, "Serverbundle");
  const m = ctx.state.addMembership({
    user_id: u.id,
    group_id: body.group_id,
    serverbundle_id: body.serverbundle_id,
    begin: body.begin ?? ctx.state.now(),
    end: body.end,
  });
  return membershipModel(ctx.state, m);
}

function membershipsOf(ctx: Ctx, userId: string, bundle: string | null): MembershipRecord[] {
  return [...ctx.state.memberships.values()].filter(
    (m) => m.user_id === userId && (!bundle || m.serverbundle_id === bundle),
  );
}

function listMemberships(ctx: Ctx) {
  const u = user(ctx);
  const bundle = ctx.input.query(ctx.query, "serverbundle_id", "uuid");
  const active = ctx.input.query<boolean>(ctx.query, "active", "bool");
  ctx.input.done();
  return membershipsOf(ctx, u.id, bundle)
    .filter((m) => active === null || ctx.state.membershipActive(m) === active)
    .map((m) => membershipModel(ctx.state, m));
}

/** Without serverbundle_id every bundle's memberships end. The typedef's response is `any`: null. */
function endMemberships(ctx: Ctx) {
  const u = user(ctx);
  const bundle = ctx.input.query(ctx.query, "serverbundle_id", "uuid");
  morph(ctx, MEMBERSHIP_PROPERTY, bundle);
  ctx.state.endMemberships(membershipsOf(ctx, u.id, bundle));
  return null;
}

function endMembership(ctx: Ctx) {
  const m = byPath(ctx, ctx.state.memberships, "Membership");
  morph(ctx, MEMBERSHIP_PROPERTY, m.serverbundle_id);
  ctx.state.endMemberships([m]);
  return null;
}

function endMembershipByGroup(ctx: Ctx) {
  const u = user(ctx);
  const group = ctx.input.query(ctx.query, "group_id", "uuid", true);
  const bundle = ctx.input.query(ctx.query, "serverbundle_id", "uuid");
  morph(ctx, MEMBERSHIP_PROPERTY, bundle);
  ctx.state.endMemberships(membershipsOf(ctx, u.id, bundle).filter((m) => m.group_id === group));
  return { success: true };
}

export const userRoutes: Route[] = [
  { method: "GET", path: "/user/", handle: listUsers },
  { method: "POST", path: "/user/", handle: createUser },
  { method: "DELETE", path: "/user/membership/{uuid}", handle: endMembership },
  { method: "GET", path: "/user/{uuid}/group", handle: activeGroups },
  { method: "POST", path: "/user/{uuid}/membership", handle: addMembership },
  { method: "GET", path: "/user/{uuid}/membership", handle: listMemberships },
  { method: "DELETE", path: "/user/{uuid}/membership", handle: endMemberships },
  { method: "DELETE", path: "/user/{uuid}/membership/by-group", handle: endMembershipByGroup },
  { method: "GET", path: "/user/{identifier}", handle: getUser },
  { method: "GET", path: "/group/", handle: listGroups },
];
