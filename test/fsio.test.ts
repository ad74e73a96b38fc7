/**
 * lib/fsio.ts: the store and the configuration read their outcomes (values, and errors by `code`) the same whether
 * a process does its file operations blocking (one-shot commands) or on the thread pool (`run`). The same script of
 * operations, successes and failures alike, must give the same record in both modes.
 */
import { afterAll, expect, test } from "bun:test";
import {
  closeSync,
  constants,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as io from "../lib/fsio.ts";

const root = mkdtempSync(join(tmpdir(), "hub-fsio-"));
afterAll(() => {
  io.useBlockingFileIo(false);
  rmSync(root, { recursive: true, force: true });
});

/** Each step's value, or its error as node reports it (the path made relative so both runs compare). */
async function script(dir: string): Promise<[string, unknown][]> {
  const out: [string, unknown][] = [];
  const step = async (what: string, op: () => Promise<unknown>) => {
    try {
      out.push([what, await op()]);
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      out.push([what, { code: err.code, syscall: err.syscall, path: err.path?.replace(dir, "<dir>") }]);
    }
  };
  const at = (name: string) => join(dir, name);
  await step("mkdir", () => io.mkdir(at("a/b"), { recursive: true, mode: 0o700 }).then(() => "made"));
  await step("mkdir without parents", () => io.mkdir(at("x/y")));
  await step("write", () => io.writeFile(at("a/f"), "one", { mode: 0o600, flag: "wx" }));
  await step("write again, exclusive", () => io.writeFile(at("a/f"), "two", { flag: "wx" }));
  await step("read text", () => io.readFile(at("a/f"), "utf8"));
  await step("read bytes", () => io.readFile(at("a/f")).then((b) => [...b]));
  await step("read a directory", () => io.readFile(at("a")));
  await step("read missing", () => io.readFile(at("missing"), "utf8"));
  await step("stat", () => io.stat(at("a/f")).then((s) => [s.isFile(), s.size, s.mode & 0o777]));
  await step("stat missing", () => io.stat(at("nope")));
  await step("access", () => io.access(at("a/f")));
  await step("access to run a file that is not executable", () => io.access(at("a/f"), constants.X_OK));
  await step("readdir", () => io.readdir(at("a")).then((n) => n.sort()));
  await step("readdir typed", () =>
    io.readdir(at("a"), { withFileTypes: true }).then((es) => es.map((e) => [e.name, e.isDirectory()]).sort()),
  );
  await step("readdir of a file", () => io.readdir(at("a/f")));
  await step("link", () => io.link(at("a/f"), at("a/g")));
  await step("link over an existing file", () => io.link(at("a/f"), at("a/g")));
  await step("rename", () => io.rename(at("a/g"), at("a/h")));
  await step("rename missing", () => io.rename(at("a/g"), at("a/i")));
  await step("utimes", () =>
    io
      .utimes(at("a/h"), 1_000, 2_000)
      .then(() => io.stat(at("a/h")))
      .then((s) => s.mtimeMs),
  );
  await step("unlink", () => io.unlink(at("a/h")));
  await step("unlink missing", () => io.unlink(at("a/h")));
  await step("open, write, sync, stat, close", async () => {
    const fh = await io.open(at("a/t"), "wx", 0o600);
    await fh.writeFile("four");
    await fh.sync();
    const size = (await fh.stat()).size;
    await fh.close();
    return [size, await io.readFile(at("a/t"), "utf8")];
  });
  await step("open exclusive over a file", () => io.open(at("a/t"), "wx", 0o600));
  await step("a handle closed twice, then used", async () => {
    const fh = await io.open(at("a/t"), "r");
    await fh.close();
    await fh.close();
    const after = async (op: () => Promise<unknown>) =>
      op().then(
        () => "done",
        (e: NodeJS.ErrnoException) => [e.code, e.syscall],
      );
    return [
      await after(() => fh.writeFile("late")),
      await after(() => fh.sync()),
      await after(() => fh.stat()),
      await after(() => fh.readFile()),
      await io.readFile(at("a/t"), "utf8"),
    ];
  });
  await step("open a directory, sync it", async () => {
    const fh = await io.open(at("a"), "r");
    await fh.sync();
    await fh.close();
    return "synced";
  });
  await step("open and read", async () => {
    const fh = await io.open(at("a/t"), "r");
    const text = (await fh.readFile()).toString("utf8");
    await fh.close();
    return text;
  });
  await step("rm", () => io.rm(at("a"), { recursive: true, force: true }).then(() => io.readdir(dir)));
  return out;
}

test("a script of file operations, failures included, gives the same record blocking and threaded", async () => {
  io.useBlockingFileIo(false);
  const threaded = await script(mkdtempSync(join(root, "threaded-")));
  io.useBlockingFileIo(true);
  const blocking = await script(mkdtempSync(join(root, "blocking-")));
  expect(blocking).toEqual(threaded);
  // The record is worth comparing: it holds successes and each kind of failure the store handles.
  const codes = threaded.map(([, r]) => (r as { code?: string })?.code).filter(Boolean);
  expect(codes).toEqual([
    "ENOENT",
    "EEXIST",
    "EISDIR",
    "ENOENT",
    "ENOENT",
    "EACCES",
    "ENOTDIR",
    "EEXIST",
    "ENOENT",
    "ENOENT",
    "EEXIST",
  ]);
  expect(threaded[4]).toEqual(["read text", "one"]);
});

test("the mode switches: blocking does the work before returning the promise, threaded only after", async () => {
  const file = join(root, "order");
  io.useBlockingFileIo(true);
  const written = io.writeFile(file, "x");
  expect(existsSync(file)).toBe(true);
  await written;
  io.useBlockingFileIo(false);
  const removed = io.unlink(file);
  expect(existsSync(file)).toBe(true);
  await removed;
  expect(existsSync(file)).toBe(false);
});

test("blocking: a closed handle's late write or second close never reaches the file that took its number", async () => {
  io.useBlockingFileIo(true);
  const fh = await io.open(join(root, "closed"), "w");
  await fh.close();
  // The kernel hands the freed descriptor number to the next file opened: this one.
  const next = join(root, "next");
  const fd = openSync(next, "w");
  await expect(fh.writeFile("late")).rejects.toMatchObject({ code: "EBADF" });
  await expect(fh.sync()).rejects.toMatchObject({ code: "EBADF" });
  await fh.close();
  writeSync(fd, "still open");
  closeSync(fd);
  expect(readFileSync(next, "utf8")).toBe("still open");
  io.useBlockingFileIo(false);
});

/**
 * A file read with readOwnFile keeps its access time, in both modes: on a `relatime` file system a plain read of a
 * file rewritten since its last read writes its atime, a write a stalled journal holds (lib/fsio.ts openToRead).
 */
test("readOwnFile leaves the access time of a freshly written file alone; a plain read moves it", async () => {
  const file = join(root, "fresh");
  const atime = () => statSync(file, { bigint: true }).atimeNs;
  // The atime a write leaves (no later than the mtime): what `relatime` updates at the next read.
  const fresh = () => {
    writeFileSync(file, "x");
    utimesSync(file, new Date(1_000_000_000_000), new Date(1_000_000_000_000));
    return atime();
  };
  let before = fresh();
  readFileSync(file);
  const plainMoves = atime() !== before;
  if (!plainMoves) return console.warn("this file system does not update access times (noatime): nothing to compare");
  for (const blocking of [true, false]) {
    io.useBlockingFileIo(blocking);
    before = fresh();
    expect((await io.readOwnFile(file)).toString()).toBe("x");
    expect(atime()).toBe(before);
  }
  io.useBlockingFileIo(false);
});
