import { describe, expect, test } from "bun:test";
import { ManualClock } from "../../../lib/clock.ts";
import type { BridgeEvent } from "../../../lib/game/bridge.ts";
import type { PlayerList } from "../../../lib/game/presets/types.ts";
import { Roster } from "../../../lib/game/roster.ts";
import { PlayerPoll } from "../../../lib/game/sources/poll.ts";
import { memoryLogger } from "../../../lib/log.ts";

const alice = { id: "76561197960287930", name: "Alice" };
const bob = { id: "76561197960273212", name: "Bob" };

/** A poll over a list the test sets; `hold()` makes the next list call wait until released. */
function setup(intervalMs = 10_000) {
  const clock = new ManualClock();
  const events: BridgeEvent[] = [];
  const roster = new Roster((e) => events.push(e));
  let current: PlayerList = { players: [] };
  let failNext: Error | undefined;
  let gate: Promise<void> | undefined;
  let calls = 0;
  const results: boolean[] = [];
  const poll = new PlayerPoll({
    roster,
    clock,
    intervalMs,
    logger: memoryLogger(),
    onResult: (r) => results.push(r.ok),
    list: async () => {
      calls++;
      const snapshot = current; // what the game said when the command ran
      if (gate) await gate;
      if (failNext) {
        const e = failNext;
        failNext = undefined;
        throw e;
      }
      return snapshot;
    },
  });
  return {
    clock,
    events,
    roster,
    poll,
    results,
    calls: () => calls,
    set: (...players: PlayerList["players"]) => void (current = { players }),
    fail: (e = new Error("rcon: connection refused")) => void (failNext = e),
    hold() {
      let release!: () => void;
      gate = new Promise((r) => (release = r));
      return () => {
        gate = undefined;
        release();
      };
    },
    kinds: () => events.map((e) => `${e.type} ${"player" in e ? e.player.name : ""}`),
  };
}

const flush = () => new Promise((r) => setTimeout(r, 0));

describe("player-list polling", () => {
  test("polls at once and then every interval, synthesising connects and disconnects by diffing", async () => {
    const p = setup(10_000);
    p.set(alice);
    p.poll.start();
    await flush();
    expect(p.kinds()).toEqual(["player_connect Alice"]);
    p.set(alice, bob);
    await p.clock.advance(9_999);
    expect(p.calls()).toBe(1);
    await p.clock.advance(1);
    expect(p.kinds()).toEqual(["player_connect Alice", "player_connect Bob"]);
    p.set(bob);
    await p.clock.advance(10_000);
    expect(p.kinds().at(-1)).toBe("player_disconnect Alice");
    expect(p.roster.online().map((x) => x.name)).toEqual(["Bob"]);
    await p.poll.stop();
    await p.clock.advance(60_000);
    expect(p.calls()).toBe(3);
  });

  test("a connect seen by a log line and by polling counts once, in either order", async () => {
    const p = setup();
    p.roster.connect({ ...alice, slot: "2" }); // the log line first
    p.set({ ...alice, slot: "2" }, bob);
    await p.poll.refresh();
    p.roster.connect(bob); // the log line after the poll
    p.roster.connect(bob);
    expect(p.kinds()).toEqual(["player_connect Alice", "player_connect Bob"]);
    // A new session after a leave is a new connect.
    p.roster.disconnect(bob, "Disconnect by user.");
    p.roster.connect(bob);
    expect(p.kinds().slice(2)).toEqual(["player_disconnect Bob", "player_connect Bob"]);
  });

  test("a list taken before a log line can't undo it", async () => {
    const p = setup();
    p.set(alice);
    await p.poll.refresh();
    const release = p.hold();
    const pending = p.poll.refresh(); // the game still lists Alice…
    await flush();
    p.roster.disconnect(alice); // …but her leave line arrives before the reply
    p.roster.connect(bob); // and Bob's join, whom the old list doesn't have
    release();
    await pending;
    expect(p.kinds()).toEqual(["player_connect Alice", "player_disconnect Alice", "player_connect Bob"]);
    // The next list is fresh: it's the truth again.
    p.set(alice);
    await p.poll.refresh();
    expect(p.kinds().slice(3)).toEqual(["player_connect Alice", "player_disconnect Bob"]);
  });

  test("refreshes while one runs share one more poll after it (it may predate the change)", async () => {
    const p = setup();
    const release = p.hold();
    const first = p.poll.refresh();
    const second = p.poll.refresh();
    const third = p.poll.refresh();
    p.set(alice);
    release();
    await Promise.all([first, second, third]);
    expect(p.calls()).toBe(2);
    expect(await second).toEqual({ players: [alice] });
    expect(second).toBe(third);
  });

  test("a failed poll changes nothing, is reported, and the next interval polls again", async () => {
    const p = setup(5_000);
    p.set(alice);
    p.poll.start();
    await flush();
    p.fail();
    p.set();
    await p.clock.advance(5_000);
    expect(p.roster.online().map((x) => x.name)).toEqual(["Alice"]);
    await p.clock.advance(5_000);
    expect(p.results).toEqual([true, false, true]);
    expect(p.kinds()).toEqual(["player_connect Alice", "player_disconnect Alice"]);
    await p.poll.stop();
  });

  test("rows without an id vouch for the online player in their slot; unknown ones are ignored", async () => {
    const p = setup();
    p.roster.connect({ ...alice, slot: "2" });
    p.set({ name: "Alice", slot: "2" }, { name: "Stranger", slot: "5" });
    await p.poll.refresh();
    expect(p.kinds()).toEqual(["player_connect Alice"]);
    p.set({ name: "Stranger", slot: "5" });
    await p.poll.refresh();
    expect(p.kinds()).toEqual(["player_connect Alice", "player_disconnect Alice"]);
  });
});
