/**
 * The kick line: a `ban` typed beside a running `run` tells it whom it bans before writing anything, over a socket in
 * the storage directory, and `run` kicks the player at once. Creating a file waits for the file system's journal,
 * which every process on the disk shares; a stalled journal held kicks for up to 1.2 s (docs/performance.md). The
 * socket needs no disk, so the kick waits for none; the queue entry, its handover note and the delivery follow as
 * before (handoff.ts), and `run` does not kick twice.
 *
 * The kick comes before the entry is durable, as it came before its flush: a command that then fails to queue
 * (a full disk) has kicked a player it did not ban, and says so. The ban is enforced locally only, as a queued ban
 * enforced now would be (console, CLI): a line whose ban `run` would not enforce from its queue kicks nobody, nor one
 * `run` reads more than a second after the ban was issued (an unban may have come since: the queue decides). Only
 * the storage directory's owner can reach the socket (the directory is 0700, the socket 0600); `run` reads one line
 * of at most MAX_LINE bytes per connection and checks it like a queue entry.
 */
import * as v from "valibot";
import { BanEntrySchema, type BanEntry } from "./schemas.ts";

export const KICK_SOCKET = "kick.sock";
/** A Unix socket's path holds at most 107 bytes: a storage directory deeper than that has no kick line. */
const MAX_SOCKET_PATH = 107;
export const MAX_LINE = 16 * 1024;
/** How long a command tries to reach `run`'s socket before it goes on without it (the note still kicks). */
const SEND_MS = 100;

export const KickLineSchema = v.object({ ban: BanEntrySchema });

/** The socket's path in `dir`, or undefined when it would be too long for one. */
export function kickSocketPath(dir: string): string | undefined {
  const path = `${dir}/${KICK_SOCKET}`;
  return new TextEncoder().encode(path).length <= MAX_SOCKET_PATH ? path : undefined;
}

/**
 * Sends `ban` to the `run` listening in `dir`; true once the line is on its way (handed to the kernel). Never throws
 * and never waits for `run`: false (no socket, no `run`, too slow) leaves the kick to the handover note.
 */
export async function sendKick(dir: string, ban: BanEntry): Promise<boolean> {
  const path = kickSocketPath(dir);
  if (!path) return false;
  const line = new TextEncoder().encode(`${JSON.stringify({ ban })}\n`);
  if (line.length > MAX_LINE) return false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), SEND_MS)));
  try {
    return await Promise.race([send(path, line), late]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/** Bun's own socket (node:net costs a compiled command ~4 ms to load); node:net elsewhere (Deno). */
async function send(path: string, line: Uint8Array): Promise<boolean> {
  if ("Bun" in globalThis) {
    const socket = await Bun.connect({ unix: path, socket: { data() {}, error() {} } });
    const written = socket.write(line);
    socket.end();
    return written === line.length;
  }
  const net = await import("node:net");
  return new Promise<boolean>((resolve, reject) => {
    const socket = net.createConnection({ path }, () => socket.end(line, () => resolve(true)));
    socket.once("error", reject);
  });
}
