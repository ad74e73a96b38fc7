import { describe, expect, test } from "bun:test";
import type { Group } from "../../lib/api/client.ts";
import {
  byPrecedence,
  groupByIngameName,
  groupDiff,
  ingameGroups,
  knownGroupNames,
} from "../../lib/features/groups-diff.ts";

const BUNDLE = "bundle-a";
const OTHER = "bundle-b";

/** A group whose mappings are given as [name, serverbundle_id] pairs. */
function group(name: string, level: number, mappings: [string, string | null][], id = `id-${name}`): Group {
  return {
    id,
    name,
    permission_level: level,
    mappings: mappings.map(([n, b]) => ({ name: n, serverbundle_id: b, group_id: id })),
  };
}

const admin = group("Admin", 100, [
  ["superadmin", BUNDLE],
  ["admin", null],
  ["owner", OTHER],
]);
const mod = group("Moderator", 50, [["moderator", null]]);
const vip = group("VIP", 10, [
  ["vip", BUNDLE],
  ["donator", BUNDLE],
]);
const webOnly = group("Website", 200, [["web", OTHER]]);
const user = group("User", 0, [["user", null]]);
const all = [admin, mod, vip, webOnly, user];

describe("ingameGroups", () => {
  const cases: { name: string; groups: Group[]; multi: boolean; want: string[] }[] = [
    {
      name: "single: highest level, its first applicable mapping",
      groups: [vip, admin, mod],
      multi: false,
      want: ["superadmin"],
    },
    { name: "single: global (null bundle) mapping applies", groups: [mod, user], multi: false, want: ["moderator"] },
    {
      name: "single: other bundle's mapping ignored, skip to the next group",
      groups: [webOnly, vip],
      multi: false,
      want: ["vip"],
    },
    { name: "single: only other bundles' mappings → nothing", groups: [webOnly], multi: false, want: [] },
    { name: "single: no active group", groups: [], multi: false, want: [] },
    {
      name: "multi: every applicable mapping of every group",
      groups: [admin, vip],
      multi: true,
      want: ["superadmin", "admin", "vip", "donator"],
    },
    { name: "multi: other bundles' mappings ignored", groups: [webOnly, mod], multi: true, want: ["moderator"] },
    { name: "multi: no active group", groups: [], multi: true, want: [] },
    {
      name: "multi: a name mapped by two groups appears once",
      groups: [mod, group("Helper", 5, [["moderator", BUNDLE]])],
      multi: true,
      want: ["moderator"],
    },
  ];
  for (const c of cases) test(c.name, () => expect(ingameGroups(c.groups, BUNDLE, c.multi)).toEqual(c.want));

  test("single: ties on permission_level go to the group name, whatever the API order", () => {
    const b = group("Bravo", 40, [["bravo", null]]);
    const a = group("Alpha", 40, [["alpha", null]]);
    expect(ingameGroups([b, a], BUNDLE, false)).toEqual(["alpha"]);
    expect(ingameGroups([a, b], BUNDLE, false)).toEqual(["alpha"]);
  });

  test("single: same level and name fall back to the group id", () => {
    const x = group("Same", 40, [["x", null]], "id-2");
    const y = group("Same", 40, [["y", null]], "id-1");
    expect(ingameGroups([x, y], BUNDLE, false)).toEqual(["y"]);
    expect(byPrecedence([x, y]).map((g) => g.id)).toEqual(["id-1", "id-2"]);
  });
});

describe("knownGroupNames", () => {
  test("every mapping name applicable to the bundle, across all groups", () => {
    expect([...knownGroupNames(all, BUNDLE)].sort()).toEqual(
      ["admin", "donator", "moderator", "superadmin", "user", "vip"].sort(),
    );
  });
  test("another bundle sees its own and the global mappings", () => {
    expect([...knownGroupNames(all, OTHER)].sort()).toEqual(["admin", "moderator", "owner", "user", "web"].sort());
  });
});

describe("groupDiff", () => {
  const known = knownGroupNames(all, BUNDLE);
  const cases: { name: string; current: string[]; wanted: string[]; add: string[]; remove: string[] }[] = [
    { name: "nothing to do", current: ["vip"], wanted: ["vip"], add: [], remove: [] },
    {
      name: "promotion in a single-group game",
      current: ["vip"],
      wanted: ["superadmin"],
      add: ["superadmin"],
      remove: ["vip"],
    },
    { name: "adds missing groups", current: [], wanted: ["vip", "donator"], add: ["vip", "donator"], remove: [] },
    {
      name: "unknown in-game groups are never removed",
      current: ["builder", "vip"],
      wanted: [],
      add: [],
      remove: ["vip"],
    },
    {
      name: "other bundles' names are not ours to remove",
      current: ["owner", "web"],
      wanted: ["user"],
      add: ["user"],
      remove: [],
    },
    {
      name: "no active group: known groups removed, unknown kept",
      current: ["vip", "donator", "builder"],
      wanted: [],
      add: [],
      remove: ["vip", "donator"],
    },
    {
      name: "duplicates collapse",
      current: ["vip", "vip"],
      wanted: ["admin", "admin"],
      add: ["admin"],
      remove: ["vip"],
    },
  ];
  for (const c of cases) {
    test(c.name, () => expect(groupDiff(c.current, c.wanted, known)).toEqual({ add: c.add, remove: c.remove }));
  }

  test("end to end: multi-group preset", () => {
    const wanted = ingameGroups([admin, vip], BUNDLE, true);
    expect(groupDiff(["vip", "moderator", "builder"], wanted, known)).toEqual({
      add: ["superadmin", "admin", "donator"],
      remove: ["moderator"],
    });
  });
});

describe("groupByIngameName", () => {
  test("maps every applicable name to its group; other bundles' names are absent", () => {
    const map = groupByIngameName(all, BUNDLE);
    expect([...map.keys()].sort()).toEqual(["admin", "donator", "moderator", "superadmin", "user", "vip"].sort());
    expect(map.get("donator")?.id).toBe("id-VIP");
    expect(map.get("admin")?.id).toBe("id-Admin");
    expect(map.has("owner")).toBe(false);
    expect(map.has("web")).toBe(false);
  });
  test("a name mapped by two groups goes to the higher-precedence one", () => {
    const helper = group("Helper", 5, [["moderator", BUNDLE]]);
    expect(groupByIngameName([helper, mod], BUNDLE).get("moderator")?.id).toBe("id-Moderator");
  });
});
