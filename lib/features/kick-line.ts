/**
 * `run`'s end of the desk line (lib/sanctions/kick-line.ts): a socket in the storage directory on which a `ban` beside
 * `run` names the player it bans before writing anything (`run` kicks them at once: `kick`), and any command then
 * hands its queue entry over (`take`, answered on the same connection: handoffs.ts). At most two lines of at most
 * MAX_LINE bytes per connection, each checked like a queue entry; a bad line is logged and changes nothing. Where no
 * socket can be made (a path too long, a runtime or file system without Unix sockets), the note alone kicks and
 * hands over, as before. When `run` stops, the connections still waiting are closed: their commands hand over by
 * note, to the `run` that follows (a reload) or to themselves (the process gone).
 */
import { type Socket, createServer } from "node:net";
import * as v from "valibot";
import type { FeatureContext } from "../feature.ts";
import { chmod, unlink } from "../fsio.ts";
import type { Logger } from "../log.ts";
import { teardownsByKey } from "../serial.ts";
import {
  KickLineSchema,
  MAX_LINE,
  TakeLineSchema,
  type TakeLine,
  kickSocketPath,
  lineCutter,
} from "../sanctions/kick-line.ts";
import type { BanEntry } from "../sanctions/schemas.ts";

/** A command that connects and says nothing is let go after this long. */
const IDLE_MS = 2_000;
/**
 * A line says what a command is queueing now. One read later than this after its ban was issued (`run`'s event loop
 * held: a stopped process, a stalled disk) is passed over: the ban may have been lifted meanwhile, and only the
 * queue knows (the entry's handover note kicks from it). A line from the future is no command's either.
 */
const FRESH_MS = 1_000;

/**
 * This process's kick-line sockets being taken down, by path: an agent that starts again on the same directory waits
 * for its predecessor's (as lib/store/instance.ts `releasing` does for the lock).
 */
const closing = teardownsByKey();

/** Answers the command that handed an entry over; false when it hung up (the answer then goes by file). */
export type Reply = (answer: object) => boolean;

export async function listenKicks(
  agent: FeatureContext,
  log: Logger,
  kick: (ban: BanEntry) => Promise<void>,
  take: (t: TakeLine, reply: Reply) => Promise<void>,
): Promise<void> {
  const { scheduler } = agent;
  const path = kickSocketPath(agent.deps.store.dir);
  if (!path) {
    log.debug("the storage directory's path is too long for the kick line's socket; kicks wait for the queue entry");
    return;
  }
  // Not there: nothing to remove. Never a blocking call: a stalled disk must not hold `run`'s event loop.
  const removeSocket = () => unlink(path).catch(() => {});
  // This process's previous agent on the directory (a reload, a host restarting the server): its socket gone first,
  // or its removal would take this one's. Then one left by a `run` that was killed: this process holds the
  // storage directory's instance lock now.
  await closing.settled(path);
  await removeSocket();
  if (scheduler.stopped) return;
  const fresh = (ban: BanEntry) => {
    const age = agent.deps.clock.now() - Date.parse(ban.created_on);
    if (Math.abs(age) <= FRESH_MS) return true;
    const when = age > 0 ? `${Math.round(age)} ms old` : `dated ${Math.round(-age)} ms ahead`;
    log.info(`a kick line ${when} was passed over: the ban's queue entry decides`, {
      id: ban.target.identifier ?? ban.target.user_id,
    });
    return false;
  };
  const open = new Set<Socket>();
  // None once stopping: the socket stays open until its path is gone (below), and the game may be gone already.
  const server = createServer((socket) => {
    if (scheduler.stopped) return socket.destroy();
    open.add(socket);
    socket.on("close", () => open.delete(socket));
    readLines(socket, log, {
      kick: (ban) => {
        if (!scheduler.stopped && fresh(ban)) void scheduler.run("kick-line", () => kick(ban));
      },
      take: (t, reply) => {
        if (scheduler.stopped) return socket.destroy();
        void scheduler.run("sanction-handoffs", () => take(t, reply));
      },
    });
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(path, () => resolve());
    });
    await chmod(path, 0o600);
  } catch (e) {
    server.close();
    // Said once a start: something in the socket's place (a directory), or a file system without sockets.
    log.warn(
      `no kick line at ${path} (${(e as Error).message}): kicks of a \`ban\` typed beside this run wait for its queue entry; remove what is at that path, or give storage.dir a local file system`,
    );
    return;
  }
  server.on("error", (e) => log.warn(`the kick line failed: ${e.message}; kicks wait for the queue entry`));
  const stop = () => {
    for (const socket of open) socket.destroy();
    // close() removes the socket's path itself, with an unlink on the event loop (Bun's and Deno's alike), which a
    // stalled disk holds: the path goes on the thread pool first, so close() finds nothing there to remove.
    const closed = closing.track(
      path,
      removeSocket().then(() => void server.close()),
    );
    void scheduler.run("kick-line", () => closed); // the stop waits for it, on its budget
  };
  // A stop that came while the socket was being made (its listen, its chmod) closes it now.
  if (scheduler.stopped) stop();
  else scheduler.signal.addEventListener("abort", stop, { once: true });
}

/**
 * Reads a connection's lines (at most two: a kick, then a take; each at most MAX_LINE bytes), checks each, and hands
 * it on. A connection that hands an entry over waits for its answer without the idle limit; after it, or after a bad
 * line, nothing more is read.
 */
function readLines(
  socket: Socket,
  log: Logger,
  on: { kick(ban: BanEntry): void; take(t: TakeLine, reply: Reply): void },
): void {
  let lines = 0;
  let taken = false;
  const reply: Reply = (answer) => {
    if (socket.destroyed || !socket.writable) return false;
    socket.end(`${JSON.stringify(answer)}\n`);
    return true;
  };
  // After a take, or two lines, not even the start of another is read.
  const done = () => taken || lines >= 2;
  const refuseMore = () => {
    log.warn("a kick line was refused: a line after the connection's last");
    socket.destroy();
  };
  const line = (text: string) => {
    if (socket.destroyed) return;
    if (done()) return refuseMore();
    lines++;
    const got = parse(text);
    if (!got.ok) {
      log.warn(`a kick line was refused: ${got.error}`);
      return socket.destroy();
    }
    if ("ban" in got && lines === 1) return on.kick(got.ban);
    if ("take" in got) {
      taken = true;
      socket.setTimeout(0);
      return on.take(got.take, reply);
    }
    log.warn("a kick line was refused: a second ban on one connection");
    socket.destroy();
  };
  socket.setTimeout(IDLE_MS, () => socket.destroy());
  socket.on("error", () => socket.destroy());
  const cut = lineCutter(MAX_LINE, {
    line,
    tooLong: () => {
      log.warn(`a kick line longer than ${MAX_LINE} bytes was refused`);
      socket.destroy();
    },
  });
  socket.on("data", (data: Uint8Array) => {
    if (socket.destroyed) return;
    if (done()) return refuseMore();
    cut(data);
  });
}

function parse(
  line: string,
): { ok: true; ban: BanEntry } | { ok: true; take: TakeLine } | { ok: false; error: string } {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    return { ok: false, error: "not JSON" };
  }
  const firstIssue = (issues: [v.BaseIssue<unknown>, ...v.BaseIssue<unknown>[]]) =>
    v.summarize(issues).split("\n")[0] ?? "invalid";
  if (json && typeof json === "object" && "take" in json) {
    const t = v.safeParse(TakeLineSchema, json);
    return t.success ? { ok: true, take: t.output.take } : { ok: false, error: firstIssue(t.issues) };
  }
  const r = v.safeParse(KickLineSchema, json);
  return r.success ? { ok: true, ban: r.output.ban } : { ok: false, error: firstIssue(r.issues) };
}
