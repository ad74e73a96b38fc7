/**
 * `game.wrapper.command_pipe`: a server that reads its commands from a named pipe (the fake as armagetronad-dedicated
 * `--input <fifo>` does it: opened blocking before it is ready, then polled), and the pipe writer on its own.
 */
import { afterEach, describe, expect, test } from "bun:test";
import {
  chmodSync,
  chownSync,
  closeSync,
  constants,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  statSync,
  symlinkSync,
} from "node:fs";
import { writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { systemClock } from "../../../lib/clock.ts";
import { memoryLogger } from "../../../lib/log.ts";
import { openCommandPipe } from "../../../lib/game/wrap/command-pipe.ts";
import { until } from "../../agent/harness.ts";
import { cleanup, wrap } from "./harness.ts";

afterEach(cleanup);

const dir = () => mkdtempSync(join(tmpdir(), "hub-fifo-"));
/** The lines the fake read (--input), in order. */
const readLines = (file: string) =>
  existsSync(file)
    ? readFileSync(file, "utf8")
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l) as string)
    : [];

describe("a wrapped server reading its commands from a named pipe", () => {
  test("hub-agent creates the pipe (0600) and opens it before the server, which opens it blocking; commands and replies go through it, stdin gets nothing", async () => {
    const fifo = join(dir(), "console.fifo");
    const w = await wrap([`--command-pipe=${fifo}`], { commandPipe: fifo });
    const st = statSync(fifo);
    expect(st.isFIFO()).toBe(true);
    expect(st.mode & 0o777).toBe(0o600);
    // The fake's blocking open returns only once a writer holds the pipe: the ready line proves hub-agent did first.
    expect(await w.transport.send("say hello")).toBe("[CHAT] Server: hello");
    expect(await w.transport.send("join Alice")).toBe("Alice joined the game");
    expect(w.texts().filter((t) => t.startsWith("stdin:"))).toEqual([]);
  });

  test("a server not reading yet gets the commands once it reads; the stop command goes through the pipe too", async () => {
    const fifo = join(dir(), "console.fifo");
    const w = await wrap([`--command-pipe=${fifo}`], { commandPipe: fifo });
    await w.transport.send("pause 600");
    const started = performance.now();
    expect(await w.transport.send("join Bob")).toBe("Bob joined the game");
    expect(performance.now() - started).toBeGreaterThan(400);
    await w.server.stop();
    expect(w.has("Shutting down")).toBe(true); // `quit` arrived through the pipe: no SIGTERM needed
    expect(w.has("got SIGTERM")).toBe(false);
    expect(w.exits.at(-1)).toMatchObject({ code: 0, signal: null });
  });

  test("what a crashed server left unread in the pipe never runs on the next one", async () => {
    const d = dir();
    const fifo = join(d, "console.fifo");
    const input = join(d, "input");
    const w = await wrap([`--command-pipe=${fifo}`, `--input=${input}`], {
      commandPipe: fifo,
      restart: { delayMs: 100 },
    });
    await w.transport.send("pause 5000");
    // Written, never read: the server stops reading and then dies.
    const unread = w.transport.send("join Mallory", { timeoutMs: 3000 }).catch((e: Error) => e);
    await Bun.sleep(200);
    process.kill(w.server.pid as number, "SIGKILL");
    expect(((await unread) as Error).message).toContain("while a command ran");
    await until(() => w.events.filter((e) => e === "ready").length === 2, "the restart");
    expect(await w.transport.send("join Carol")).toBe("Carol joined the game");
    expect(readLines(input).filter((l) => l.startsWith("join"))).toEqual(["join Carol"]);
    expect(w.has("Mallory joined the game")).toBe(false);
  });

  test("a console reading its commands in pieces (ioq3) never gets a line cut through the pipe", async () => {
    const d = dir();
    const fifo = join(d, "console.fifo");
    const input = join(d, "input");
    // 128 bytes: a command of hub-agent's and its two markers fit, with a typed line they don't.
    const w = await wrap([`--command-pipe=${fifo}`, "--piece-bytes=128", `--input=${input}`], {
      commandPipe: fifo,
      readBytes: 128,
    });
    await w.transport.send("pause 400");
    // Both written while the console reads nothing (the typed line while the command awaits its reply): together
    // longer than one piece.
    const say = (c: string) => `say ${c.repeat(24)}`;
    const command = w.transport.send(say("a"), { timeoutMs: 3000 }).catch((e: Error) => e.message);
    await Bun.sleep(100);
    await Promise.all([command, w.transport.type(say("b"))]);
    expect(await command).toBe(`[CHAT] Server: ${"a".repeat(24)}`);
    // The typed line may go first (it never waits behind hub-agent's commands); neither is cut.
    const lines = readLines(input).filter((l) => !l.startsWith("echo ") && l !== "pause 400");
    expect(lines.sort()).toEqual([say("a"), say("b")]);
  }, 15_000);
});

describe("the command pipe writer", () => {
  const logger = memoryLogger();

  test("writes larger than the pipe arrive whole and in order while the reader is slow", async () => {
    const fifo = join(dir(), "p.fifo");
    const pipe = await openCommandPipe(fifo, { clock: systemClock, logger });
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const lines = Array.from({ length: 300 }, (_, i) => `say ${i} ${"x".repeat(1000)}`);
    for (const line of lines) expect(pipe.write(`${line}\n`)).toBe(true); // 300 KB: more than the pipe holds
    let got = "";
    const buf = Buffer.alloc(8192);
    await until(() => {
      try {
        got += buf.toString("utf8", 0, readSync(reader, buf)); // 8 KiB a look: a slow reader
      } catch {
        // EAGAIN
      }
      return got.length >= lines.join("\n").length + 1;
    }, "every line");
    expect(got.split("\n").slice(0, -1)).toEqual(lines);
    pipe.close();
    closeSync(reader);
  }, 20_000);

  test("a server that reads nothing: past 1 MiB waiting, writes are refused with one warning, and taken again once it reads", async () => {
    const fifo = join(dir(), "p.fifo");
    const log = memoryLogger();
    const pipe = await openCommandPipe(fifo, { clock: systemClock, logger: log });
    const chunk = `${"y".repeat(4095)}\n`;
    let accepted = 0;
    while (pipe.write(chunk)) accepted++;
    expect(accepted * chunk.length).toBeGreaterThan(1024 * 1024);
    expect(accepted * chunk.length).toBeLessThan(1024 * 1024 + 128 * 1024);
    expect(pipe.write(chunk)).toBe(false);
    const warnings = log.lines.filter((e) => e.level === "warn").map((e) => e.msg);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`the server reads nothing from its command pipe ${fifo}`);
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const buf = Buffer.alloc(65536);
    let read = 0;
    await until(() => {
      try {
        read += readSync(reader, buf);
      } catch {
        // EAGAIN
      }
      return read >= accepted * chunk.length;
    }, "everything accepted");
    expect(pipe.write("say back\n")).toBe(true);
    pipe.close();
    closeSync(reader);
  }, 20_000);

  test("a path that is no FIFO, or one every user may write to, is refused with one line naming the fix", async () => {
    const d = dir();
    const file = join(d, "console.txt");
    writeFileSync(file, "");
    const o = { clock: systemClock, logger };
    await expect(openCommandPipe(file, o)).rejects.toThrow(
      `game.wrapper.command_pipe = "${file}" is not a named pipe (FIFO): remove it (hub-agent then creates the pipe), or name another path`,
    );
    const open = join(d, "open.fifo");
    (await openCommandPipe(open, o)).close();
    chmodSync(open, 0o622);
    await expect(openCommandPipe(open, o)).rejects.toThrow(
      `game.wrapper.command_pipe = "${open}" can be written by every user on this machine, who could then type console commands: chmod go-w ${open}`,
    );
    if (process.getuid?.() === 0) {
      chmodSync(open, 0o600);
      chownSync(open, 65534, 65534); // nobody: could write to it, or chmod it
      await expect(openCommandPipe(open, o)).rejects.toThrow(
        `game.wrapper.command_pipe = "${open}" belongs to uid 65534, neither root nor hub-agent nor the server, who could type console commands: remove it (hub-agent then creates the pipe), or chown it`,
      );
      (await openCommandPipe(open, { ...o, owner: { uid: 65534, gid: 65534 } })).close(); // the server's own
    }
    const nowhere = join(d, "missing", "console.fifo");
    await expect(openCommandPipe(nowhere, o)).rejects.toThrow(
      `game.wrapper.command_pipe = "${nowhere}" can't be created (`,
    );
  });

  test("a FIFO its group may write to is refused: the server only reads it", async () => {
    const fifo = join(dir(), "console.fifo");
    const o = { clock: systemClock, logger };
    (await openCommandPipe(fifo, o)).close();
    chmodSync(fifo, 0o620);
    await expect(openCommandPipe(fifo, o)).rejects.toThrow(
      `game.wrapper.command_pipe = "${fifo}" can be written by every member of group ${statSync(fifo).gid}, who could then type console commands: chmod g-w ${fifo}`,
    );
  });

  test("a symbolic link is not followed, even to a FIFO hub-agent would take", async () => {
    const d = dir();
    const target = join(d, "real.fifo");
    (await openCommandPipe(target, { clock: systemClock, logger })).close();
    const link = join(d, "console.fifo");
    symlinkSync(target, link);
    await expect(openCommandPipe(link, { clock: systemClock, logger })).rejects.toThrow(
      `game.wrapper.command_pipe = "${link}" is a symbolic link, which hub-agent does not follow: whoever can change it could point it at another file: name the FIFO's own path`,
    );
  });

  test.skipIf(process.getuid?.() !== 0)(
    "as root: a link swapped in for the pipe hub-agent just created gets nothing chowned or opened",
    async () => {
      // The server's user owns the directory and wins the race: right after mkfifo, the path is a link to a file of
      // root's. A `mkfifo` first on PATH plays that part.
      const d = dir();
      const victim = join(d, "secret");
      writeFileSync(victim, "root's", { mode: 0o600 });
      const bin = join(d, "bin");
      mkdirSync(bin);
      writeFileSync(join(bin, "mkfifo"), `#!/bin/sh\nfor last; do :; done\nln -s ${victim} "$last"\n`, { mode: 0o755 });
      const fifo = join(d, "console.fifo");
      const path = process.env.PATH;
      process.env.PATH = `${bin}:${path}`;
      try {
        await expect(
          openCommandPipe(fifo, { owner: { uid: 65534, gid: 65534 }, clock: systemClock, logger }),
        ).rejects.toThrow(`game.wrapper.command_pipe = "${fifo}" is a symbolic link`);
      } finally {
        process.env.PATH = path;
      }
      expect(lstatSync(fifo).isSymbolicLink()).toBe(true); // the race was won
      expect(statSync(victim)).toMatchObject({ uid: 0, gid: 0 });
    },
  );
});
