/**
 * An unstorage driver for the local filesystem that never leaves a torn file: every write goes to a
 * temp file in the same directory, is fsynced, then renamed over the target (rename is atomic on
 * POSIX filesystems). Written directly on node's file calls (lib/fsio.ts) rather than wrapping unstorage's fs
 * driver, whose anymatch/picomatch imports cost ~11 ms of startup in every one-shot CLI command.
 */
import { type FileHandle, mkdir, open, readdir, readOwnFile, rename, rm, stat, unlink } from "../fsio.ts";
import { dirname, join, resolve, sep } from "node:path";
import { defineDriver } from "unstorage";
import { StoreWriteError, storeWriteError } from "./errors.ts";

export interface AtomicFsOptions {
  base: string;
  /** fsync the file before the rename and its directory after it (default true). */
  fsync?: boolean;
  /** Told after every write: nothing when it succeeded, the error when the disk or the path refused it. */
  onWrite?: (error?: StoreWriteError) => void;
}

/** Marks temp files: `<file>.tmp-<pid>-<uuid>`. Keys containing it are refused so they can't be hidden. */
export const TMP_MARK = ".tmp-";

/** Maps `a:b:c` to `<base>/a/b/c`; refuses empty, `.` and `..` segments, NUL bytes and temp-file names. */
export function keyToPath(base: string, key: string): string {
  const segments = key.split(":");
  for (const s of segments) {
    if (s === "" || s === "." || s === ".." || s.includes("\0") || s.includes("/") || s.includes("\\")) {
      throw new Error(`invalid store key ${JSON.stringify(key)}`);
    }
    if (s.includes(TMP_MARK)) throw new Error(`invalid store key ${JSON.stringify(key)} (temp-file marker)`);
  }
  const path = join(base, ...segments);
  if (!path.startsWith(base + sep)) throw new Error(`invalid store key ${JSON.stringify(key)}`);
  return path;
}

export const isMissing = (e: unknown) => {
  const code = (e as NodeJS.ErrnoException).code;
  return code === "ENOENT" || code === "ENOTDIR" || code === "EISDIR";
};

/** Told once a written file is whole and in place, before it is flushed (atomicWrite). */
export type OnShown = () => void | Promise<void>;

/** The file a write made (atomicWrite's `made`): read from it before it took the name, so never another's. */
export type MadeFile = { ino: number; size: number; mtimeMs: number };
type OnMade = (file: MadeFile) => void;

/**
 * Writes `data` to `file` atomically. Directories are created only when the first attempt finds
 * them missing, so the common path costs no extra syscalls. `made` hears the written file before its rename: a
 * stat of `file` afterwards may already find another process's file renamed over it.
 */
export async function atomicWrite(
  file: string,
  data: string | Uint8Array,
  fsync = true,
  shown?: OnShown,
  made?: OnMade,
): Promise<void> {
  const tmp = `${file}${TMP_MARK}${process.pid}-${crypto.randomUUID()}`;
  let fh;
  // The first folder this write created, if it made any: the folders holding new ones are flushed too (below).
  let created: string | undefined;
  try {
    fh = await open(tmp, "wx", 0o600);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
    created = (await mkdir(dirname(file), { recursive: true, mode: 0o700 })) as string | undefined;
    fh = await open(tmp, "wx", 0o600);
  }
  try {
    await fh.writeFile(data);
    if (fsync && !shown) await fh.sync();
    if (made) made(await fh.stat());
    if (shown) await rename(tmp, file);
  } catch (e) {
    await fh.close().catch(() => {});
    await unlink(tmp).catch(() => {});
    throw e;
  }
  if (shown) return flushShown(fh, file, fsync, shown, created);
  await fh.close();
  try {
    await rename(tmp, file);
  } catch (e) {
    await unlink(tmp).catch(() => {});
    throw e;
  }
  if (fsync) await fsyncDirs(dirname(file), created);
}

/** Flushes `dir` (the file's rename) and, where the write created folders, the folders holding them (fsyncCreated). */
async function fsyncDirs(dir: string, created: string | undefined): Promise<void> {
  await fsyncDir(dir);
  await fsyncCreated(dir, created);
}

/**
 * The folders mkdir created on the way to `dir` (`first`, what it returned, the outermost), each made durable in its
 * parent: on a file system that does not order metadata (XFS, btrfs), a new folder's entry is not on disk until its
 * parent is flushed, and what is in it is lost with it. Nothing when mkdir created none.
 */
export async function fsyncCreated(dir: string, first: string | undefined): Promise<void> {
  if (first) for (let d = dir; d.length >= first.length; d = dirname(d)) await fsyncDir(dirname(d));
}

/**
 * The file is whole and in place: `shown` is told (a `ban` hands its entry to a running `run` now, whose kick need not
 * wait for the disk), then it is flushed, and its folder. A failed flush is thrown marked `flushFailed`: the file
 * stays, as another process may have read it. A power cut before the flush ends may lose it, or leave it empty (set
 * aside in `corrupt/`); the caller says nothing of it before then (docs/reliability.md, "Why each fsync").
 */
async function flushShown(
  fh: FileHandle,
  file: string,
  fsync: boolean,
  shown: OnShown,
  created: string | undefined,
): Promise<void> {
  // Awaited: a one-shot command's file calls block (lib/fsio.ts), so what `shown` writes must be done before the
  // flush holds the process. Its failure is the caller's to report.
  await Promise.resolve()
    .then(shown)
    .catch(() => {});
  try {
    if (fsync) await fh.sync();
  } catch (e) {
    throw Object.assign(e instanceof Error ? e : new Error(String(e)), { flushFailed: true });
  } finally {
    await fh.close().catch(() => {});
  }
  if (fsync) await fsyncDirs(dirname(file), created);
}

/** Makes a rename durable across power loss. Not possible on every platform (Windows): ignored there. */
export async function fsyncDir(dir: string): Promise<void> {
  let fh;
  try {
    fh = await open(dir, "r");
    await fh.sync();
  } catch {
    // EISDIR/EPERM/EINVAL on platforms that cannot open or sync a directory; the rename still happened.
  } finally {
    await fh?.close().catch(() => {});
  }
}

/** Relative file paths (with `/`) under `dir`, skipping temp files; [] when `dir` does not exist. */
async function listFiles(dir: string, prefix: string, out: string[]): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (e) {
    if (isMissing(e)) return out;
    throw e;
  }
  for (const entry of entries) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) await listFiles(join(dir, entry.name), rel, out);
    else if (entry.isFile() && !entry.name.includes(TMP_MARK)) out.push(rel);
  }
  return out;
}

/**
 * Deletes temp files older than `maxAgeMs` left by writers that died between open and rename.
 * Younger ones may belong to a live writer and are left alone; folders `skip` names are not walked. Returns how
 * many were deleted.
 */
export async function cleanStaleTemp(
  dir: string,
  maxAgeMs: number,
  now = Date.now(),
  skip: (folder: string) => boolean = () => false,
): Promise<number> {
  let removed = 0;
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (e) {
    if (isMissing(e)) return 0;
    throw e;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) removed += skip(path) ? 0 : await cleanStaleTemp(path, maxAgeMs, now, skip);
    else if (entry.name.includes(TMP_MARK)) {
      const info = await stat(path).catch(() => undefined);
      if (
        info &&
        now - info.mtimeMs > maxAgeMs &&
        (await unlink(path).then(
          () => true,
          () => false,
        ))
      )
        removed++;
    }
  }
  return removed;
}

export default defineDriver((opts: AtomicFsOptions) => {
  const base = resolve(opts.base);
  const fsync = opts.fsync !== false;
  const pathOf = (key: string) => keyToPath(base, key);
  /** unstorage passes bases like `queue:ban:`; "" means the whole store. */
  const dirOf = (b: string) => {
    const trimmed = b.replace(/:+$/, "");
    return trimmed ? pathOf(trimmed) : base;
  };
  /** Disk and path failures become a StoreWriteError naming the file and the fix; onWrite hears every outcome. */
  const writing = async (key: string, op: (path: string) => Promise<void>) => {
    const path = pathOf(key);
    try {
      await op(path);
    } catch (e) {
      const err = storeWriteError(e, path, base);
      if (err instanceof StoreWriteError) opts.onWrite?.(err);
      throw err;
    }
    opts.onWrite?.();
  };
  const read = async (key: string) => {
    try {
      return await readOwnFile(pathOf(key));
    } catch (e) {
      if (isMissing(e)) return null;
      throw e;
    }
  };

  return {
    name: "atomic-fs",
    options: opts,
    async hasItem(key: string) {
      const info = await stat(pathOf(key)).catch(() => undefined);
      return info?.isFile() ?? false;
    },
    async getItem(key: string) {
      return (await read(key))?.toString("utf8") ?? null;
    },
    getItemRaw: read,
    setItem: (key: string, value: string) => writing(key, (path) => atomicWrite(path, value, fsync)),
    // `fsync: false` for one write: a record whose loss to a power cut costs nothing (store/records.ts).
    setItemRaw: (key: string, value: string | Uint8Array, o?: { fsync?: boolean; shown?: OnShown; made?: OnMade }) =>
      writing(key, (path) => atomicWrite(path, value, fsync && o?.fsync !== false, o?.shown, o?.made)),
    removeItem: (key: string) =>
      writing(key, (path) =>
        unlink(path).catch((e) => {
          if (!isMissing(e)) throw e;
        }),
      ),
    async getKeys(b: string) {
      const dir = dirOf(b);
      const prefix =
        dir === base
          ? ""
          : dir
              .slice(base.length + 1)
              .split(sep)
              .join(":");
      const files = await listFiles(dir, "", []);
      return files.map((f) => (prefix ? `${prefix}:` : "") + f.split("/").join(":"));
    },
    async clear(b: string) {
      const dir = dirOf(b);
      if (dir === base) {
        const entries = await readdir(base).catch(() => []);
        await Promise.all(entries.map((name) => rm(join(base, name), { recursive: true, force: true })));
      } else await rm(dir, { recursive: true, force: true });
    },
    dispose() {},
  };
});
