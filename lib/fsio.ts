/**
 * The file operations of the store and the configuration, with node:fs/promises' names and signatures, done one
 * of two ways for the whole process:
 *
 * - **threaded** (the default): node:fs/promises, whose calls run on a thread pool. A long-running process (`run`,
 *   `demo`, `sandbox`) keeps it, so a slow or hung disk never stalls its event loop (kicks, chat, shutdown).
 * - **blocking**: the same calls through node:fs's synchronous functions. A one-shot command switches to it
 *   before it touches a file: it does a few dozen small operations and then exits, and starting the thread pool
 *   cold costs more than all of them (docs/performance.md: `queue status` and `ban` start about a quarter faster).
 *
 * Results and errors (`code`, `path`, `syscall`) are node's in both modes; only the waiting differs.
 */
import * as fs from "node:fs";
import type * as fsp from "node:fs/promises";
import { atMost } from "./serial.ts";

let blocking = false;

/** Every file operation of this process from now on blocks (or, with `false`, goes through the thread pool). */
export function useBlockingFileIo(on = true): void {
  blocking = on;
}

/** Whether file operations block now (a one-shot command's mode, set at its start). */
export const fileIoBlocks = (): boolean => blocking;

let threaded: Promise<typeof fsp> | undefined;
const promises = () => (threaded ??= import("node:fs/promises"));

/** A synchronous call as a promise: its value, or its exception as the rejection. */
function settled<T>(call: () => T): Promise<T> {
  try {
    return Promise.resolve(call());
  } catch (e) {
    return Promise.reject(e);
  }
}

type Name =
  | "access"
  | "chmod"
  | "link"
  | "lstat"
  | "mkdir"
  | "readdir"
  | "readFile"
  | "readlink"
  | "rename"
  | "rm"
  | "rmdir"
  | "stat"
  | "unlink"
  | "utimes"
  | "writeFile";

function either<K extends Name>(name: K): (typeof fsp)[K] {
  const sync = fs[`${name}Sync`] as (...args: unknown[]) => unknown;
  const call = (...args: unknown[]) =>
    blocking
      ? settled(() => sync(...args))
      : promises().then((p) => (p[name] as (...args: unknown[]) => Promise<unknown>)(...args));
  return call as (typeof fsp)[K];
}

export const access = either("access");
export const chmod = either("chmod");
export const lstat = either("lstat");
export const rmdir = either("rmdir");
export const mkdir = either("mkdir");
export const readdir = either("readdir");
export const readFile = either("readFile");
export const readlink = either("readlink");
export const rename = either("rename");
export const rm = either("rm");
export const stat = either("stat");
export const unlink = either("unlink");
export const link = either("link");
export const utimes = either("utimes");
export const writeFile = either("writeFile");

/** Whether anything is at `path` (a missing path or one that can't be looked at: false). */
export const exists = (path: string): Promise<boolean> =>
  stat(path).then(
    () => true,
    () => false,
  );

/** What the store does with an open file. */
export interface FileHandle {
  writeFile(data: string | Uint8Array): Promise<void>;
  readFile(): Promise<Buffer>;
  sync(): Promise<void>;
  stat(): Promise<fs.Stats>;
  close(): Promise<void>;
}

/** What a call on a closed handle rejects with, as node's FileHandle does (`code` EBADF, the call as `syscall`). */
function closedError(syscall: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`EBADF: bad file descriptor, ${syscall}`), { code: "EBADF", errno: -9, syscall });
}

/**
 * The runtime runs threaded file calls on one thread a CPU. An fsync can hold its thread for 100 ms and more on a busy
 * disk, so at most one fewer than that sync at once: a burst of durable writes (a minute's playtime counters of
 * every server of a host, a drain) always leaves a thread for the reads a kick waits on (the handed-over ban). With
 * every thread in an fsync, each server of a 10-server host waited, and a kick took up to 400 ms (bench:host).
 */
const syncSlot = atMost(Math.max(1, (globalThis.navigator?.hardwareConcurrency ?? 2) - 1));

export function open(path: string, flags: string | number, mode?: number): Promise<FileHandle> {
  if (!blocking)
    return promises()
      .then((p) => p.open(path, flags, mode))
      .then((fh) => ({
        writeFile: (data) => fh.writeFile(data),
        readFile: () => fh.readFile(),
        sync: () => syncSlot(() => fh.sync()),
        stat: () => fh.stat(),
        close: () => fh.close(),
      }));
  return settled(() => {
    // The number is forgotten at close, like node's FileHandle: once closed, the kernel hands it to the next file
    // opened, and a late write, fsync or second close must fail or do nothing, never reach that other file.
    let fd: number | undefined = fs.openSync(path, flags, mode);
    const use = <T>(syscall: string, call: (fd: number) => T) =>
      settled(() => {
        if (fd === undefined) throw closedError(syscall);
        return call(fd);
      });
    return {
      writeFile: (data) => use("writeFile", (n) => fs.writeFileSync(n, data)),
      readFile: () => use("readFile", (n) => fs.readFileSync(n)),
      sync: () => use("fsync", (n) => fs.fsyncSync(n)),
      stat: () => use("fstat", (n) => fs.fstatSync(n)),
      close: () =>
        settled(() => {
          if (fd === undefined) return;
          const n = fd;
          fd = undefined;
          fs.closeSync(n);
        }),
    };
  });
}

/** O_NOATIME where the system has it (Linux); 0 elsewhere. */
const NOATIME: number = fs.constants.O_NOATIME ?? 0;

/**
 * Opens a file of the process's own to read without touching its access time. On a file system mounted `relatime`
 * (the default), the first read after each rewrite writes the inode's atime, and that write waits for the file
 * system's journal like any other: a busy disk stalls it for up to a second, and a `ban` reading the online list
 * `run` rewrites every status round waited so (bench:host). O_NOATIME needs the file's owner, which the store's files
 * have (lib/store/secure.ts); a file of another user (EPERM) is opened as usual.
 */
export async function openToRead(path: string): Promise<FileHandle> {
  if (NOATIME)
    try {
      return await open(path, fs.constants.O_RDONLY | NOATIME);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EPERM") throw e;
    }
  return open(path, "r");
}

/** A file of the process's own, read whole without touching its access time (openToRead). */
export async function readOwnFile(path: string): Promise<Buffer> {
  const fh = await openToRead(path);
  try {
    return await fh.readFile();
  } finally {
    await fh.close();
  }
}
