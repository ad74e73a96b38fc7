/**
 * The pace of per-player requests: a burst at once, then a steady rate, in call order, stoppable. The pace a drain
 * learns from the service's 429s.
 */
import { expect, test } from "bun:test";
import { ManualClock, settle } from "../lib/clock.ts";
import { LEARNED_CAP, LEARNED_SHARE, LearnedPace, Pace } from "../lib/pace.ts";

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

test("a learned pace: none before a 429, then a share of what went through, growing slowly to a cap", async () => {
  const clock = new ManualClock();
  const pace = new LearnedPace(clock);
  // Unpaced: 100 starts within one instant.
  for (let i = 0; i < 100; i++) await pace.take();
  expect(pace.perSecond).toBeUndefined();
  pace.refused();
  expect(pace.perSecond).toBe(100 * LEARNED_SHARE);
  // The other requests in flight come back refused too: the same 429, nothing new learned.
  await clock.advance(500);
  pace.refused();
  expect(pace.perSecond).toBe(100 * LEARNED_SHARE);

  // Paced from then on: what starts in a second is about the rate, not the 100 that met the limit.
  await clock.advance(2000);
  let started = 0;
  for (let i = 0; i < 200; i++) void pace.take().then(() => started++);
  await settle();
  const atOnce = started;
  for (let ms = 0; ms < 1000; ms += 5) await clock.advance(5);
  expect(started - atOnce).toBeGreaterThanOrEqual(84);
  expect(started - atOnce).toBeLessThanOrEqual(100 * LEARNED_CAP);
  // Minutes without a 429: grown to the cap, never to the rate that was refused.
  await clock.advance(120_000);
  await pace.take();
  expect(pace.perSecond).toBe(100 * LEARNED_CAP);
});
