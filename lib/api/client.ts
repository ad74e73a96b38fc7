/**
 * The VyHub client: one typed function per endpoint (docs/client-interface.md §6 plus the
 * further endpoints of docs/service-api.md §3.21). Every call resolves to an ApiResult and never throws.
 */
import type { ApiResult } from "./errors.ts";
import { createTransport, type ApiOptions, type Unreachable } from "./http.ts";
import { chunkQuery } from "./request-size.ts";
import * as s from "./schemas.ts";
import { at, type Query } from "./url.ts";

export * from "./errors.ts";
export * from "./schemas.ts";
export { type ApiOptions, type Unreachable } from "./http.ts";
export { parseRetryAfter } from "./retry-after.ts";
export { buildQuery, joinUrl } from "./url.ts";
export { MAX_URL_BYTES } from "./request-size.ts";

export interface MorphOptions {
  /** Run the request with this user's permissions (the issuing admin). */
  morphUserId?: string;
}

export interface ListOptions {
  bundleId?: string;
  page?: number;
  size?: number;
}

export interface Api {
  /** How long (ms) the service's 429s (their Retry-After) hold some request of this client back still; 0: none. */
  readonly rateLimitedMs: number;
  /** Set while the service answers none of this client's attempts (refused, timed out): since when, and why. */
  readonly unreachable: Unreachable | undefined;
  /** 1. GET /server/{id}: own server record with its bundle. */
  getServer(serverId: string): Promise<ApiResult<s.Server>>;
  /** 2. PATCH /server/{id}: status heartbeat. */
  patchServer(serverId: string, status: s.ServerStatusPatch): Promise<ApiResult<s.Server>>;
  /**
   * 3. GET /user/{identifier}?type=: NotFound when the user does not exist. Without `type` the path is the service
   * user id (docs/service-api.md §3.3: "UUID or other identifier").
   */
  getUser(identifier: string, type?: s.UserType): Promise<ApiResult<s.User>>;
  /** 4. POST /user/ */
  createUser(body: s.UserAdd): Promise<ApiResult<s.User>>;
  /** 5. GET /user/{id}/group?serverbundle_id=: active groups in the bundle. */
  getUserGroups(userId: string, bundleId: string): Promise<ApiResult<s.Group[]>>;
  /** 6. GET /group/ */
  getGroups(): Promise<ApiResult<s.Group[]>>;
  /** 7. POST /user/{id}/membership */
  createMembership(userId: string, body: s.MembershipAdd, opts?: MorphOptions): Promise<ApiResult<s.Membership>>;
  /** 8. DELETE /user/{id}/membership?serverbundle_id=: ends all active memberships in the bundle. */
  endMemberships(userId: string, bundleId: string, opts?: MorphOptions): Promise<ApiResult<void>>;
  /** DELETE /user/{id}/membership/by-group?group_id=&serverbundle_id= */
  endMembershipByGroup(
    userId: string,
    groupId: string,
    bundleId: string,
    opts?: MorphOptions,
  ): Promise<ApiResult<s.Success>>;
  /** 11. GET /server/bundle/{id}/ban?active=true: keyed by foreign identifier. */
  getBundleBans(bundleId: string): Promise<ApiResult<s.BanList>>;
  /** 12. POST /ban/ */
  createBan(body: s.BanAdd, opts?: MorphOptions): Promise<ApiResult<s.Ban>>;
  /** 13. PATCH /user/{id}/ban (no body). Without bundleId the service unbans everywhere. */
  unbanUser(userId: string, opts?: MorphOptions & { bundleId?: string }): Promise<ApiResult<void>>;
  /** PATCH /ban/{id}: e.g. `{status: "UNBANNED"}` lifts this one ban and no other. */
  patchBan(
    banId: string,
    body: { status?: s.BanStatus; reason?: string; length?: number | null },
    opts?: MorphOptions,
  ): Promise<ApiResult<s.Ban>>;
  /** 14. POST /warning/ */
  createWarning(body: s.WarningAdd, opts?: MorphOptions): Promise<ApiResult<s.Warning>>;
  /** 15. GET /user/attribute/definition/{nameOrId}: NotFound when missing. */
  getAttributeDefinition(nameOrId: string): Promise<ApiResult<s.AttributeDefinition>>;
  /** 16. POST /user/attribute/definition */
  createAttributeDefinition(body: s.AttributeDefinitionAdd): Promise<ApiResult<s.AttributeDefinition>>;
  /** 17. POST /user/attribute/: the service echoes the input. */
  sendAttribute(body: s.UserAttributeAdd): Promise<ApiResult<s.UserAttribute>>;
  /**
   * 18. GET /packet/reward/applied/user: OPEN, active, not yet executed on `serverId`, keyed by foreign id.
   * With no user ids it resolves to `{}` without a request: the service reads a missing filter as "all users".
   * One request: more users than fit in MAX_URL_BYTES go in several calls (appliedRewardChunks).
   */
  getAppliedRewards(q: {
    bundleId: string;
    serverId: string;
    userIds: readonly string[];
  }): Promise<ApiResult<s.AppliedRewardMap>>;
  /** 19. PATCH /packet/reward/applied/{appliedRewardId} with executed_on. */
  markRewardExecuted(appliedRewardId: string, serverIds: readonly string[]): Promise<ApiResult<s.AppliedReward>>;
  /** 20. GET /advert/?serverbundle_id=&enabled=true; disabled adverts are filtered out here too. */
  getAdverts(bundleId: string): Promise<ApiResult<s.Advert[]>>;
  /** GET /warning/?user_id=, newest first. No active filter exists: check `active` and `disabled`. */
  listWarnings(userId: string, opts?: ListOptions): Promise<ApiResult<s.Page<s.Warning>>>;
  /** GET /ban/?user_id=, newest first. */
  listBans(userId: string, opts?: ListOptions & { active?: boolean }): Promise<ApiResult<s.Page<s.Ban>>>;
  /** GET /general/frontend-url: the community's web address (rule 17's {web_url} when not configured). */
  getFrontendUrl(): Promise<ApiResult<string>>;
}

const { GroupListSchema, AdvertListSchema } = s;

const APPLIED_REWARDS_PATH = "/packet/reward/applied/user";
const appliedRewardsQuery = (q: { bundleId: string; serverId: string }): Query => ({
  active: true,
  foreign_ids: true,
  status: "OPEN",
  serverbundle_id: q.bundleId,
  for_server_id: q.serverId,
});

/**
 * The user ids of one applied-rewards refresh, in groups whose requests stay within MAX_URL_BYTES of URL
 * (request-size.ts): about 85 users a request. Each group is one getAppliedRewards call.
 */
export function appliedRewardChunks(
  baseUrl: string,
  q: { bundleId: string; serverId: string; userIds: readonly string[] },
): string[][] {
  return chunkQuery(baseUrl, APPLIED_REWARDS_PATH, appliedRewardsQuery(q), "user_id", q.userIds);
}

// oxlint-disable-next-line max-lines-per-function -- a data table: one entry per endpoint of the service
export function createApi(opts: ApiOptions): Api {
  const t = createTransport(opts);
  const morph = (o?: MorphOptions): Query => ({ morph_user_id: o?.morphUserId });
  const list = (userId: string, o: ListOptions | undefined): Query => ({
    user_id: userId,
    serverbundle_id: o?.bundleId ? [o.bundleId] : undefined,
    sort_by: "created_on",
    sort_desc: true,
    page: o?.page ?? 1,
    size: o?.size ?? 50,
  });

  return {
    get rateLimitedMs() {
      return t.closedForMs();
    },
    get unreachable() {
      return t.unreachable();
    },
    getFrontendUrl: async () => {
      const res = await t.request({ method: "GET", path: "/general/frontend-url", schema: s.FrontendUrlSchema });
      return res.ok ? { ...res, value: res.value.frontend_url } : res;
    },
    getServer: (serverId) => t.request({ method: "GET", ...at`/server/${serverId}`, schema: s.ServerSchema }),
    patchServer: (serverId, status) =>
      t.request({ method: "PATCH", ...at`/server/${serverId}`, body: status, schema: s.ServerSchema }),
    getUser: (identifier, type) =>
      t.request({ method: "GET", ...at`/user/${identifier}`, query: { type }, schema: s.UserSchema }),
    createUser: (body) => t.request({ method: "POST", path: "/user/", body, schema: s.UserSchema }),
    getUserGroups: (userId, bundleId) =>
      t.request({
        method: "GET",
        ...at`/user/${userId}/group`,
        query: { serverbundle_id: bundleId },
        schema: GroupListSchema,
      }),
    getGroups: () => t.request({ method: "GET", path: "/group/", schema: GroupListSchema }),
    createMembership: (userId, body, o) =>
      t.request({
        method: "POST",
        ...at`/user/${userId}/membership`,
        query: morph(o),
        body,
        schema: s.MembershipSchema,
      }),
    endMemberships: (userId, bundleId, o) =>
      t.request({
        method: "DELETE",
        ...at`/user/${userId}/membership`,
        query: { serverbundle_id: bundleId, ...morph(o) },
        schema: null,
      }),
    endMembershipByGroup: (userId, groupId, bundleId, o) =>
      t.request({
        method: "DELETE",
        ...at`/user/${userId}/membership/by-group`,
        query: { group_id: groupId, serverbundle_id: bundleId, ...morph(o) },
        schema: s.SuccessSchema,
      }),
    getBundleBans: (bundleId) =>
      t.request({
        method: "GET",
        ...at`/server/bundle/${bundleId}/ban`,
        query: { active: true },
        schema: s.BanListSchema,
      }),
    createBan: (body, o) => t.request({ method: "POST", path: "/ban/", query: morph(o), body, schema: s.BanSchema }),
    unbanUser: (userId, o) =>
      t.request({
        method: "PATCH",
        ...at`/user/${userId}/ban`,
        query: { serverbundle_id: o?.bundleId, ...morph(o) },
        schema: null,
      }),
    patchBan: (banId, body, o) =>
      t.request({ method: "PATCH", ...at`/ban/${banId}`, query: morph(o), body, schema: s.BanSchema }),
    createWarning: (body, o) =>
      t.request({ method: "POST", path: "/warning/", query: morph(o), body, schema: s.WarningSchema }),
    getAttributeDefinition: (nameOrId) =>
      t.request({
        method: "GET",
        ...at`/user/attribute/definition/${nameOrId}`,
        schema: s.AttributeDefinitionSchema,
      }),
    createAttributeDefinition: (body) =>
      t.request({ method: "POST", path: "/user/attribute/definition", body, schema: s.AttributeDefinitionSchema }),
    sendAttribute: (body) =>
      t.request({ method: "POST", path: "/user/attribute/", body, schema: s.UserAttributeSchema }),
    getAppliedRewards: async (q) => {
      if (q.userIds.length === 0) return { ok: true, status: 200, value: {}, headers: new Headers() };
      return t.request({
        method: "GET",
        path: APPLIED_REWARDS_PATH,
        query: { ...appliedRewardsQuery(q), user_id: q.userIds },
        schema: s.AppliedRewardMapSchema,
      });
    },
    markRewardExecuted: (appliedRewardId, serverIds) =>
      t.request({
        method: "PATCH",
        ...at`/packet/reward/applied/${appliedRewardId}`,
        body: { executed_on: serverIds },
        schema: s.AppliedRewardSchema,
      }),
    getAdverts: async (bundleId) => {
      const r = await t.request({
        method: "GET",
        path: "/advert/",
        query: { serverbundle_id: bundleId, enabled: true },
        schema: AdvertListSchema,
      });
      return r.ok ? { ...r, value: r.value.filter((a) => a.enabled) } : r;
    },
    listWarnings: (userId, o) =>
      t.request({ method: "GET", path: "/warning/", query: list(userId, o), schema: s.WarningPageSchema }),
    listBans: (userId, o) =>
      t.request({
        method: "GET",
        path: "/ban/",
        query: { ...list(userId, o), active: o?.active },
        schema: s.BanPageSchema,
      }),
  };
}
