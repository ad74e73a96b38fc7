// Bans and warnings, including the service's automatic ban when warnings pile up.
import { banModel, warningModel } from "../models.ts";
import { byPath, morph, must, notFound, page, type Ctx, type Route } from "../http.ts";
import { BAN_STATUSES, type BanRecord, type BanStatus, type UserRecord, type WarningRecord } from "../state.ts";
import { opt, req } from "../validate.ts";

interface BanAdd {
  length: number | null;
  reason: string | null;
  serverbundle_id: string | null;
  creator_id: string | null;
  user_id: string;
  status: BanStatus | null;
  created_on: number | null;
}

function createBan(ctx: Ctx) {
  const { state } = ctx;
  const body = ctx.input.body<BanAdd>(ctx.body, {
    length: opt("timedelta"),
    reason: opt("str"),
    serverbundle_id: opt("uuid"),
    creator_id: opt("uuid"),
    user_id: req("uuid"),
    status: opt({ enum: BAN_STATUSES }),
    created_on: opt("datetime"),
  });
  const admin = morph(ctx, "ban_edit", body.serverbundle_id);
  const user = must(state.users, body.user_id, "User");
  if (body.serverbundle_id) must(state.serverbundles, body.serverbundle_id, "Serverbundle");
  const creator = admin ?? (body.creator_id ? must(state.users, body.creator_id, "Creator") : null);
  const ban = state.addBan({
    user_id: user.id,
    serverbundle_id: body.serverbundle_id,
    creator_id: creator?.id ?? null,
    reason: body.reason,
    length: body.length,
    created_on: body.created_on ?? state.now(),
    status: body.status ?? "ACTIVE",
  });
  return banModel(state, ban);
}

function patchBan(ctx: Ctx) {
  const ban = byPath(ctx, ctx.state.bans, "Ban");
  const body = ctx.input.body<Partial<BanRecord>>(ctx.body, {
    length: opt("timedelta"),
    reason: opt("str"),
    serverbundle_id: opt("uuid"),
    status: opt({ enum: BAN_STATUSES }),
  });
  morph(ctx, "ban_edit", ban.serverbundle_id);
  if (body.serverbundle_id) must(ctx.state.serverbundles, body.serverbundle_id, "Serverbundle");
  const sent = ctx.body as Record<string, unknown>;
  for (const key of ["length", "reason", "serverbundle_id", "status"] as const)
    if (key in sent && (key !== "status" || body.status)) Object.assign(ban, { [key]: body[key] });
  return banModel(ctx.state, ban);
}

/** PATCH /user/{uuid}/ban: with serverbundle_id that bundle's and global active bans, otherwise all of them. */
function unban(ctx: Ctx) {
  const { state } = ctx;
  const user = state.findUser(ctx.params[0]!);
  const bundle = ctx.input.query(ctx.query, "serverbundle_id", "uuid");
  morph(ctx, "ban_edit", bundle);
  if (!user) throw notFound("User");
  for (const ban of state.bans.values())
    if (
      ban.user_id === user.id &&
      state.banActive(ban) &&
      (!bundle || ban.serverbundle_id === null || ban.serverbundle_id === bundle)
    )
      ban.status = "UNBANNED";
  return null;
}

/**
 * Filters shared by GET /ban/ and GET /warning/. `serverbundle_id` narrows to those bundles only: the typedef calls it
 * a filter by serverbundle and says "Global bans are also included" for PATCH /user/{id}/ban alone
 * (docs/service-api.md §3.13), so a global record (no bundle) is not in a filtered answer.
 */
function listFilter(ctx: Ctx) {
  const userId = ctx.input.query(ctx.query, "user_id", "uuid");
  const bundles = ctx.input.queryList(ctx.query, "serverbundle_id", "uuid");
  const text = ctx.input.query(ctx.query, "query")?.toLowerCase();
  const reasonOrName = (r: { reason: string | null }, u: UserRecord | undefined) =>
    !text || `${r.reason ?? ""}\n${u?.username ?? ""}\n${u?.identifier ?? ""}`.toLowerCase().includes(text);
  return (r: { user_id: string; serverbundle_id: string | null; reason: string | null }) =>
    (!userId || r.user_id === userId) &&
    (!bundles || (r.serverbundle_id !== null && bundles.includes(r.serverbundle_id))) &&
    reasonOrName(r, ctx.state.users.get(r.user_id));
}

function listBans(ctx: Ctx) {
  const matches = listFilter(ctx);
  const active = ctx.input.query<boolean>(ctx.query, "active", "bool");
  const bans = [...ctx.state.bans.values()].filter(
    (b) => matches(b) && (active === null || ctx.state.banActive(b) === active),
  );
  return page(
    ctx,
    bans.map((b) => banModel(ctx.state, b)),
  );
}

function createWarning(ctx: Ctx) {
  const { state } = ctx;
  const body = ctx.input.body<{ reason: string | null; serverbundle_id: string; user_id: string }>(ctx.body, {
    reason: opt("str"),
    serverbundle_id: req("uuid"),
    user_id: req("uuid"),
  });
  const admin = morph(ctx, "warning_edit", body.serverbundle_id);
  const user = must(state.users, body.user_id, "User");
  must(state.serverbundles, body.serverbundle_id, "Serverbundle");
  const warning = state.addWarning({
    user_id: user.id,
    serverbundle_id: body.serverbundle_id,
    creator_id: admin?.id ?? null,
    reason: body.reason,
  });
  autoBan(ctx, warning);
  return warningModel(state, warning);
}

/** The service bans by itself when a user's active warnings in the bundle reach the threshold (and no ban holds yet). */
function autoBan(ctx: Ctx, warning: WarningRecord) {
  const { state } = ctx;
  const policy = state.warningPolicy.autoBan;
  if (!policy) return;
  const sameBundle = (r: { user_id: string; serverbundle_id: string | null }) =>
    r.user_id === warning.user_id && r.serverbundle_id === warning.serverbundle_id;
  const count = [...state.warnings.values()].filter((w) => sameBundle(w) && state.warningActive(w)).length;
  const banned = [...state.bans.values()].some(
    (b) => b.user_id === warning.user_id && state.banActive(b) && (b.serverbundle_id === null || sameBundle(b)),
  );
  if (count < policy.threshold || banned) return;
  state.addBan({
    user_id: warning.user_id,
    serverbundle_id: warning.serverbundle_id,
    reason: `Too many warnings (${count})`,
    length: policy.lengthMinutes === null ? null : policy.lengthMinutes * 60,
  });
}

function listWarnings(ctx: Ctx) {
  const matches = listFilter(ctx);
  return page(
    ctx,
    [...ctx.state.warnings.values()].filter(matches).map((w) => warningModel(ctx.state, w)),
  );
}

function toggleWarning(ctx: Ctx) {
  const warning = byPath(ctx, ctx.state.warnings, "Warning");
  morph(ctx, "warning_edit", warning.serverbundle_id);
  warning.disabled = !warning.disabled;
  return null;
}

function deleteWarning(ctx: Ctx) {
  const warning = byPath(ctx, ctx.state.warnings, "Warning");
  morph(ctx, "warning_delete", warning.serverbundle_id);
  ctx.state.warnings.delete(warning.id);
  return null;
}

export const sanctionRoutes: Route[] = [
  { method: "POST", path: "/ban/", handle: createBan },
  { method: "GET", path: "/ban/", handle: listBans },
  { method: "GET", path: "/ban/{uuid}", handle: (ctx) => banModel(ctx.state, byPath(ctx, ctx.state.bans, "Ban")) },
  { method: "PATCH", path: "/ban/{uuid}", handle: patchBan },
  { method: "PATCH", path: "/user/{uuid}/ban", handle: unban },
  { method: "POST", path: "/warning/", handle: createWarning },
  { method: "GET", path: "/warning/", handle: listWarnings },
  {
    method: "GET",
    path: "/warning/{uuid}",
    handle: (ctx) => warningModel(ctx.state, byPath(ctx, ctx.state.warnings, "Warning")),
  },
  { method: "PATCH", path: "/warning/{uuid}/toggle", handle: toggleWarning },
  { method: "DELETE", path: "/warning/{uuid}", handle: deleteWarning },
];
