import { expect, test } from "bun:test";
import { atMost, coalescing, following, serial, serialByKey, teardownsByKey } from "../lib/serial.ts";

/** A promise the test settles by hand. */
function gate<T = void>() {
  let open!: (v: T) => void;
  let fail!: (e: Error) => void;
  const promise = new Promise<T>((res, rej) => ((open = res), (fail = rej)));
  return { promise, open, fail };
}

test("serial: runs one after another in call order; a failure rejects only its own call", async () => {
  const run = serial();
  const order: string[] = [];
  const first = gate();
  const a = run(async () => {
    order.push("a start");
    await first.promise;
    order.push("a end");
    return "a";
  });
  const b = run(async () => {
    order.push("b");
    throw new Error("b failed");
  });
  const c = run(async () => (order.push("c"), "c"));
  await Bun.sleep(0);
  expect(order).toEqual(["a start"]); // b waits for a
  first.open();
  expect(await a).toBe("a");
  await expect(b).rejects.toThrow("b failed");
  expect(await c).toBe("c");
  expect(order).toEqual(["a start", "a end", "b", "c"]);
});

test("serialByKey: one chain per key; keys do not wait for each other", async () => {
  const run = serialByKey();
  const held = gate();
  const order: string[] = [];
  const x1 = run("x", async () => {
    await held.promise;
    order.push("x1");
  });
  const x2 = run("x", async () => void order.push("x2"));
  await run("y", async () => void order.push("y"));
  expect(order).toEqual(["y"]);
  held.open();
  await Promise.all([x1, x2]);
  expect(order).toEqual(["y", "x1", "x2"]);
});

test("coalescing: calls during a run become one more run, shared by all of them, with the combined result", async () => {
  const gates = [gate<boolean>(), gate<boolean>()];
  let runs = 0;
  const round = coalescing(
    () => gates[runs++]!.promise,
    (a, b) => a || b,
  );
  const first = round();
  const second = round(); // during the first run: asks for one more
  const third = round(); // folded into the same extra run
  expect(runs).toBe(1);
  gates[0]!.open(true);
  await Bun.sleep(0);
  expect(runs).toBe(2);
  gates[1]!.open(false);
  expect(await Promise.all([first, second, third])).toEqual([true, true, true]);
  expect(runs).toBe(2);
  // Idle again: the next call starts a fresh run.
  const later = coalescing(async () => "fresh");
  expect(await later()).toBe("fresh");
});

test("coalescing: a call at any moment of a run's end gets a run of its own, never folded into the ended one", async () => {
  // The call lands 0, 1, 2, … microtasks after the run's work resolved: at 2 it was lost (no run after it).
  const lost: number[] = [];
  for (let depth = 0; depth < 12; depth++) {
    let runs = 0;
    const after = (n: number, f: () => void): void =>
      void (n === 0 ? f() : Promise.resolve().then(() => after(n - 1, f)));
    const call: () => Promise<void> = coalescing(async () => {
      if (++runs === 1) after(depth, () => void call());
    });
    await call();
    await Bun.sleep(1);
    if (runs !== 2) lost.push(depth);
  }
  expect(lost).toEqual([]);
  // One whose work throws at once leaves it idle: the next call runs.
  let thrown = 0;
  const failing = coalescing((): Promise<void> => {
    if (++thrown === 1) throw new Error("at once");
    return Promise.resolve();
  });
  await expect(failing()).rejects.toThrow("at once");
  await failing();
  expect(thrown).toBe(2);
});

test("following: a call during a run waits for the next run only, not for the runs later calls ask for", async () => {
  const gates = [gate<void>(), gate<void>(), gate<void>()];
  let runs = 0;
  const write = following(() => gates[runs++]!.promise);
  let firstDone = false;
  let secondDone = false;
  void write().then(() => (firstDone = true));
  void write().then(() => (secondDone = true)); // during run 1: gets run 2
  gates[0]!.open();
  await Bun.sleep(0);
  expect(firstDone).toBe(true);
  expect(runs).toBe(2);
  void write(); // during run 2: asks for run 3, which the second caller does not wait for
  gates[1]!.open();
  await Bun.sleep(0);
  expect(secondDone).toBe(true);
  expect(runs).toBe(3);
  gates[2]!.open();
  // A failed run rejects its own callers; the next call runs again.
  const failing = following(() => Promise.reject(new Error("disk full")));
  await expect(failing()).rejects.toThrow("disk full");
  await expect(failing()).rejects.toThrow("disk full");
});

test("atMost: two at once, the third when one ends, in call order; a failure frees its slot", async () => {
  const limit = atMost(2);
  const gates = [gate<void>(), gate<void>(), gate<void>(), gate<void>()];
  const started: number[] = [];
  const calls = gates.map((g, i) =>
    limit(() => {
      started.push(i);
      return i === 1 ? g.promise.then(() => Promise.reject(new Error("fsync failed"))) : g.promise;
    }),
  );
  await Bun.sleep(0);
  expect(started).toEqual([0, 1]);
  gates[1]!.open(); // the second fails: its slot goes to the third, not to the fourth
  await expect(calls[1]!).rejects.toThrow("fsync failed");
  await Bun.sleep(0);
  expect(started).toEqual([0, 1, 2]);
  gates[0]!.open();
  await calls[0];
  await Bun.sleep(0);
  expect(started).toEqual([0, 1, 2, 3]);
  gates[2]!.open();
  gates[3]!.open();
  await Promise.all([calls[2], calls[3]]);
  // Idle again: a call starts at once.
  let ran = false;
  await limit(async () => void (ran = true));
  expect(ran).toBe(true);
});

test("teardownsByKey: a start waits for its key's teardown under way, not for another key's, nor for a settled one", async () => {
  const t = teardownsByKey();
  const removal = gate();
  const other = gate();
  void t.track("a", removal.promise);
  void t.track("b", other.promise);
  let waited = false;
  const start = t.settled("a").then(() => (waited = true));
  await Bun.sleep(5);
  expect(waited).toBe(false);
  removal.open();
  await start;
  expect(waited).toBe(true);
  // Settled and forgotten: a later start on "a" goes at once, while "b" is still under way.
  expect(await Promise.race([t.settled("a").then(() => "at once"), Bun.sleep(5).then(() => "waited")])).toBe("at once");
  // A teardown that fails is still over: the start goes on.
  const failing = gate();
  void t.track("a", failing.promise).catch(() => {});
  failing.fail(new Error("gone already"));
  await t.settled("a");
  other.open();
});
