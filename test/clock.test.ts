/** The system clock's sleeps of any length, and the manual clock's two readings. */
import { afterEach, describe, expect, test } from "bun:test";
import { MAX_TIMER_MS, ManualClock, systemClock } from "../lib/clock.ts";
import { silentLogger } from "../lib/log.ts";
import { Scheduler } from "../lib/scheduler.ts";

const realSetTimeout = globalThis.setTimeout;
afterEach(() => {
  globalThis.setTimeout = realSetTimeout;
});

describe("systemClock.sleep", () => {
  test("a sleep past setTimeout's 24.8-day limit does not fire at once, and no timer gets more than the limit", async () => {
    const delays: number[] = [];
    globalThis.setTimeout = ((fn: () => void, ms?: number) => {
      delays.push(ms ?? 0);
      return realSetTimeout(fn, ms);
    }) as typeof setTimeout;
    const stop = new AbortController();
    let woke = false;
    const long = systemClock.sleep(3_000_000_000, stop.signal).then(
      () => (woke = true),
      () => "aborted",
    );
    // A later, short sleep ending proves the moment an overflowed timer would have fired has passed.
    await systemClock.sleep(50);
    expect(woke).toBe(false);
    expect(Math.max(...delays)).toBeLessThanOrEqual(MAX_TIMER_MS);
    stop.abort(new Error("done"));
    expect(await long).toBe("aborted");
  });

  test("short sleeps still end", async () => {
    const start = performance.now();
    await systemClock.sleep(20);
    expect(performance.now() - start).toBeGreaterThanOrEqual(15);
  });

  test("a scheduler job every 3,000,000 s (34.7 days) does not storm", async () => {
    const scheduler = new Scheduler(systemClock, silentLogger, 0);
    let runs = 0;
    scheduler.every("adverts", 3_000_000_000, async () => void runs++);
    await systemClock.sleep(100);
    await scheduler.stop();
    expect(runs).toBe(0);
  });
});

describe("ManualClock", () => {
  test("advance moves both readings; jump only the wall clock, waking nobody", async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    let woke = 0;
    void clock.sleep(1_000).then(() => woke++);
    clock.jump(-7_200_000);
    expect(clock.now()).toBe(Date.UTC(2026, 0, 1) - 7_200_000);
    expect(clock.monotonic()).toBe(0);
    await clock.advance(999);
    expect(woke).toBe(0);
    await clock.advance(1);
    expect(woke).toBe(1);
    expect([clock.now(), clock.monotonic()]).toEqual([Date.UTC(2026, 0, 1) - 7_200_000 + 1_000, 1_000]);
  });
});
