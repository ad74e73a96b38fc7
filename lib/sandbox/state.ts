// The service's data, normalised: records refer to each other by id and derived values (ban `ends_on`/`active`,
// membership `active`, warning `active`) are computed from the injected clock when a model is built.
import type { Millis } from "./format.ts";

// The contract's enum values are one fact, shared with the client.
export {
  ATTRIBUTE_TYPES,
  BAN_STATUSES,
  REWARD_EVENTS,
  REWARD_STATUSES,
  REWARD_TYPES,
  SERVER_TYPES,
  USER_TYPES,
} from "../api/schemas.ts";
import { BAN_STATUSES, REWARD_STATUSES, USER_TYPES } from "../api/schemas.ts";
export const TIME_INTERVALS = [
  "microseconds",
  "milliseconds",
  "second",
  "minute",
  "hour",
  "day",
  "week",
  "month",
  "quarter",
  "year",
  "decade",
  "century",
  "millennium",
] as const;

export type UserType = (typeof USER_TYPES)[number];
export type BanStatus = (typeof BAN_STATUSES)[number];
export type RewardStatus = (typeof REWARD_STATUSES)[number];

/** The property a morph user needs to add or end memberships (the real name is unknown; admins have all). */
export const MEMBERSHIP_PROPERTY = "membership_edit";

export interface ServerbundleRecord {
  id: string;
  name: string;
  icon: string | null;
  sort_id: number;
  multigroup: boolean;
  server_type: string;
  default_group_id: string | null;
}

export interface ServerRecord {
  id: string;
  name: string;
  type: string;
  address: string;
  port: number;
  serverbundle_id: string | null;
  users_max: number | null;
  users_current: number | null;
  map: string | null;
  extra: Record<string, unknown> | null;
  hidden: boolean;
  last_update: Millis | null;
  status: "ONLINE" | "OFFLINE" | "UNKNOWN";
}

export interface UserActivityRecord {
  extra: Record<string, unknown> | null;
  last_online: Millis;
}

export interface UserRecord {
  id: string;
  type: string;
  identifier: string;
  registered_on: Millis;
  username: string | null;
  avatar: string | null;
  admin: boolean;
  credit_account_id: string;
  attributes: Record<string, unknown>;
  email: string | null;
  email_notification: boolean;
  activities: UserActivityRecord[];
}

export interface PropertyRecord {
  name: string;
  granted: boolean;
  value: string | null;
}

export interface GroupMappingRecord {
  id: string;
  name: string;
  serverbundle_id: string | null;
  group_id: string;
}

export interface GroupRecord {
  id: string;
  name: string;
  permission_level: number;
  color: string;
  properties: Record<string, PropertyRecord>;
  mappings: GroupMappingRecord[];
  is_team: boolean;
  /** Seconds; null = unlimited. */
  max_ban_length: number | null;
}

export interface MembershipRecord {
  id: string;
  user_id: string;
  group_id: string;
  serverbundle_id: string;
  begin: Millis;
  /** null = unlimited; ending a membership sets it to now. */
  end: Millis | null;
}

export interface BanRecord {
  id: string;
  user_id: string;
  /** null = global ban, valid in every bundle. */
  serverbundle_id: string | null;
  creator_id: string | null;
  reason: string | null;
  /** Seconds; null = permanent. */
  length: number | null;
  created_on: Millis;
  status: BanStatus;
}

export interface WarningRecord {
  id: string;
  user_id: string;
  serverbundle_id: string | null;
  creator_id: string | null;
  reason: string | null;
  created_on: Millis;
  disabled: boolean;
}

export interface AttributeDefinitionRecord {
  id: string;
  name: string;
  title: string;
  unit: string;
  type: string;
  statistics_interval: string | null;
  accumulation_interval: string | null;
  unspecific: boolean;
  requirement_set_id: string | null;
}

export interface AttributeRecord {
  definition_id: string;
  user_id: string;
  serverbundle_id: string | null;
  /** As the service stores it: a string (Pydantic turns numbers into strings). */
  value: string;
  date: Millis;
}

export interface RewardRecord {
  id: string;
  name: string;
  type: string;
  data: Record<string, unknown> | null;
  order: number | null;
  once: boolean | null;
  once_from_all: boolean | null;
  on_event: string;
  reactivate_on_extend: boolean | null;
  /** null = valid in every bundle (possible since 2024-04). */
  serverbundle_id: string | null;
  requirement_set: Record<string, unknown> | null;
}

export interface PurchaseRecord {
  id: string;
  date: Millis;
  amount_total: number;
  amount_text: string;
  currency: { symbol: string; name: string; code: string };
  status: string;
  credits: number | null;
}

export interface AppliedPacketRecord {
  id: string;
  status: "ENABLED" | "DISABLED";
  packet: { id: string; title: string };
  /** null when the packet was applied manually; the purchase's user is the applied reward's user. */
  purchase: PurchaseRecord | null;
  bounds: string;
  begin: Millis;
  end: Millis | null;
}

export interface AppliedRewardRecord {
  id: string;
  active: boolean;
  reward: RewardRecord;
  user_id: string;
  applied_packet: AppliedPacketRecord;
  status: RewardStatus;
  /** Server ids; PATCH unions into it. */
  executed_on: string[];
}

export interface AdvertRecord {
  id: string;
  title: string;
  content: string;
  sort_id: number;
  color: string;
  enabled: boolean;
  serverbundle_ids: string[];
}

export interface WarningPolicy {
  /** A warning counts as active for this many days (VyHub's warning setting). */
  ttlDays: number;
  /** Ban automatically when a user's active warnings in a bundle reach `threshold`; null = off. */
  autoBan: { threshold: number; lengthMinutes: number | null } | null;
}

type Init<T> = Partial<T>;

const uuid = () => crypto.randomUUID();

/** All in-memory data plus seeding helpers. Tests may read and change the maps directly. */
export class SandboxState {
  readonly serverbundles = new Map<string, ServerbundleRecord>();
  readonly servers = new Map<string, ServerRecord>();
  readonly users = new Map<string, UserRecord>();
  readonly groups = new Map<string, GroupRecord>();
  readonly memberships = new Map<string, MembershipRecord>();
  readonly bans = new Map<string, BanRecord>();
  readonly warnings = new Map<string, WarningRecord>();
  readonly attributeDefinitions = new Map<string, AttributeDefinitionRecord>();
  readonly attributes: AttributeRecord[] = [];
  readonly appliedRewards = new Map<string, AppliedRewardRecord>();
  readonly adverts = new Map<string, AdvertRecord>();
  warningPolicy: WarningPolicy = { ttlDays: 30, autoBan: null };
  frontendUrl = "https://community.example.org";
  apiVersion = "2.1.2";

  constructor(readonly now: () => Millis = Date.now) {}

  addServerbundle(init: Init<ServerbundleRecord> & { name: string }): ServerbundleRecord {
    return put(this.serverbundles, {
      id: uuid(),
      icon: null,
      sort_id: this.serverbundles.size + 1,
      multigroup: false,
      server_type: "GMOD",
      default_group_id: null,
      ...init,
    });
  }

  addServer(init: Init<ServerRecord> & { serverbundle_id: string | null }): ServerRecord {
    return put(this.servers, {
      id: uuid(),
      name: "Game server",
      type: "GMOD",
      address: "127.0.0.1",
      port: 27015,
      users_max: null,
      users_current: null,
      map: null,
      extra: null,
      hidden: false,
      last_update: null,
      status: "UNKNOWN",
      ...init,
    });
  }

  addUser(init: Init<UserRecord> & { identifier: string }): UserRecord {
    const known = this.indexedUsers === this.users.size;
    const user = put(this.users, {
      id: uuid(),
      type: "STEAM",
      registered_on: this.now(),
      username: init.identifier,
      avatar: null,
      admin: false,
      credit_account_id: uuid(),
      attributes: {},
      email: null,
      email_notification: true,
      activities: [],
      ...init,
    });
    // A new record on an index in step: added to it; anything else (an id reused) rebuilds it at the next lookup.
    if (known && this.users.size === this.indexedUsers + 1) this.indexUser(user);
    return user;
  }

  /** `properties` may be given as a list of granted property names. */
  addGroup(
    init: Omit<Init<GroupRecord>, "properties"> & { name: string; properties?: GroupRecord["properties"] | string[] },
  ): GroupRecord {
    const id = init.id ?? uuid();
    const properties = Array.isArray(init.properties)
      ? Object.fromEntries(init.properties.map((name) => [name, { name, granted: true, value: null }]))
      : (init.properties ?? {});
    return put(this.groups, {
      permission_level: 0,
      color: "white",
      mappings: [],
      is_team: false,
      max_ban_length: null,
      ...init,
      id,
      properties,
    });
  }

  /** Adds a mapping (in-game group name) to a group; serverbundle_id null = every bundle. */
  addMapping(group_id: string, name: string, serverbundle_id: string | null, id = uuid()): GroupMappingRecord {
    const mapping = { id, name, serverbundle_id, group_id };
    this.groups.get(group_id)?.mappings.push(mapping);
    return mapping;
  }

  addMembership(
    init: Init<MembershipRecord> & { user_id: string; group_id: string; serverbundle_id: string },
  ): MembershipRecord {
    return put(this.memberships, { id: uuid(), begin: this.now(), end: null, ...init });
  }

  addBan(init: Init<BanRecord> & { user_id: string }): BanRecord {
    return put(this.bans, {
      id: uuid(),
      serverbundle_id: null,
      creator_id: null,
      reason: null,
      length: null,
      created_on: this.now(),
      status: "ACTIVE",
      ...init,
    });
  }

  addWarning(init: Init<WarningRecord> & { user_id: string }): WarningRecord {
    return put(this.warnings, {
      id: uuid(),
      serverbundle_id: null,
      creator_id: null,
      reason: null,
      created_on: this.now(),
      disabled: false,
      ...init,
    });
  }

  addAttributeDefinition(init: Init<AttributeDefinitionRecord> & { name: string }): AttributeDefinitionRecord {
    return put(this.attributeDefinitions, {
      id: uuid(),
      title: init.name,
      unit: "HOURS",
      type: "ACCUMULATED",
      statistics_interval: null,
      accumulation_interval: null,
      unspecific: true,
      requirement_set_id: null,
      ...init,
    });
  }

  /** An applied reward for a user; the reward and applied packet get defaults (a COMMAND on DIRECT, manual packet). */
  addReward(
    init: Omit<Init<AppliedRewardRecord>, "reward" | "applied_packet"> & {
      user_id: string;
      reward?: Partial<RewardRecord>;
      applied_packet?: Partial<AppliedPacketRecord>;
    },
  ): AppliedRewardRecord {
    const reward: RewardRecord = {
      id: uuid(),
      name: "Reward",
      type: "COMMAND",
      data: { command: "say %user_id%" },
      order: 0,
      once: true,
      once_from_all: false,
      on_event: "DIRECT",
      reactivate_on_extend: false,
      serverbundle_id: null,
      requirement_set: null,
      ...init.reward,
    };
    const applied_packet: AppliedPacketRecord = {
      id: uuid(),
      status: "ENABLED",
      packet: { id: uuid(), title: "Packet" },
      purchase: null,
      bounds: "[)",
      begin: this.now(),
      end: null,
      ...init.applied_packet,
    };
    return put(this.appliedRewards, {
      id: uuid(),
      active: true,
      status: "OPEN",
      executed_on: [],
      ...init,
      reward,
      applied_packet,
    });
  }

  addAdvert(init: Init<AdvertRecord> & { title: string; content: string }): AdvertRecord {
    return put(this.adverts, {
      id: uuid(),
      sort_id: this.adverts.size + 1,
      color: "white",
      enabled: true,
      serverbundle_ids: [],
      ...init,
    });
  }

  setWarningPolicy(policy: Partial<WarningPolicy>): void {
    this.warningPolicy = { ...this.warningPolicy, ...policy };
  }

  /** By (type, identifier); without a type by id, then by username (as the service does). */
  findUser(identifier: string, type?: string | null): UserRecord | undefined {
    if (type) return this.userIndex().get(`${type}\n${identifier}`);
    return this.users.get(identifier.toLowerCase()) ?? [...this.users.values()].find((u) => u.username === identifier);
  }

  /**
   * Users by (type, identifier), the first of each, so that a lookup costs the same with 10,000 users as with 10 (the
   * drain bench registers thousands). Kept by addUser; rebuilt when the public map was changed another way.
   */
  private byTypeId = new Map<string, UserRecord>();
  private indexedUsers = 0;
  private indexUser(u: UserRecord): void {
    const key = `${u.type}\n${u.identifier}`;
    if (!this.byTypeId.has(key)) this.byTypeId.set(key, u);
    this.indexedUsers++;
  }
  private userIndex(): Map<string, UserRecord> {
    if (this.indexedUsers !== this.users.size) {
      this.byTypeId.clear();
      this.indexedUsers = 0;
      for (const u of this.users.values()) this.indexUser(u);
    }
    return this.byTypeId;
  }

  // Derived values (docs/service-api.md §6).

  banEndsOn(ban: BanRecord): Millis | null {
    return ban.length === null ? null : ban.created_on + ban.length * 1000;
  }

  banActive(ban: BanRecord): boolean {
    const ends = this.banEndsOn(ban);
    return ban.status === "ACTIVE" && (ends === null || ends > this.now());
  }

  membershipActive(m: MembershipRecord): boolean {
    const now = this.now();
    return m.begin <= now && (m.end === null || now < m.end);
  }

  warningActive(w: WarningRecord): boolean {
    return !w.disabled && w.created_on > this.now() - this.warningPolicy.ttlDays * 86_400_000;
  }

  /** Groups of a user's memberships active now (in one bundle, or all), distinct, in group order. */
  activeGroups(user_id: string, serverbundle_id?: string | null): GroupRecord[] {
    const ids = new Set(
      [...this.memberships.values()]
        .filter((m) => m.user_id === user_id && (!serverbundle_id || m.serverbundle_id === serverbundle_id))
        .filter((m) => this.membershipActive(m))
        .map((m) => m.group_id),
    );
    return [...this.groups.values()].filter((g) => ids.has(g.id));
  }

  /** Whether a user holds a property in a bundle (any bundle when null): admins hold all; a denial wins. */
  hasProperty(user: UserRecord, property: string, serverbundle_id: string | null): boolean {
    if (user.admin) return true;
    const grants = this.activeGroups(user.id, serverbundle_id).map((g) => g.properties[property]?.granted);
    return grants.includes(true) && !grants.includes(false);
  }

  /** Ends memberships now; returns how many were active. */
  endMemberships(memberships: MembershipRecord[]): number {
    const active = memberships.filter((m) => this.membershipActive(m));
    for (const m of active) m.end = this.now();
    return active.length;
  }
}

function put<T extends { id: string }>(map: Map<string, T>, record: T): T {
  map.set(record.id, record);
  return record;
}
