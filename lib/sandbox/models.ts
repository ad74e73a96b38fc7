// Records → response models of docs/service-api.md §4: every field present (null when unset), datetimes isoformat,
// durations Float.
import { isoformat, seconds, type Millis } from "./format.ts";
import type {
  AdvertRecord,
  AppliedRewardRecord,
  AttributeDefinitionRecord,
  BanRecord,
  GroupRecord,
  MembershipRecord,
  SandboxState,
  ServerRecord,
  UserRecord,
  WarningRecord,
} from "./state.ts";

const iso = (ms: Millis | null) => (ms === null ? null : isoformat(ms));

export function bundleShort(state: SandboxState, id: string | null) {
  const b = id ? state.serverbundles.get(id) : undefined;
  return b ? { id: b.id, name: b.name, icon: b.icon, sort_id: b.sort_id } : null;
}

export function bundleModel(state: SandboxState, id: string) {
  const b = state.serverbundles.get(id)!;
  const g = b.default_group_id ? state.groups.get(b.default_group_id) : undefined;
  return {
    id: b.id,
    name: b.name,
    icon: b.icon,
    multigroup: b.multigroup,
    server_type: b.server_type,
    default_group: g ? groupShort(g) : null,
    sort_id: b.sort_id,
  };
}

export function serverModel(state: SandboxState, s: ServerRecord) {
  return {
    users_max: s.users_max,
    users_current: s.users_current,
    map: s.map,
    name: s.name,
    type: s.type,
    address: s.address,
    port: s.port,
    serverbundle_id: s.serverbundle_id,
    extra: s.extra,
    hidden: s.hidden,
    id: s.id,
    last_update: iso(s.last_update),
    serverbundle: bundleShort(state, s.serverbundle_id),
    status: s.status,
  };
}

export function userShort(u: UserRecord) {
  return { id: u.id, username: u.username, type: u.type, identifier: u.identifier, avatar: u.avatar };
}

/** A creator may be missing (console) or refer to a deleted user: both read as null. */
export function userShortById(state: SandboxState, id: string | null) {
  const u = id ? state.users.get(id) : undefined;
  return u ? userShort(u) : null;
}

export function userModel(u: UserRecord) {
  return {
    id: u.id,
    type: u.type,
    identifier: u.identifier,
    registered_on: isoformat(u.registered_on),
    username: u.username,
    avatar: u.avatar,
    admin: u.admin,
    credit_account_id: u.credit_account_id,
    attributes: u.attributes,
    email: u.email,
    email_notification: u.email_notification,
    activities: u.activities.map((a) => ({ extra: a.extra, last_online: isoformat(a.last_online) })),
    linked_users: [],
  };
}

export function groupShort(g: GroupRecord) {
  return { id: g.id, name: g.name, color: g.color, permission_level: g.permission_level };
}

export function groupModel(g: GroupRecord) {
  return {
    id: g.id,
    name: g.name,
    permission_level: g.permission_level,
    color: g.color,
    properties: g.properties,
    mappings: g.mappings.map((m) => ({
      name: m.name,
      serverbundle_id: m.serverbundle_id,
      id: m.id,
      group_id: m.group_id,
    })),
    is_team: g.is_team,
    max_ban_length: seconds(g.max_ban_length),
  };
}

export function membershipModel(state: SandboxState, m: MembershipRecord) {
  return {
    id: m.id,
    bounds: "[)",
    begin: isoformat(m.begin),
    end: iso(m.end),
    group: groupShort(state.groups.get(m.group_id)!),
    active: state.membershipActive(m),
    user_id: m.user_id,
    serverbundle: bundleShort(state, m.serverbundle_id),
  };
}

/** BanModelReduced (the ban-list value); `banModel` adds `protests`. */
export function banReduced(state: SandboxState, b: BanRecord) {
  return {
    length: seconds(b.length),
    reason: b.reason,
    id: b.id,
    creator: userShortById(state, b.creator_id),
    created_on: isoformat(b.created_on),
    status: b.status,
    ends_on: iso(state.banEndsOn(b)),
    active: state.banActive(b),
    user: userShortById(state, b.user_id),
    serverbundle: bundleShort(state, b.serverbundle_id),
  };
}

export function banModel(state: SandboxState, b: BanRecord) {
  return { ...banReduced(state, b), protests: [] };
}

export function warningModel(state: SandboxState, w: WarningRecord) {
  return {
    id: w.id,
    reason: w.reason,
    creator: userShortById(state, w.creator_id),
    created_on: isoformat(w.created_on),
    active: state.warningActive(w),
    disabled: w.disabled,
    user: userShortById(state, w.user_id),
    serverbundle: bundleShort(state, w.serverbundle_id),
  };
}

export function attributeDefinitionModel(d: AttributeDefinitionRecord) {
  return {
    name: d.name,
    title: d.title,
    unit: d.unit,
    type: d.type,
    statistics_interval: d.statistics_interval,
    accumulation_interval: d.accumulation_interval,
    unspecific: d.unspecific,
    requirement_set_id: d.requirement_set_id,
    id: d.id,
  };
}

export function appliedRewardModel(state: SandboxState, a: AppliedRewardRecord) {
  const user = userShortById(state, a.user_id);
  const { reward: r, applied_packet: p } = a;
  return {
    id: a.id,
    active: a.active,
    reward: {
      name: r.name,
      type: r.type,
      data: r.data,
      order: r.order,
      once: r.once,
      once_from_all: r.once_from_all,
      on_event: r.on_event,
      reactivate_on_extend: r.reactivate_on_extend,
      id: r.id,
      serverbundle: bundleShort(state, r.serverbundle_id),
      requirement_set: r.requirement_set,
    },
    user,
    applied_packet_id: p.id,
    applied_packet: {
      id: p.id,
      status: p.status,
      packet: p.packet,
      purchase: p.purchase && {
        id: p.purchase.id,
        date: isoformat(p.purchase.date),
        user,
        amount_total: p.purchase.amount_total,
        amount_text: p.purchase.amount_text,
        currency: p.purchase.currency,
        status: p.purchase.status,
        credits: p.purchase.credits,
      },
      bounds: p.bounds,
      begin: isoformat(p.begin),
      end: iso(p.end),
    },
    status: a.status,
    executed_on: a.executed_on,
  };
}

export function advertModel(state: SandboxState, a: AdvertRecord) {
  return {
    id: a.id,
    title: a.title,
    content: a.content,
    sort_id: a.sort_id,
    color: a.color,
    enabled: a.enabled,
    serverbundles: a.serverbundle_ids.map((id) => bundleShort(state, id)).filter((b) => b !== null),
  };
}
