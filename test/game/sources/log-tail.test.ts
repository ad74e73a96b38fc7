import { afterEach, describe, expect, test } from "bun:test";
import {
  appendFileSync,
  closeSync,
  mkdtempSync,
  openSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LogTail } from "../../../lib/game/sources/log-tail.ts";
import { type Clock, systemClock } from "../../../lib/clock.ts";
import { memoryLogger } from "../../../lib/log.ts";
import { until } from "../../support/until.ts";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function tail(content?: string, opts: { fromStart?: boolean } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "hub-logtail-"));
  const path = join(dir, "games.log");
  if (content !== undefined) writeFileSync(path, content);
  const logger = memoryLogger();
  // Counts finished polls (each is followed by one sleep) and sleeps pending, so tests await polls, not time.
  const polls = { done: 0, pending: 0 };
  const clock: Clock = {
    now: systemClock.now,
    monotonic: systemClock.monotonic,
    sleep: async (ms, signal) => {
      polls.done++;
      polls.pending++;
      try {
        await systemClock.sleep(ms, signal);
      } finally {
        polls.pending--;
      }
    },
  };
  const t = new LogTail({ path, pollMs: 10, logger, clock, ...opts });
  const lines: string[] = [];
  await t.start((line, stream) => {
    expect(stream).toBe("log");
    lines.push(line);
  });
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  cleanups.push(() => t.stop());
  /** Appends a sentinel and waits for it, so everything before it was read. */
  let n = 0;
  const sync = async () => {
    const mark = `sync ${++n}`;
    appendFileSync(path, `${mark}\n`);
    await until(() => lines.includes(mark), `"${mark}" to be read`);
  };
  const read = () => lines.filter((l) => !l.startsWith("sync "));
  /** Waits until `n` more polls have finished. */
  const polled = async (n: number) => {
    const target = polls.done + n;
    await until(() => polls.done >= target, `${n} polls`);
  };
  return { t, path, lines, read, sync, polled, polls, logger, infos: () => logger.lines.map((l) => l.msg) };
}

describe("LogTail", () => {
  test("starts at the end, skipping a line half-written at that moment; then follows appends", async () => {
    const x = await tail("ClientConnect: 0\nClientBegin: 0\nClientDisc");
    appendFileSync(x.path, "onnect: 0\nClientConnect: 1\n");
    await x.sync();
    expect(x.read()).toEqual(["ClientConnect: 1"]);
  });

  test("fromStart also reads what is there", async () => {
    const x = await tail("old line\n", { fromStart: true });
    await x.sync();
    expect(x.read()).toEqual(["old line"]);
  });

  test("a line appended in pieces is delivered once complete", async () => {
    const x = await tail("");
    appendFileSync(x.path, "say: Sarge: ");
    await x.polled(3); // several polls see the unfinished line
    expect(x.lines).toEqual([]);
    appendFileSync(x.path, "hi there\r\n");
    await x.sync();
    expect(x.read()).toEqual(["say: Sarge: hi there"]);
  });

  test("rotation by rename: the old file is read to its end, then the new file from its start", async () => {
    const x = await tail("");
    appendFileSync(x.path, "a1\n");
    await x.sync();
    // All at once, so the tail can't have noticed in between: a late write to the renamed file, then the new file.
    appendFileSync(x.path, "a2\n");
    renameSync(x.path, `${x.path}.1`);
    appendFileSync(`${x.path}.1`, "a3\n");
    writeFileSync(x.path, "b1\nb2\n");
    await x.sync();
    expect(x.read()).toEqual(["a1", "a2", "a3", "b1", "b2"]);
    expect(x.infos()).toContain(`${x.path} was rotated: following the new file`);
  });

  test("a partial last line of the rotated file is delivered when the file changes", async () => {
    const x = await tail("");
    appendFileSync(x.path, "complete\nunfinished");
    renameSync(x.path, `${x.path}.1`);
    writeFileSync(x.path, "new\n");
    await x.sync();
    expect(x.read()).toEqual(["complete", "unfinished", "new"]);
  });

  test("deleted, then created again: the new file is read from its start", async () => {
    const x = await tail("");
    appendFileSync(x.path, "before\n");
    await x.sync();
    rmSync(x.path);
    await until(() => x.infos().includes(`${x.path} was moved away`), "the deletion to be noticed");
    writeFileSync(x.path, "after\n");
    await x.sync();
    expect(x.read()).toEqual(["before", "after"]);
  });

  test("truncation to empty: reads again from the start", async () => {
    const x = await tail("");
    appendFileSync(x.path, "one\ntwo\n");
    await x.sync();
    writeFileSync(x.path, "");
    await until(() => x.infos().some((m) => m.includes("was truncated")), "the truncation to be noticed");
    appendFileSync(x.path, "three\n");
    await x.sync();
    expect(x.read()).toEqual(["one", "two", "three"]);
  });

  test("truncated and refilled past the old position between two polls: still read from the start", async () => {
    const x = await tail("");
    appendFileSync(x.path, "short\n");
    await x.sync();
    writeFileSync(x.path, "first after truncation\nsecond after truncation\n");
    await x.sync();
    expect(x.read()).toEqual(["short", "first after truncation", "second after truncation"]);
  });

  test("copytruncate with a writer that keeps its offset: the hole of NULs is skipped", async () => {
    const x = await tail("");
    appendFileSync(x.path, "ClientConnect: 0\nClientBegin: 0\n");
    await x.sync();
    const end = Buffer.byteLength("ClientConnect: 0\nClientBegin: 0\nsync 1\n");
    writeFileSync(x.path, ""); // logrotate's copytruncate
    const fd = openSync(x.path, "r+");
    writeSync(fd, "ClientDisconnect: 0\n", end); // the game writes on at its old offset
    closeSync(fd);
    await x.sync();
    expect(x.read()).toEqual(["ClientConnect: 0", "ClientBegin: 0", "ClientDisconnect: 0"]);
  });

  test("waits for a file that does not exist yet", async () => {
    const x = await tail(undefined);
    expect(x.infos()).toContain(`waiting for ${x.path} to appear`);
    writeFileSync(x.path, "first\n");
    await x.sync();
    expect(x.read()).toEqual(["first"]);
  });

  test("stop() ends the polling", async () => {
    const x = await tail("");
    await x.sync();
    await x.t.stop();
    // Nothing is left that could poll again: no sleep pending, and the loop has ended (stop awaited it). (A poll
    // in flight when stop() was called may still finish during it, so polls are counted from here.)
    expect(x.polls.pending).toBe(0);
    const before = x.polls.done;
    appendFileSync(x.path, "after stop\n");
    expect(x.polls.done).toBe(before);
    expect(x.lines).toEqual(["sync 1"]);
  });
});
