import { describe, expect, test } from "bun:test";
import { RECENT_MAX_AGE_MS, RECENT_MAX_PLAYERS, RecentPlayers } from "../../lib/players/recent.ts";

describe("the list of recently seen players", () => {
  test("keeps the newest RECENT_MAX_PLAYERS, none unseen for longer than RECENT_MAX_AGE_MS", () => {
    let now = 1_000_000_000_000;
    const list = new RecentPlayers("STEAM", () => now);
    for (let i = 0; i < RECENT_MAX_PLAYERS + 20; i++) {
      now += 1000;
      list.seen({ id: `p${i}`, name: `Player ${i}`, user_id: null });
    }
    const snap = list.snapshot();
    expect(snap.players).toHaveLength(RECENT_MAX_PLAYERS);
    expect(snap.players[0]?.id).toBe(`p${RECENT_MAX_PLAYERS + 19}`); // newest first
    expect(snap.players.some((p) => p.id === "p0")).toBe(false);
    now += RECENT_MAX_AGE_MS - 9_500; // only the last ten seen (1 s apart) are within the age bound
    expect(list.snapshot().players.map((p) => p.id)).toHaveLength(10);
  });

  test("a previous run's list is merged (same game only), the newer sighting wins, a known user id is kept", () => {
    const now = 2_000_000_000_000;
    const list = new RecentPlayers("STEAM", () => now);
    list.seen({ id: "a", name: "Ann (new nick)", user_id: null });
    list.merge({
      user_type: "STEAM",
      players: [
        { id: "a", name: "Ann", user_id: "u-a", last_seen: now - 60_000 },
        { id: "b", name: "Ben", user_id: null, last_seen: now - 120_000 },
      ],
    });
    list.merge({ user_type: "MINECRAFT", players: [{ id: "c", name: "Cy", user_id: null, last_seen: now }] });
    list.seen({ id: "b", name: "Ben", user_id: null });
    expect(list.snapshot().players.map((p) => [p.id, p.name, p.user_id])).toEqual([
      ["a", "Ann (new nick)", null],
      ["b", "Ben", null],
    ]);
    // seen() with no user id keeps the one known from before.
    list.merge({ user_type: "STEAM", players: [{ id: "d", name: "Di", user_id: "u-d", last_seen: now - 1 }] });
    list.seen({ id: "d", name: "Di", user_id: null });
    expect(list.snapshot().players.find((p) => p.id === "d")?.user_id).toBe("u-d");
  });
});
