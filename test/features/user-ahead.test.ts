/**
 * A sanction's target looked up as it is issued (lib/sanctions/user-ahead.ts): the round takes that answer once, and
 * only while it is fresh; a target known by its user id needs no lookup.
 */
import { expect, test } from "bun:test";
import type { Api } from "../../lib/api/client.ts";
import { UsersAhead } from "../../lib/sanctions/user-ahead.ts";

const DAVE = { identifier: "76561198000000004", type: "STEAM", user_id: null, name: "Dave" };

function setup() {
  let now = 0;
  const asked: string[] = [];
  const api = {
    getUser: async (identifier: string) => {
      asked.push(identifier);
      return { ok: true, value: { id: `user-of-${identifier}` } };
    },
  } as unknown as Pick<Api, "getUser">;
  const ahead = new UsersAhead(api, () => now);
  return { ahead, asked, advance: (ms: number) => (now += ms) };
}

test("asked once per player, taken once", async () => {
  const { ahead, asked } = setup();
  ahead.ask(DAVE);
  ahead.ask({ ...DAVE, name: "Dave again" });
  expect(asked).toEqual([DAVE.identifier]);
  expect(await ahead.take(DAVE)).toMatchObject({ ok: true, value: { id: `user-of-${DAVE.identifier}` } });
  expect(ahead.take(DAVE)).toBeUndefined();
});

test("only a user found is kept: not found (stale once anyone creates them) and a failure are asked again", async () => {
  let exists = false;
  const asked: string[] = [];
  const api = {
    getUser: async (identifier: string) => {
      asked.push(identifier);
      return exists ? { ok: true, value: { id: "dave" } } : { ok: false, error: { kind: "NotFound" } };
    },
  } as unknown as Pick<Api, "getUser">;
  const ahead = new UsersAhead(api, () => 0);
  ahead.ask(DAVE);
  await Bun.sleep(0);
  exists = true; // Dave's ban, earlier in the round, created his user: his unban must find it
  expect(await ahead.take(DAVE)).toMatchObject({ ok: true, value: { id: "dave" } });
  expect(asked).toEqual([DAVE.identifier, DAVE.identifier]);
});

test("an answer not taken within 2 s is not used; a known user id is not asked", async () => {
  const { ahead, asked, advance } = setup();
  ahead.ask(DAVE);
  advance(2_000);
  expect(ahead.take(DAVE)).toBeUndefined();
  ahead.ask({ ...DAVE, user_id: "known" });
  expect(asked).toEqual([DAVE.identifier]);
});
