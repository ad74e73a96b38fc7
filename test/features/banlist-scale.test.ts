/**
 * A community's whole ban list in `run` (docs/scale.md): the checks made per player and per sanction look their
 * player up in the list, and never walk it: a list of 100,000 bans costs a connect what a list of ten does.
 */
import { expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BanList, BanReduced } from "../../lib/api/client.ts";
import { addListedBan, banCheck, isBanned } from "../../lib/sanctions/index.ts";
import { openStore } from "../../lib/store/index.ts";

const NOW = Date.UTC(2026, 10, 21, 12);
const steam = (i: number) => String(76561198300000000n + BigInt(i));

function listed(identifier: string, at = NOW - 3_600_000): BanReduced {
  return {
    id: crypto.randomUUID(),
    length: 86_400,
    reason: "cheating",
    creator: null,
    created_on: new Date(at).toISOString(),
    status: "ACTIVE",
    ends_on: new Date(at + 86_400_000).toISOString(),
    active: true,
    user: { id: crypto.randomUUID(), username: identifier, type: "STEAM", identifier },
    serverbundle: null,
  } as BanReduced;
}

/** `n` players' bans, and how often the list was walked (its keys listed) since. */
function bigList(n: number): { list: BanList; walks: () => number } {
  const raw: BanList = {};
  for (let i = 0; i < n; i++) raw[steam(i)] = [listed(steam(i))];
  let walks = 0;
  const list = new Proxy(raw, {
    ownKeys(target) {
      walks++;
      return Reflect.ownKeys(target);
    },
  });
  return { list, walks: () => walks };
}

const emptyStore = () => openStore({ dir: mkdtempSync(join(tmpdir(), "hub-banlist-")), fsync: false });

test("200 connects against a list of 20,000 players: the list is walked once, not once per connect", async () => {
  const store = await emptyStore();
  const { list, walks } = bigList(20_000);
  for (let i = 0; i < 200; i++) {
    const banned = i % 2 === 0 ? steam(i * 50) : steam(100_000 + i); // every other one is listed
    expect((await isBanned(store, list, banned, NOW)).banned).toBe(i % 2 === 0);
  }
  expect(walks()).toBeLessThanOrEqual(1);
  // The kick after a refresh: every player online at once, the same.
  const check = await banCheck(store, list, NOW, [steam(7), steam(100_007)]);
  expect([check(steam(7)).banned, check(steam(100_007)).banned]).toEqual([true, false]);
  expect(walks()).toBeLessThanOrEqual(1);
});

test("a listed game id matches in any case, also one added to the list after it was first looked at", async () => {
  const store = await emptyStore();
  const uuid = "069A79F4-44E9-4726-A5BE-FCA90E38AAF5";
  const list: BanList = { [uuid]: [listed(uuid)] };
  expect((await isBanned(store, list, uuid.toLowerCase(), NOW)).banned).toBe(true);
  expect((await isBanned(store, list, "0000", NOW)).banned).toBe(false);
  // A ban `run` just delivered joins the list in place (lib/features/bans.ts): found at the player's next connect.
  addListedBan(list, listed("0000"));
  expect((await isBanned(store, list, "0000", NOW)).banned).toBe(true);
});
