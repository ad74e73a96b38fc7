/** The pacer against the server's own bookkeeping (docs/game-consoles.md §2.2), on a manual clock. */
import { describe, expect, test } from "bun:test";
import { ManualClock } from "../../../lib/clock.ts";
import { Pacer } from "../../../lib/game/transports/pacer.ts";

/** ioq3's SVC_RateLimit, as the server runs it for every rcon request from one address. */
function serverLimit(burst: number, periodMs: number) {
  let level = 0;
  let last = 0;
  return (now: number): boolean => {
    const interval = now - last;
    const expired = Math.floor(interval / periodMs);
    if (expired > level || interval < 0) {
      level = 0;
      last = now;
    } else {
      level -= expired;
      last = now - (interval % periodMs);
    }
    if (level < burst) {
      level++;
      return false;
    }
    return true; // dropped
  };
}

describe("Pacer", () => {
  test("a burst at once, then one request a period: never over the server's limit, never slower", async () => {
    const clock = new ManualClock();
    const pacer = new Pacer(clock, 8, 1000);
    const dropped = serverLimit(10, 1000);
    const at: number[] = [];
    let done = false;
    void (async () => {
      for (let i = 0; i < 30; i++) {
        await pacer.take();
        at.push(clock.monotonic());
        expect(dropped(clock.monotonic())).toBe(false);
      }
      done = true;
    })();
    await clock.advance(0); // the burst, at once
    expect(at).toEqual(Array(8).fill(0));
    while (!done) await clock.advance(50);
    // After the burst, one a second: 22 more within 22 s.
    expect(at.at(-1)).toBe(22_000);
  });

  test("an idle client gets its burst back; a request taken while waiting is counted once", async () => {
    const clock = new ManualClock();
    const pacer = new Pacer(clock, 2, 1000);
    await pacer.take();
    await pacer.take();
    let third = false;
    void pacer.take().then(() => (third = true));
    await clock.advance(999);
    expect(third).toBe(false);
    await clock.advance(1);
    expect(third).toBe(true);
    await clock.advance(10_000);
    const t = clock.monotonic();
    await pacer.take();
    await pacer.take();
    expect(clock.monotonic()).toBe(t);
  });

  test("an aborted wait rejects with the signal's reason and takes nothing", async () => {
    const clock = new ManualClock();
    const pacer = new Pacer(clock, 1, 1000);
    await pacer.take();
    const ac = new AbortController();
    const waiting = pacer.take(ac.signal).catch((e: Error) => e.message);
    ac.abort(new Error("timed out"));
    expect(await waiting).toBe("timed out");
    await clock.advance(1000);
    let taken = false;
    void pacer.take().then(() => (taken = true));
    await clock.advance(0);
    expect(taken).toBe(true);
  });
});
