/**
 * `run`'s end of the kick line (lib/sanctions/kick-line.ts): a socket in the storage directory on which a `ban` beside
 * `run` names the player it bans before writing anything; `run` kicks them at once (`kick`), then takes the entry and
 * its handover note as before. One line of at most MAX_LINE bytes per connection, checked like a queue entry; one bad
 * line is logged and changes nothing. Where no socket can be made (a path too long, a runtime or file system
 * without Unix sockets), the note alone kicks, as before.
 */
import { type Socket, createServer } from "node:net";
import * as v from "valibot";
import type { FeatureContext } from "../feature.ts";
import { chmod, unlink } from "../fsio.ts";
import type { Logger } from "../log.ts";
import { teardownsByKey } from "../serial.ts";
import { KickLineSchema, MAX_LINE, kickSocketPath } from "../sanctions/kick-line.ts";
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

export async function listenKicks(
  agent: FeatureContext,
  log: Logger,
  kick: (ban: BanEntry) => Promise<void>,
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
  // None once stopping: the socket stays open until its path is gone (below), and the game may be gone already.
  const server = createServer((socket) =>
    scheduler.stopped
      ? socket.destroy()
      : readLine(socket, log, (ban) => {
          if (!scheduler.stopped && fresh(ban)) void scheduler.run("kick-line", () => kick(ban));
        }),
  );
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

/** Reads one line of at most MAX_LINE bytes from `socket`, checks it, and hands its ban to `kick`. */
function readLine(socket: Socket, log: Logger, kick: (ban: BanEntry) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  socket.setTimeout(IDLE_MS, () => socket.destroy());
  socket.on("error", () => socket.destroy());
  socket.on("data", (chunk: Buffer) => {
    const end = chunk.indexOf(0x0a);
    chunks.push(end < 0 ? chunk : chunk.subarray(0, end));
    size += end < 0 ? chunk.length : end;
    if (size > MAX_LINE) {
      log.warn(`a kick line longer than ${MAX_LINE} bytes was refused`);
      return socket.destroy();
    }
    if (end < 0) return;
    socket.destroy();
    const ban = parse(Buffer.concat(chunks).toString("utf8"));
    if (ban.ok) kick(ban.ban);
    else log.warn(`a kick line was refused: ${ban.error}`);
  });
}

function parse(line: string): { ok: true; ban: BanEntry } | { ok: false; error: string } {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    return { ok: false, error: "not JSON" };
  }
  const r = v.safeParse(KickLineSchema, json);
  if (!r.success) return { ok: false, error: v.summarize(r.issues).split("\n")[0] ?? "invalid" };
  return { ok: true, ban: r.output.ban };
}
