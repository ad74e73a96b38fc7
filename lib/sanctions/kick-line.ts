/**
 * The desk line: a command beside a running `run` talks to it over a socket in the storage directory. A `ban` first
 * names whom it bans (the kick line), before writing anything, and `run` kicks the player at once: creating a file
 * waits for the file system's journal, which every process on the disk shares, and a stalled journal held kicks for
 * up to 1.2 s (docs/performance.md). Then, its entry in place, the command hands it over on the same connection
 * (`take`) and `run` answers there with the entry's fate (handoff.ts): no note, no answer file, no folder to watch,
 * and a `run` that dies hangs up, which the command sees at once.
 *
 * The kick comes before the entry is durable, as it came before its flush: a command that then fails to queue
 * (a full disk) has kicked a player it did not ban, and says so. The ban is enforced locally only, as a queued ban
 * enforced now would be (console, CLI): a line whose ban `run` would not enforce from its queue kicks nobody, nor one
 * `run` reads more than a second after the ban was issued (an unban may have come since: the queue decides). Only
 * the storage directory's owner can reach the socket (the directory is 0700, the socket 0600); `run` reads at most
 * two lines of at most MAX_LINE bytes per connection and checks each like a queue entry.
 */
import * as v from "valibot";
import { NOTE_ID } from "../store/index.ts";
import { BanEntrySchema, type BanEntry } from "./schemas.ts";

export const KICK_SOCKET = "kick.sock";
/** A Unix socket's path holds at most 107 bytes: a storage directory deeper than that has no desk line. */
const MAX_SOCKET_PATH = 107;
export const MAX_LINE = 16 * 1024;
/** The longest answer a command reads: a fate holds the entry and VyHub's record of the sanction. */
const MAX_ANSWER = 256 * 1024;
/** How long a command tries to reach `run`'s socket before it goes on without it (the note then hands over). */
const CONNECT_MS = 100;

export const KickLineSchema = v.object({ ban: BanEntrySchema });
export const TakeLineSchema = v.object({
  take: v.object({
    kind: v.picklist(["ban", "unban", "warning"]),
    id: v.pipe(v.string(), v.regex(NOTE_ID)), // a queue entry's id, as the note that hands it over names it
    pid: v.number(),
  }),
});
export type TakeLine = v.InferOutput<typeof TakeLineSchema>["take"];

/** The socket's path in `dir`, or undefined when it would be too long for one. */
export function kickSocketPath(dir: string): string | undefined {
  const path = `${dir}/${KICK_SOCKET}`;
  return new TextEncoder().encode(path).length <= MAX_SOCKET_PATH ? path : undefined;
}

/** A command's connection to `run`. */
export interface DeskLine {
  /** Sends one line; true once it is on its way (handed to the kernel). */
  send(message: { ban: BanEntry } | { take: TakeLine }): boolean;
  /** `run`'s answer line; "closed" when `run` hung up first (or the answer was too long), "late" after `ms`. */
  answer(ms: number): Promise<string | "closed" | "late">;
  close(): void;
}

/** Connects to the `run` listening in `dir`; undefined (no socket, no `run`, too slow) leaves it to the note. Never throws. */
export async function openLine(dir: string): Promise<DeskLine | undefined> {
  const path = kickSocketPath(dir);
  if (!path) return undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), CONNECT_MS)));
  const opening = connectLine(path);
  try {
    const line = await Promise.race([opening, late]);
    if (!line) void opening.then((l) => l?.close()).catch(() => {});
    return line;
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

/** Announces `ban` on a line of its own: true once it is on its way (the tests' and a caller's without a handover). */
export async function sendKick(dir: string, ban: BanEntry): Promise<boolean> {
  const line = await openLine(dir);
  if (!line) return false;
  try {
    return line.send({ ban });
  } finally {
    line.close();
  }
}

/** The line over Bun's own socket (node:net costs a compiled command ~4 ms to load); node:net elsewhere (Deno). */
async function connectLine(path: string): Promise<DeskLine> {
  const reader = answerReader();
  if ("Bun" in globalThis) {
    const socket = await Bun.connect({
      unix: path,
      socket: { data: (_s, chunk) => reader.data(chunk), close: () => reader.end(), error: () => reader.end() },
    });
    return {
      send: (m) => {
        const bytes = encode(m);
        return bytes !== undefined && socket.write(bytes) === bytes.length;
      },
      answer: reader.answer,
      close: () => socket.end(),
    };
  }
  const net = await import("node:net");
  const socket = await new Promise<import("node:net").Socket>((resolve, reject) => {
    const s = net.createConnection({ path }, () => resolve(s));
    s.once("error", reject);
  });
  socket.on("data", (chunk: Uint8Array) => reader.data(chunk));
  socket.on("close", () => reader.end());
  socket.on("error", () => reader.end());
  return {
    send: (m) => {
      const bytes = encode(m);
      return bytes !== undefined && !socket.destroyed && (socket.write(bytes), true);
    },
    answer: reader.answer,
    close: () => socket.end(),
  };
}

const encode = (m: object): Uint8Array | undefined => {
  const bytes = new TextEncoder().encode(`${JSON.stringify(m)}\n`);
  return bytes.length <= MAX_LINE ? bytes : undefined;
};

/** Collects `run`'s one answer line (at most MAX_ANSWER bytes) and hands it to whoever waits for it. */
function answerReader() {
  let result: string | "closed" | undefined;
  let waiting: ((r: string | "closed") => void) | undefined;
  const settle = (r: string | "closed") => {
    if (result !== undefined) return;
    result = r;
    waiting?.(r);
  };
  return {
    data: lineCutter(MAX_ANSWER, { line: settle, tooLong: () => settle("closed") }),
    end: () => settle("closed"),
    answer: (ms: number) =>
      new Promise<string | "closed" | "late">((resolve) => {
        if (result !== undefined) return resolve(result);
        const timer = setTimeout(() => resolve("late"), Math.max(0, ms));
        waiting = (r) => {
          clearTimeout(timer);
          resolve(r);
        };
      }),
  };
}

/**
 * Cuts a connection's bytes into lines of at most `max` bytes (the line break not counted): `line` gets each one
 * whole, decoded; `tooLong` is told once a line passes `max`, and nothing more is cut. Both ends of the desk line.
 */
export function lineCutter(
  max: number,
  on: { line(text: string): void; tooLong(): void },
): (chunk: Uint8Array) => void {
  let parts: Uint8Array[] = [];
  let size = 0;
  let over = false;
  return (data) => {
    for (let chunk = data; !over;) {
      const end = chunk.indexOf(0x0a);
      const part = end < 0 ? chunk : chunk.subarray(0, end);
      size += part.length;
      if (size > max) {
        over = true;
        return on.tooLong();
      }
      parts.push(part);
      if (end < 0) return;
      const text = new TextDecoder().decode(concatBytes(parts));
      parts = [];
      size = 0;
      chunk = chunk.subarray(end + 1);
      on.line(text);
      if (!chunk.length) return;
    }
  };
}

/** One array of `parts`' bytes (no Buffer: Deno has none outside node: modules). */
function concatBytes(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
