// Default data: the story of api-examples.json with the same ids. Carol (admin, Admin group) runs the TTT bundle;
// Bob is banned 7 days in the bundle; Alice had a global ban that was lifted, got a warning "today", and bought
// VIP "today" (applied reward pending on CONNECT); Carol has a manually applied Starter Pack (DIRECT, once_from_all).
import { parseDateTime, type Millis } from "./format.ts";
import type { SandboxState } from "./state.ts";

/** The examples' "now" (2024-06-01T12:00:00+00:00). Seeded times are shifted so this instant is the clock's start. */
export const EXAMPLES_NOW: Millis = Date.UTC(2024, 5, 1, 12);

export const SEED_IDS = {
  serverbundle: "c7dd795f-fa48-44da-96f9-f11abbf98ccb",
  server: "541d1c41-1b58-40fc-8780-70c400ea5686",
  users: {
    alice: "6d608cd3-155d-4344-b9e8-7c0280165d73",
    bob: "f82e6399-324e-49a6-a411-09f621b77325",
    carol: "6ed1a4df-15d7-47f0-a8b0-d3bf844fa2de",
  },
  steamid64: { alice: "76561198012345671", bob: "76561198087654322", carol: "76561198123456783" },
  groups: {
    admin: "5fc410e9-7735-49d0-9229-ad67771089e9",
    moderator: "006e761d-c3ed-4c57-97ce-67c9d8bc39c3",
    vip: "ba250c5d-9c50-4fbd-9004-185559e22d08",
  },
  memberships: {
    carol_admin: "dc684635-bc75-43e5-89cb-5cd94d038839",
    carol_vip_expired: "b5cba6ca-217a-4451-9d2d-92c4eadaa18e",
    alice_vip: "ed43ec41-3a86-4a32-9e10-e338e4904225",
  },
  bans: {
    bob_active: "b54c70b8-f535-4614-b6b3-472feb637a98",
    alice_unbanned_global: "a66cfe88-3318-4fd8-b2db-ad94ca60f057",
  },
  warnings: { alice_mic_spam: "8be7f4c6-4343-4a40-91ee-4bb1ad2b1193" },
  attributeDefinitions: { playtime: "7ef20814-17ce-4c80-857f-a674f83c71c6" },
  appliedRewards: {
    alice_vip_command: "d6c19c3f-c76e-47e4-81ee-86ece6e8dd95",
    carol_starter_script: "7ad21886-bb13-44cf-8c94-4663c3cf42d4",
  },
  adverts: { discord: "4871d104-8932-4487-be51-3af10ba6ef9d", shop: "7d124c7e-c401-42aa-b54e-57658e42c5af" },
} as const;

const AVATAR = "https://avatars.steamstatic.com/";
const granted = (...names: string[]) =>
  Object.fromEntries(names.map((name) => [name, { name, granted: true, value: null }]));

/** Fills `state` with the examples, their times moved by (clock now − EXAMPLES_NOW). */
export function seedExamples(state: SandboxState): void {
  const shift = state.now() - EXAMPLES_NOW;
  const t: Time = (text) => parseDateTime(text)! + shift;
  seedServer(state, t);
  seedUsers(state, t);
  seedGroups(state, t);
  seedSanctions(state, t);
  seedRewards(state, t);
  seedAdverts(state);
}

/** An example's time (as written in api-examples.json) moved to the sandbox's clock. */
type Time = (text: string) => Millis;
const ids = SEED_IDS;
const bundle = ids.serverbundle;

/** The TTT bundle and its one server. */
function seedServer(state: SandboxState, t: Time): void {
  state.addServerbundle({ id: bundle, name: "TTT", icon: "mdi-pistol", sort_id: 1, server_type: "GMOD" });
  state.addServer({
    id: ids.server,
    name: "TTT #1 | example.org",
    type: "GMOD",
    address: "ttt1.example.org",
    port: 27015,
    serverbundle_id: bundle,
    users_max: 24,
    users_current: 3,
    map: "ttt_67thway_v14",
    extra: { res_slots: 2, res_slots_keep_free: false, res_slots_hide: true, sync_bans: true },
    last_update: t("2024-06-01T11:59:02.481337+00:00"),
    status: "ONLINE",
  });
}

/** Alice, Bob and Carol (an admin), Alice and Carol seen on the server. */
function seedUsers(state: SandboxState, t: Time): void {
  const activity = (nick: string, score: number, deaths: number, playtime: string, ping: number) => ({
    extra: { Score: score, Deaths: deaths, Nickname: nick, Playtime: playtime, Ping: `${ping} ms` },
    last_online: t("2024-06-01T11:59:02.481337+00:00"),
  });
  state.addUser({
    id: ids.users.alice,
    identifier: ids.steamid64.alice,
    username: "Alice",
    registered_on: t("2023-11-02T18:21:07.413522+00:00"),
    avatar: `${AVATAR}0a1b2c3d4e5f60718293a4b5c6d7e8f901234567_full.jpg`,
    credit_account_id: "b4a498c4-b75c-47a4-ad28-9d6d4cf306f0",
    activities: [activity("Alice", 12, 3, "01:12:44", 38)],
  });
  state.addUser({
    id: ids.users.bob,
    identifier: ids.steamid64.bob,
    username: "Bob",
    registered_on: t("2024-05-12T16:40:51.220913+00:00"),
    avatar: `${AVATAR}fef49e7fa7e1997310d705b2a6158ff8dc1cdfeb_full.jpg`,
    credit_account_id: "d5fd3582-ec1b-4d35-88fb-38383eb0a253",
  });
  state.addUser({
    id: ids.users.carol,
    identifier: ids.steamid64.carol,
    username: "Carol",
    admin: true,
    registered_on: t("2023-08-19T09:05:12+00:00"),
    avatar: `${AVATAR}9c8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b_full.jpg`,
    credit_account_id: "bd7eaac8-e940-4351-abb2-ad5978e6a684",
    activities: [activity("Carol", 25, 1, "02:03:51", 22)],
  });
}

/** Admin, Moderator and VIP with their in-game names, Carol an admin, Alice a VIP since "today". */
function seedGroups(state: SandboxState, t: Time): void {
  const staff = ["ban_show", "ban_edit", "warning_show", "warning_edit"];
  state.addGroup({
    id: ids.groups.admin,
    name: "Admin",
    permission_level: 100,
    color: "#e53935",
    properties: granted(...staff, "warning_delete", "reserved_slot_use"),
    is_team: true,
  });
  state.addMapping(ids.groups.admin, "superadmin", bundle, "130b7039-aa1c-48fe-b95d-2f9314f318d5");
  state.addGroup({
    id: ids.groups.moderator,
    name: "Moderator",
    permission_level: 50,
    color: "#1e88e5",
    properties: granted(...staff, "reserved_slot_use"),
    is_team: true,
    max_ban_length: 604800,
  });
  state.addMapping(ids.groups.moderator, "moderator", bundle, "2c79a382-aa8a-44cc-ad4e-2b37180b6189");
  state.addMapping(ids.groups.moderator, "operator", null, "6181b0b2-eaba-45c1-8475-3749f9f286bf");
  state.addGroup({
    id: ids.groups.vip,
    name: "VIP",
    permission_level: 10,
    color: "#fb0",
    properties: granted("reserved_slot_use"),
  });
  state.addMapping(ids.groups.vip, "vip", bundle, "d629008e-1c89-4ec7-affb-e747c6631d1e");

  const since = t("2023-08-19T09:10:00+00:00");
  state.addMembership({
    id: ids.memberships.carol_admin,
    user_id: ids.users.carol,
    group_id: ids.groups.admin,
    serverbundle_id: bundle,
    begin: since,
  });
  state.addMembership({
    id: ids.memberships.carol_vip_expired,
    user_id: ids.users.carol,
    group_id: ids.groups.vip,
    serverbundle_id: bundle,
    begin: since,
    end: t("2023-09-18T09:10:00+00:00"),
  });
  state.addMembership({
    id: ids.memberships.alice_vip,
    user_id: ids.users.alice,
    group_id: ids.groups.vip,
    serverbundle_id: bundle,
    begin: t("2024-06-01T12:00:00+00:00"),
    end: t("2024-07-01T12:00:00+00:00"),
  });
}

/** Bob banned 7 days in the bundle, Alice's lifted global ban and her warning. */
function seedSanctions(state: SandboxState, t: Time): void {
  state.addBan({
    id: ids.bans.bob_active,
    user_id: ids.users.bob,
    serverbundle_id: bundle,
    creator_id: ids.users.carol,
    reason: "RDM x3",
    length: 604800,
    created_on: t("2024-05-30T20:14:03+00:00"),
  });
  state.addBan({
    id: ids.bans.alice_unbanned_global,
    user_id: ids.users.alice,
    reason: "Ban evasion (appeal accepted)",
    created_on: t("2024-01-10T21:47:30.118204+00:00"),
    status: "UNBANNED",
  });
  state.addWarning({
    id: ids.warnings.alice_mic_spam,
    user_id: ids.users.alice,
    serverbundle_id: bundle,
    creator_id: ids.users.carol,
    reason: "Mic spam",
    created_on: t("2024-06-01T11:58:21.904113+00:00"),
  });
}

/** The playtime definition, Alice's pending VIP command and Carol's applied Starter Pack. */
function seedRewards(state: SandboxState, t: Time): void {
  state.addAttributeDefinition({
    id: ids.attributeDefinitions.playtime,
    name: "playtime",
    title: "Play Time",
    unit: "HOURS",
    type: "ACCUMULATED",
    accumulation_interval: "day",
    unspecific: true,
  });

  state.addReward({
    id: ids.appliedRewards.alice_vip_command,
    user_id: ids.users.alice,
    reward: {
      id: "8d8b4c75-9dbd-4ee2-8b91-2adaaaa6cd42",
      name: "VIP rank (in-game)",
      type: "COMMAND",
      data: { command: "ulx adduserid %steamid64% vip" },
      once: true,
      once_from_all: false,
      on_event: "CONNECT",
      reactivate_on_extend: true,
      serverbundle_id: bundle,
    },
    applied_packet: {
      id: "ef3364d2-56ab-480d-a094-c8d8b1888f5c",
      packet: { id: "d015e53d-8d68-44bd-9cbd-c62b399e8b96", title: "VIP (30 days)" },
      purchase: {
        id: "5ffcaf83-fb31-4558-b202-2412fb5668d2",
        date: t("2024-06-01T11:57:40.316052+00:00"),
        amount_total: 4.99,
        amount_text: "4.99 €",
        currency: { symbol: "€", name: "Euro", code: "EUR" },
        status: "FINISHED",
        credits: null,
      },
      begin: t("2024-06-01T11:57:41.002317+00:00"),
      end: t("2024-07-01T11:57:41.002317+00:00"),
    },
  });
  state.addReward({
    id: ids.appliedRewards.carol_starter_script,
    user_id: ids.users.carol,
    reward: {
      id: "96635def-a042-4288-84ed-ed660d021cfb",
      name: "Starter pack",
      type: "SCRIPT",
      data: { script: 'PLAYER:ChatPrint("Thanks for your support, %nick%!")' },
      once: true,
      once_from_all: true,
      on_event: "DIRECT",
      reactivate_on_extend: false,
      serverbundle_id: bundle,
    },
    applied_packet: {
      id: "2e042088-edb0-4098-9067-de5bfde945c6",
      packet: { id: "1dad4add-7cf8-4d39-93e4-2871b082d085", title: "Starter Pack" },
      begin: t("2024-06-01T11:55:00+00:00"),
    },
  });
}

function seedAdverts(state: SandboxState): void {
  state.addAdvert({
    id: ids.adverts.discord,
    title: "Discord",
    content: "Join our Discord: <blue>discord.gg/example</blue>",
    sort_id: 1,
    color: "#2196f3",
    serverbundle_ids: [bundle],
  });
  state.addAdvert({
    id: ids.adverts.shop,
    title: "Shop",
    content: "Support the server!\nType <green>!shop</green> to open the shop.",
    sort_id: 2,
    color: "white",
    serverbundle_ids: [bundle],
  });
}
