/** The instance lock: one `run` per storage directory, and what is judged a live holder and what is not. */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { mkdir, mkdtemp, readFile, readdir, rm, utimes, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { holdInstance, InstanceBusyError, InstanceLockError, INSTANCE_LOCK } from "../../lib/store/instance.ts";
import { spawn } from "../support/procs.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "instance-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const lockPath = () => join(dir, INSTANCE_LOCK);
const since = Date.parse("2026-11-20T10:00:00Z");
const holder = (fields: Record<string, unknown>) =>
  writeFile(lockPath(), JSON.stringify({ pid: process.pid, host: hostname(), since, ...fields }));

async function deadPid(): Promise<number> {
  const child = spawn([process.execPath, "-e", ""], { stdout: "ignore" });
  await child.exited;
  return child.pid;
}

test("held: a second taker is refused with the holder's pid, host and start; released: taken again", async () => {
  const first = await holdInstance(dir);
  expect(JSON.parse(await readFile(lockPath(), "utf8"))).toMatchObject({ pid: process.pid, host: hostname() });
  const refused = await holdInstance(dir).catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(InstanceBusyError);
  expect((refused as Error).message).toMatch(
    new RegExp(
      `^another hub-agent run holds this storage directory: pid ${process.pid} on host ${hostname()} since \\d{4}-`,
    ),
  );
  await first.release();
  expect(await readdir(dir)).toEqual([]);
  const second = await holdInstance(dir);
  expect(second.tookOverFrom).toBeUndefined();
  await second.release();
});

const canTrace = (await spawn(["strace", "-qq", "-o", "/dev/null", "true"], { stdout: "ignore" }).exited) === 0;

test.skipIf(!canTrace)(
  "a release not awaited (a stop's bounded last step, its unlink held 0.5 s): the next hold in the process waits for it",
  async () => {
    // In a process of its own, the lock's unlink held by strace as a stalled disk holds it: a hold right after a release
    // still under way would find its own live pid in the lock (refused) unless it waits for the removal.
    const script = `
      const { holdInstance } = await import(${JSON.stringify(join(import.meta.dir, "../../lib/store/instance.ts"))});
      const first = await holdInstance(process.argv[1]);
      void first.release();
      const second = await holdInstance(process.argv[1]).catch((e) => e);
      console.log(second instanceof Error ? second.message : "held");
      if (!(second instanceof Error)) await second.release();`;
    const calls = "unlink,unlinkat";
    const p = spawn(
      ["strace", "-f", "-qq", "-o", "/dev/null", "-P", lockPath(), "-e", `trace=${calls}`]
        .concat(["-e", `inject=${calls}:delay_enter=500000`])
        .concat([process.execPath, "-e", script, dir]),
      { stdout: "pipe", stderr: "pipe" },
    );
    const [code, out] = await Promise.all([p.exited, new Response(p.stdout).text()]);
    expect(out.trim()).toBe("held");
    expect(code).toBe(0);
    expect(await readdir(dir)).toEqual([]);
  },
  20_000,
);

test("a holder that died (SIGKILL leaves its lock) is taken over at once, and named", async () => {
  const pid = await deadPid();
  await holder({ pid });
  const taken = await holdInstance(dir);
  expect(taken.tookOverFrom).toMatchObject({ pid, host: hostname(), since });
  expect(JSON.parse(await readFile(lockPath(), "utf8")).pid).toBe(process.pid);
  await taken.release();
});

test("a reused pid (alive, but started at another time) is not the holder", async () => {
  await holder({ start: "1" }); // our own pid, with a start time that is not ours
  const taken = await holdInstance(dir);
  expect(taken.tookOverFrom).toMatchObject({ pid: process.pid, start: "1" });
  await taken.release();
});

test("a holder from a previous boot is not the holder", async () => {
  const sleeper = spawn([process.execPath, "-e", "setTimeout(() => {}, 30000)"], { stdout: "ignore" });
  await holder({ pid: sleeper.pid, boot: "00000000-0000-0000-0000-000000000000" });
  const taken = await holdInstance(dir);
  expect(taken.tookOverFrom?.pid).toBe(sleeper.pid);
  await taken.release();
  sleeper.kill();
  await sleeper.exited;
});

test("a live holder of this host is refused; the lock is left in place", async () => {
  const sleeper = spawn([process.execPath, "-e", "setTimeout(() => {}, 30000)"], { stdout: "ignore" });
  await holder({ pid: sleeper.pid });
  const refused = await holdInstance(dir).catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(InstanceBusyError);
  expect((refused as Error).message).toBe(
    `another hub-agent run holds this storage directory: pid ${sleeper.pid} on host ${hostname()} since 2026-11-20T10:00:00.000Z (${lockPath()}); stop it first, or give this one its own storage.dir`,
  );
  expect(JSON.parse(await readFile(lockPath(), "utf8")).pid).toBe(sleeper.pid);
  sleeper.kill();
  await sleeper.exited;
});

test("a holder on another host is refused, with the file to remove if it runs there no more", async () => {
  await holder({ pid: 1, host: "game-box-2" });
  const old = new Date(Date.now() - 24 * 3600_000);
  await utimes(lockPath(), old, old); // however old: its age says nothing about a process elsewhere
  const refused = await holdInstance(dir).catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(InstanceBusyError);
  expect((refused as Error).message).toBe(
    `another hub-agent run may hold this storage directory: pid 1 on host game-box-2 since 2026-11-20T10:00:00.000Z; hub-agent cannot check a process on another host: if none runs there, remove ${lockPath()}`,
  );
});

test("an empty or unreadable lock file never names a holder: an old one is broken at once, a fresh one after 2 s", async () => {
  await writeFile(lockPath(), "");
  const old = new Date(Date.now() - 60_000);
  await utimes(lockPath(), old, old);
  const first = await holdInstance(dir);
  expect(first.tookOverFrom).toBeUndefined();
  await first.release();

  await writeFile(lockPath(), '{"pid": 12');
  const second = await holdInstance(dir);
  expect(JSON.parse(await readFile(lockPath(), "utf8")).pid).toBe(process.pid);
  await second.release();
});

test("a directory in the lock's place, or a storage path through a file: one line with the path and the fix", async () => {
  await mkdir(lockPath());
  const inTheWay = await holdInstance(dir).catch((e: unknown) => e);
  expect(inTheWay).toBeInstanceOf(InstanceLockError);
  expect((inTheWay as Error).message).toBe(
    `cannot take the instance lock ${lockPath()}: it is a directory; remove that directory: hub-agent creates the file itself`,
  );
  await writeFile(join(dir, "file"), "");
  const under = join(dir, "file", "store");
  const notDir = await holdInstance(under).catch((e: unknown) => e);
  expect(notDir).toBeInstanceOf(InstanceLockError);
  expect((notDir as Error).message).toBe(
    `cannot take the instance lock ${join(under, INSTANCE_LOCK)}: a part of the path is a file, not a directory; make ${under} a directory this user can write (storage.dir)`,
  );
});
