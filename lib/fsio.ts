/**
 * The file operations of the store and the configuration, with node:fs/promises' names and signatures, done one
 * of two ways for the whole process:
 *
 * - **threaded** (the default): node:fs/promises, whose calls run on a thread pool. A long-running process (`run`,
 *   `demo`, `sandbox`) keeps it, so a slow or hung disk never stalls its event loop (kicks, chat, shutdown).
 * - **blocking**: the same calls through node:fs's synchronous functions. A one-shot command switches to it
 *   before it touches a file: it does a few dozen small operations and then exits, and starting the thread pool
 *   cold costs more than all of them (README, Performance: `queue status` and `ban` start about a quarter faster).
 *
 * Results and errors (`code`, `path`, `syscall`) are node's in both modes; only the waiting differs.
 */
import * as fs from "node:fs";
import type * as fsp from "node:fs/promises";

let blocking = false;

/** Every file operation of this process from now on blocks (or, with `false`, goes through the thread pool). */
export function useBlockingFileIo(on = true): void {
  blocking = on;
}

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
  "access" | "link" | "mkdir" | "readdir" | "readFile" | "rename" | "rm" | "stat" | "unlink" | "utimes" | "writeFile";

function either<K extends Name>(name: K): (typeof fsp)[K] {
  const sync = fs[`${name}Sync`] as (...args: unknown[]) => unknown;
  const call = (...args: unknown[]) =>
    blocking
      ? settled(() => sync(...args))
      : promises().then((p) => (p[name] as (...args: unknown[]) => Promise<unknown>)(...args));
  return call as (typeof fsp)[K];
}

export const access = either("access");
export const mkdir = either("mkdir");
export const readdir = either("readdir");
export const readFile = either("readFile");
export const rename = either("rename");
export const rm = either("rm");
export const stat = either("stat");
export const unlink = either("unlink");
export const link = either("link");
export const utimes = either("utimes");
export const writeFile = either("writeFile");

/** What the store does with an open file. */
export interface FileHandle {
  writeFile(data: string | Uint8Array): Promise<void>;
  readFile(): Promise<Buffer>;
  sync(): Promise<void>;
  stat(): Promise<fs.Stats>;
  close(): Promise<void>;
}

export function open(path: string, flags: string, mode?: number): Promise<FileHandle> {
  if (!blocking) return promises().then((p) => p.open(path, flags, mode));
  return settled(() => {
    const fd = fs.openSync(path, flags, mode);
    return {
      writeFile: (data) => settled(() => fs.writeFileSync(fd, data)),
      readFile: () => settled(() => fs.readFileSync(fd)),
      sync: () => settled(() => fs.fsyncSync(fd)),
      stat: () => settled(() => fs.fstatSync(fd)),
      close: () => settled(() => fs.closeSync(fd)),
    };
  });
}
