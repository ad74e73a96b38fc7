/**
 * Store write failures as an operator reads them: one line naming the path and what to do, instead of a bare errno.
 * The same sentences serve `run`'s log and the one-shot commands' error line.
 */

/** The errno values a full, read-only or misconfigured store produces. */
const CODES = new Set(["ENOSPC", "EDQUOT", "EROFS", "EACCES", "EPERM", "ENOTDIR", "EISDIR", "EEXIST"]);

/** Whether an errno value is one of those: the store's problem (exit 8), not the program's. */
export const isStoreErrno = (code: string | undefined) => !!code && CODES.has(code);

/**
 * Creating the store's directory (mkdir -p) also fails with ENOENT when a part of its path leads nowhere (a link to
 * a volume not mounted): the store's problem too there, though elsewhere ENOENT is just a file not there (yet).
 */
export const isStoreDirErrno = (code: string | undefined) => code === "ENOENT" || isStoreErrno(code);

/** The disk itself refuses writes (full, over quota, read-only), as opposed to a path set up wrong. */
export const DISK_REFUSES = new Set(["ENOSPC", "EDQUOT", "EROFS"]);

/** A write to the store failed for a reason on the machine's side (disk, mount, permissions, a path in the way). */
export class StoreWriteError extends Error {
  override name = "StoreWriteError";
  /** Set once the store has logged this state (`run`), so a job that failed with it need not log it again. */
  reported = false;
  constructor(
    readonly code: string,
    readonly path: string,
    readonly dir: string,
    options?: ErrorOptions,
  ) {
    super(fsErrorLine(code, path, dir), options);
  }
}

/**
 * A write that showed its file before flushing it (atomicWrite's `shown`) and then failed to flush: the file is in
 * place, and a process may already have read it; only its survival of a power cut is in doubt.
 */
export const flushFailed = (e: unknown): boolean =>
  !!e && ((e as { flushFailed?: unknown }).flushFailed === true || flushFailed((e as Error).cause));

/** One line for an errno value: what is wrong with which path, and the fix. */
export function fsErrorLine(code: string, path: string, dir?: string): string {
  const where = dir ? `the store ${dir}` : `the disk holding ${path}`;
  switch (code) {
    case "ENOSPC":
      return `${where} is full (ENOSPC): free space on that disk`;
    case "EDQUOT":
      return `${where} is over its disk quota (EDQUOT): free space or raise the quota`;
    case "EROFS":
      return `${dir ? where : path} is on a read-only filesystem (EROFS): remount it read-write or set storage.dir to a writable directory`;
    case "EACCES":
    case "EPERM":
      return `${path} can't be written by this user (${code}): give the user running hub-agent write access to ${dir ?? "it"} (chown, chmod)`;
    case "ENOTDIR":
      return `${path} can't be written: a file is where a directory belongs on its path (ENOTDIR): move that file away`;
    case "EISDIR":
      return `${path} is a directory where hub-agent keeps a file (EISDIR): remove that directory`;
    case "ENOENT":
      return `${path} can't be created: a part of its path leads nowhere (ENOENT: a link to a missing directory, a disk not mounted): mount it or fix the link, or set storage.dir to another directory`;
    case "EEXIST":
      // Seen when the store's directory (or one inside it) is an existing file: may be the operator's own, so moved
      // away or pointed past, never deleted on our say-so.
      return `${path} is a file (or a link to nowhere) where hub-agent needs a directory (EEXIST): move it away, mount what it links to, or set storage.dir to another directory`;
    default:
      return `${path}: ${code}`;
  }
}

/** `e` as a StoreWriteError when it is one of the errno values above, else `e` unchanged. */
export function storeWriteError(e: unknown, path: string, dir: string): unknown {
  const code = (e as NodeJS.ErrnoException)?.code;
  if (e instanceof StoreWriteError || !code || !CODES.has(code)) return e;
  return new StoreWriteError(code, path, dir, { cause: e });
}

/** `e` as a StoreWriteError when creating the store's directory `dir` failed for one of isStoreDirErrno's reasons. */
export function storeDirError(e: unknown, dir: string): unknown {
  const code = (e as NodeJS.ErrnoException)?.code;
  if (code !== "ENOENT" || e instanceof StoreWriteError) return storeWriteError(e, dir, dir);
  return new StoreWriteError(code, dir, dir, { cause: e });
}

/**
 * The operator's line for a failure outside the store's own writes (a lock file, a directory that could not be
 * created): an errno error with a path becomes fsErrorLine, anything else undefined.
 */
export function describeFsError(e: unknown): string | undefined {
  if (e instanceof StoreWriteError) return e.message;
  const err = e as NodeJS.ErrnoException;
  return err?.code && CODES.has(err.code) && err.path ? fsErrorLine(err.code, err.path) : undefined;
}
