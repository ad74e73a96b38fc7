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
  // Refused while paced, and it kept the pace: the pace itself was too much.
  await busy(pace, clock, 1000);
  pace.refused();
  const kept = pace.perSecond as number;
  expect(kept).toBeCloseTo(probing * LEARNED_SHARE, 0); // within a start of it
  // Refused with one start in the last second: others used the window; at most LEARNED_SHARE less than the pace.
  await clock.advance(60_000);
  await pace.take();
  const grown = pace.perSecond as number;
  expect(grown).toBeGreaterThan(kept);
  await clock.advance(999);
  pace.refused();
  expect(pace.perSecond).toBeCloseTo(grown * LEARNED_SHARE ** 2, 5);
});

/** Starts as many as `pace` allows for `ms` of the clock (more are asked for than it lets through). */
async function busy(pace: LearnedPace, clock: ManualClock, ms: number) {
  for (let i = 0; i < ((pace.perSecond as number) * ms) / 1000 + 10; i++) void pace.take();
  for (let t = 0; t < ms; t += 5) await clock.advance(5);
  await settle();
}

test("a pace far above the limit (a first guess from a burst): two 429s bring it to what went through", async () => {
  const clock = new ManualClock();
  const pace = new LearnedPace(clock);
  // The first second's burst: 200 started, then a 429.
  for (let i = 0; i < 200; i++) {
    await pace.take();
    await clock.advance(4);
  }
  pace.refused();
  expect(pace.perSecond).toBeCloseTo(200 * LEARNED_SHARE, -0.5);
  // The service allows about 100 a second in fixed windows: at 170 a second a window fills in about 0.6 s, then a
  // 429 and a pause of 1 s, so in the second before each 429 only what went through started.
  const overshoot = async () => {
    await clock.advance(1000); // the pause
    await busy(pace, clock, (100 / (pace.perSecond as number)) * 1000);
    const before = pace.perSecond as number;
    pace.refused();
    return before;
  };
  const first = await overshoot();
  // At most LEARNED_SHARE less than the pace at once (the old rule took LEARNED_SHARE of the pace itself: 150).
  expect(pace.perSecond).toBeCloseTo(first * LEARNED_SHARE ** 2, 5);
  const second = await overshoot();
  // Under the limit after the second (the old rule: 85 % of 132, 112, over it: a third 429, then a fourth).
  expect(pace.perSecond as number).toBeCloseTo(second * LEARNED_SHARE ** 2, 5);
  expect(pace.perSecond as number).toBeLessThan(100);
  expect(pace.perSecond as number).toBeGreaterThan(100 * LEARNED_SHARE);
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
  await busy(pace, clock, 1000); // at that pace until the next 429
  const refusedAt = pace.perSecond as number;
  pace.refused();
  expect(pace.perSecond).toBeCloseTo(refusedAt * LEARNED_SHARE, 0); // within a start of it
  await clock.advance(60_000);
  await pace.take();
  expect(pace.perSecond).toBeCloseTo(refusedAt * LEARNED_CAP, 0); // then as any learned pace
});

test("a jump starts at once in the learned pace's place: the paced ones after it make room", async () => {
  // Two paces learned alike, ten started in a second, then a 429: 8.5 a second, one at a time. One of them gets a jump.
  const clock = new ManualClock();
  const started = [0, 0];
  const paces = [new LearnedPace(clock), new LearnedPace(clock)];
  for (const pace of paces) {
    for (let i = 0; i < 10; i++) await pace.take();
    pace.refused();
  }
  await clock.advance(1000);
  paces.forEach((pace, k) => {
    for (let i = 0; i < 20; i++) void pace.take().then(() => started[k]!++);
  });
  await settle();
  expect(started).toEqual([1, 1]); // the token saved up meanwhile
  paces[1]!.jump(); // a sanction typed meanwhile: not waiting, in the pace's place
  for (let t = 0; t < 400; t += 5) await clock.advance(5);
  await settle();
  expect(started).toEqual([4, 3]); // one every 118 ms; with the jump, one fewer
  for (let t = 0; t < 400; t += 5) await clock.advance(5);
  await settle();
  expect(started[0]! - started[1]!).toBe(1); // still one fewer: the rate the service sees stays the pace
});
