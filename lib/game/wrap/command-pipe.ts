/**
 * `game.wrapper.command_pipe`: a server that reads its console commands from a named pipe (FIFO), not stdin
 * (armagetronad-dedicated `--input <fifo>`). hub-agent writes there everything it would write to stdin: its
 * commands with their markers, the operator's typed lines, the stop command (docs/game-consoles.md §2.3).
 *
 * - **Created** by hub-agent if missing, mode 0600 and owned by the server's user, before the server starts. An
 *   existing path must be a FIFO itself (not a symbolic link), owned by root, hub-agent's user or the server's, that
 *   only its owner can write to: whoever can write to it (or chmod it) types console commands.
 * - **Checked on what was opened**, never on the path again: the directory may be the server's, whose user could swap
 *   the path between a look and a use. So the path is opened without following a symbolic link (root opening a
 *   device through a planted link could set it off), the open file is checked, and a pipe hub-agent created is
 *   given to the server's user through that file, never by its path (a link put there meanwhile would give away
 *   whatever it points to).
 * - **Opened before the server starts, read-write and non-blocking**, and held for the whole run. A server that
 *   opens its end blocking (armagetronad does) does not wait for a writer, one that reads never sees end-of-file
 *   while hub-agent runs, and hub-agent never blocks on it: opening write-only would block until the server opens
 *   it (or fail with ENXIO when non-blocking), and a blocking write would stall hub-agent on a full pipe.
 * - **Writes are never torn or reordered.** A write the pipe can't take whole (the server is not reading yet, or
 *   not fast enough) keeps its rest, and everything after it waits behind it, retried every 50 ms. Up to 1 MiB
 *   waits; beyond that a write is refused (the command fails, not run) and the log says the server does not read.
 * - **At the server's exit** whatever it left unread is discarded and hub-agent's end closed, as the end of a
 *   process's stdin discards what it did not read: a command the old server never read does not run on the next one.
 */
import { execFile } from "node:child_process";
import { closeSync, constants, fchownSync, fstatSync, openSync, readSync, writeSync } from "node:fs";
import type { Clock } from "../../clock.ts";
import { childEnv } from "../../child-env.ts";
import { lstat } from "../../fsio.ts";
import type { Logger } from "../../log.ts";
import { errorMessage } from "../transports/transport.ts";
import { WrapperSetupError } from "./setup-error.ts";

export interface CommandPipe {
  /** Queues `text` for the server; false when it can't be taken (closed, or the server reads none of it). */
  write(text: string): boolean;
  /** Discards what the server left unread and closes hub-agent's end (idempotent). */
  close(): void;
}

const RETRY_MS = 50;
/** How much may wait for the pipe beyond what the pipe itself holds (64 KiB on Linux). */
const MAX_WAITING = 1024 * 1024;

/** Creates the FIFO if missing (owned by `owner`), opens it, checks it; rejects with one line naming the fix. */
export async function openCommandPipe(
  path: string,
  o: { owner?: { uid: number; gid: number }; clock: Clock; logger: Logger },
): Promise<CommandPipe> {
  const key = keyOf(path);
  if (process.platform === "win32") throw new WrapperSetupError(`${key}: Windows has no FIFOs`, "remove the key");
  const existing = await lstat(path).catch(() => undefined);
  if (existing?.isSymbolicLink()) throw symlinkRefusal(path);
  if (!existing) await mkfifo(path, key);
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDWR | constants.O_NONBLOCK | constants.O_NOFOLLOW | constants.O_NOCTTY);
  } catch (e) {
    // ELOOP: a link put there since the look.
    if ((e as NodeJS.ErrnoException).code === "ELOOP") throw symlinkRefusal(path);
    throw new WrapperSetupError(`${key} can't be opened (${errorMessage(e)})`, "make it a FIFO hub-agent can write");
  }
  try {
    const st = fstatSync(fd); // what was opened, not what the path names by now
    const refused = refusal(path, st, o.owner?.uid);
    if (refused) throw refused;
    // Created by hub-agent (owned by it, not yet the server's): given through the open file.
    if (!existing && o.owner && st.uid !== o.owner.uid) fchownSync(fd, o.owner.uid, o.owner.gid);
  } catch (e) {
    closeSync(fd);
    if (e instanceof WrapperSetupError) throw e;
    throw new WrapperSetupError(`${key} can't be given to the server's user (${errorMessage(e)})`, "chown it");
  }
  return new FifoWriter(fd, path, o.clock, o.logger);
}

const keyOf = (path: string) => `game.wrapper.command_pipe = ${JSON.stringify(path)}`;

const symlinkRefusal = (path: string) =>
  new WrapperSetupError(
    `${keyOf(path)} is a symbolic link, which hub-agent does not follow: whoever can change it could point it at another file`,
    "name the FIFO's own path",
  );

/** `doctor`: whether `path` would be refused (nothing there yet is fine: it is created at start). */
export async function checkCommandPipe(path: string, serverUid?: number): Promise<WrapperSetupError | undefined> {
  const st = await lstat(path).catch(() => undefined);
  if (st?.isSymbolicLink()) return symlinkRefusal(path);
  return st && refusal(path, st, serverUid);
}

/** A path that is no FIFO, or one someone else than root, hub-agent or the server could write to. */
function refusal(
  path: string,
  st: { isFIFO(): boolean; mode: number; uid: number; gid: number },
  serverUid?: number,
): WrapperSetupError | undefined {
  const key = keyOf(path);
  if (!st.isFIFO()) {
    return new WrapperSetupError(
      `${key} is not a named pipe (FIFO)`,
      "remove it (hub-agent then creates the pipe), or name another path",
    );
  }
  if (![0, process.getuid?.(), serverUid].includes(st.uid)) {
    return new WrapperSetupError(
      `${key} belongs to uid ${st.uid}, neither root nor hub-agent nor the server, who could type console commands`,
      "remove it (hub-agent then creates the pipe), or chown it",
    );
  }
  if (st.mode & 0o002) {
    return new WrapperSetupError(
      `${key} can be written by every user on this machine, who could then type console commands`,
      `chmod go-w ${path}`,
    );
  }
  // The server only reads it: a group's other members have no business writing there.
  if (st.mode & 0o020) {
    return new WrapperSetupError(
      `${key} can be written by every member of group ${st.gid}, who could then type console commands`,
      `chmod g-w ${path}`,
    );
  }
  return undefined;
}

class FifoWriter implements CommandPipe {
  #fd: number | undefined;
  #waiting: Buffer[] = [];
  #waitingBytes = 0;
  #retry?: AbortController;
  #warned = false;

  constructor(
    fd: number,
    readonly path: string,
    private clock: Clock,
    private logger: Logger,
  ) {
    this.#fd = fd;
  }

  write(text: string): boolean {
    if (this.#fd === undefined) return false;
    const bytes = Buffer.from(text);
    if (this.#waitingBytes + bytes.length > MAX_WAITING) {
      if (!this.#warned) {
        this.#warned = true;
        this.logger.warn(
          `the server reads nothing from its command pipe ${this.path} (${this.#waitingBytes} bytes wait for it): commands fail until it does`,
        );
      }
      return false;
    }
    this.#waiting.push(bytes);
    this.#waitingBytes += bytes.length;
    this.#flush();
    return true;
  }

  close(): void {
    const fd = this.#fd;
    if (fd === undefined) return;
    this.#fd = undefined;
    this.#retry?.abort();
    this.#waiting = [];
    this.#waitingBytes = 0;
    try {
      // At most what a pipe can hold (1 MiB at Linux's largest): the server is gone, nobody adds to it.
      const sink = Buffer.alloc(64 * 1024);
      for (let i = 0; i < 16 && readSync(fd, sink) > 0; i++);
    } catch {
      // EAGAIN: empty
    }
    closeSync(fd);
  }

  /** Writes what the pipe takes now, in order; the rest is tried again shortly. */
  #flush(): void {
    const fd = this.#fd;
    if (fd === undefined || this.#retry) return;
    while (this.#waiting.length) {
      const head = this.#waiting[0] as Buffer;
      let n: number;
      try {
        n = writeSync(fd, head);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === "EAGAIN") break; // full: the server reads later
        this.logger.warn(`writing to the command pipe ${this.path} failed: ${errorMessage(e)}`);
        return this.close();
      }
      this.#waitingBytes -= n;
      if (n < head.length) {
        this.#waiting[0] = head.subarray(n); // only a write larger than the kernel's atomic size is cut
        break;
      }
      this.#waiting.shift();
    }
    if (!this.#waiting.length) {
      this.#warned = false;
      return;
    }
    const retry = (this.#retry = new AbortController());
    this.clock.sleep(RETRY_MS, retry.signal).then(
      () => {
        this.#retry = undefined;
        this.#flush();
      },
      () => {}, // closed
    );
  }
}

/** `mkfifo -m 0600` (node has no mkfifo of its own); openCommandPipe gives it to the server's user. */
function mkfifo(path: string, key: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile("mkfifo", ["-m", "0600", "--", path], { timeout: 10_000, env: childEnv() }, (error, _out, stderr) => {
      if (error) {
        const why = String(stderr).trim() || errorMessage(error);
        return reject(
          new WrapperSetupError(`${key} can't be created (${why})`, "create it with mkfifo, or fix the path"),
        );
      }
      resolve();
    });
  });
}
