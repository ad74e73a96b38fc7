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

test("a learned pace: none before a 429, then a share of what was refused, growing slowly", async () => {
  const clock = new ManualClock();
  const pace = new LearnedPace(clock);
  // Unpaced: 100 starts over a second.
  for (let i = 0; i < 100; i++) {
    await pace.take();
    await clock.advance(10);
  }
  expect(pace.perSecond).toBeUndefined();
  pace.refused();
  const learned = pace.perSecond as number;
  expect(learned).toBeCloseTo(100 * LEARNED_SHARE, -0.5); // 99 or 100 starts in the second before
  // The other requests in flight come back refused too: the same 429, nothing new learned.
  await clock.advance(500);
  pace.refused();
  expect(pace.perSecond).toBe(learned);
  const ceiling = learned / LEARNED_SHARE;

  // Paced from then on: what starts in a second is about the rate, not the 100 that met the limit.
  await clock.advance(2000);
  let started = 0;
  for (let i = 0; i < 200; i++) void pace.take().then(() => started++);
  await settle();
  const atOnce = started;
  for (let ms = 0; ms < 1000; ms += 5) await clock.advance(5);
  expect(started - atOnce).toBeGreaterThanOrEqual(Math.floor(learned));
  expect(started - atOnce).toBeLessThanOrEqual(ceiling * LEARNED_CAP);
  // A minute without a 429: at the cap; then slower, past it only after minutes more.
  await clock.advance(60_000);
  await pace.take();
  expect(pace.perSecond).toBeCloseTo(ceiling * LEARNED_CAP, 5);
  await clock.advance(60_000);
  await pace.take();
  const probing = pace.perSecond as number;
  expect(probing).toBeCloseTo(ceiling * (LEARNED_CAP + 0.03), 5); // 60 s at a tenth of the growth
  // Refused while paced: the pace itself was too much, whatever the last second's starts say.
  pace.refused();
  expect(pace.perSecond).toBeCloseTo(probing * LEARNED_SHARE, 5);
});

test("a 429 moments into a learned pace's first second: a floor, growing by a twentieth a second until the next 429", async () => {
  const clock = new ManualClock();
  const pace = new LearnedPace(clock);
  for (let i = 0; i < 5; i++) {
    await pace.take();
    await clock.advance(10); // the window was nearly used up by other requests
  }
  pace.refused();
  expect(pace.perSecond).toBeCloseTo(5 * LEARNED_SHARE, 5);
  await clock.advance(20_000);
  await pace.take();
  expect(pace.perSecond).toBeCloseTo(5 * LEARNED_SHARE * 1.05 ** 20, 5); // 11.3: not stuck at 4
  const refusedAt = pace.perSecond as number;
  await clock.advance(1000);
  pace.refused();
  expect(pace.perSecond).toBeCloseTo(refusedAt * LEARNED_SHARE, 5);
  await clock.advance(60_000);
  await pace.take();
  expect(pace.perSecond).toBeCloseTo(refusedAt * LEARNED_CAP, 5); // then as any learned pace
});
