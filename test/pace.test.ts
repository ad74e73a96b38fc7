/** The pace of per-player requests: a burst at once, then a steady rate, in call order, stoppable. */
import { expect, test } from "bun:test";
import { ManualClock, settle } from "../lib/clock.ts";
import { Pace } from "../lib/pace.ts";

test("burst at once, then perSecond a second, in call order", async () => {
  const clock = new ManualClock();
  const pace = new Pace(clock, { perSecond: 10, burst: 5 });
  const started: number[] = [];
  for (let i = 0; i < 25; i++) void pace.take().then(() => started.push(i));
  await settle();
  expect(started).toEqual([0, 1, 2, 3, 4]);
  expect(pace.waiting).toBe(20);
  await clock.advance(1000);
  await settle();
  expect(started).toHaveLength(15);
  await clock.advance(1000);
  await settle();
  expect(started).toEqual(Array.from({ length: 25 }, (_, i) => i));
  expect(pace.waiting).toBe(0);
});

test("a take waiting for its turn rejects when stopped; the next ones still get theirs", async () => {
  const clock = new ManualClock();
  const pace = new Pace(clock, { perSecond: 1, burst: 1 });
  await pace.take();
  const stop = new AbortController();
  const waiting = pace.take(stop.signal);
  stop.abort(new Error("stopped"));
  await expect(waiting).rejects.toThrow("stopped");
  const next = pace.take();
  await clock.advance(1000);
  await next;
  expect(() => new Pace(clock, { perSecond: 0 })).toThrow("above 0");
});
