import { afterEach, describe, expect, test } from "bun:test";
import { Buffer } from "node:buffer";
import * as net from "node:net";
import { type Clock, ManualClock, systemClock } from "../../../lib/clock.ts";
import { memoryLogger } from "../../../lib/log.ts";
import { SourceRcon, type SourceRconOptions } from "../../../lib/game/transports/source-rcon.ts";
import { MAX_REPLY_CHARS, type TransportError, type TransportState } from "../../../lib/game/transports/transport.ts";
import { FakeSourceRconServer, type FakeSourceRconOptions } from "./fake-source-rcon-server.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function setup(server: FakeSourceRconOptions = {}, client: Partial<SourceRconOptions> = {}) {
  const fake = await FakeSourceRconServer.start(server);
  cleanups.push(() => fake.close());
  const rcon = new SourceRcon({
    host: fake.host,
    port: fake.port,
    password: "secret",
    dialect: fake.dialect,
    backoff: { initialMs: 10, maxMs: 50 },
    ...client,
  });
  cleanups.push(() => rcon.close());
  return { fake, rcon };
}

/** 12 KiB+ with multi-byte characters, so packet boundaries can fall inside a character. */
function bigText(): string {
  const lines: string[] = [];
  for (let i = 0; lines.join("\n").length < 12_400; i++)
    lines.push(`${String(i).padStart(4, "0")} §a cvar_ä € — ${"x".repeat(i % 50)}`);
  return lines.join("\n");
}

const handler = (big: string) => async (command: string) => {
  if (command === "big") return big;
  if (command === "hang") return new Promise<string>(() => {});
  if (command.startsWith("slow ")) await new Promise((r) => setTimeout(r, 5));
  return command.split(" ").slice(1).join(" ");
};

for (const dialect of ["source", "minecraft"] as const) {
  describe(`SourceRcon (${dialect} dialect)`, () => {
    test("authenticates (including srcds' double auth reply) and runs a command", async () => {
      const states: TransportState[] = [];
      const { fake, rcon } = await setup({ dialect });
      rcon.on("state", (s) => states.push(s));
      expect(await rcon.send("echo hello world")).toBe("hello world");
      expect(fake.authAttempts).toBe(1);
      expect(states).toEqual(["connecting", "connected"]);
    });

    test("a wrong password is a clear error and is not retried", async () => {
      const logger = memoryLogger();
      const errors: (Error | undefined)[] = [];
      const { fake, rcon } = await setup({ dialect }, { password: "hunter2", logger });
      rcon.on("state", (s, e) => s === "closed" && errors.push(e));
      const err = (await rcon.send("echo hi").catch((e) => e)) as TransportError;
      expect(err.code).toBe("auth");
      expect(err.message).toContain(`${fake.host}:${fake.port}`);
      expect(err.message).toContain("password is wrong");
      expect(errors).toEqual([err]);
      // A second send fails at once with the same error instead of hammering the server (srcds bans IPs).
      expect(await rcon.send("echo again").catch((e) => e)).toBe(err);
      expect(fake.authAttempts).toBe(1);
      expect(fake.commands).toEqual([]);
      expect(JSON.stringify(logger.lines)).not.toContain("hunter2");
    });

    for (const writeMode of ["packet", "coalesce", "split"] as const) {
      test(`reassembles a multi-packet 12 KiB reply exactly (${writeMode} writes)`, async () => {
        const big = bigText();
        const { fake, rcon } = await setup({ dialect, writeMode, handler: handler(big) });
        expect(await rcon.send("big")).toBe(big);
        // The next command gets its own reply: nothing of the big one leaks into it.
        expect(await rcon.send("echo after")).toBe("after");
        expect(await rcon.send("echo")).toBe("");
        expect(fake.badReads).toBe(0);
      });
    }

    test("a reply of exactly 2 × 4096 characters ends correctly", async () => {
      const exact = "y".repeat(8192);
      const { fake, rcon } = await setup({ dialect, maxBody: 4096, handler: () => exact });
      expect(await rcon.send("exact")).toBe(exact);
      expect(await rcon.send("exact")).toBe(exact);
      expect(fake.badReads).toBe(0);
    });

    test("concurrent sends each get their own reply", async () => {
      const { fake, rcon } = await setup({ dialect, writeMode: "coalesce", handler: handler("") });
      const words = ["a", "b", "c", "d", "e", "f"];
      const replies = await Promise.all(words.map((w) => rcon.send(`slow ${w}`)));
      expect(replies).toEqual(words);
      expect(fake.commands).toEqual(words.map((w) => `slow ${w}`));
      expect(fake.connections).toBe(1);
    });

    test("a server restart fails the command in flight, then the client reconnects", async () => {
      const { fake, rcon } = await setup({ dialect, handler: handler("") });
      expect(await rcon.send("echo before")).toBe("before");
      const inFlight = rcon.send("hang").catch((e: TransportError) => e);
      const queued = rcon.send("echo queued");
      await fake.received("hang");
      await fake.restart();
      const err = (await inFlight) as TransportError;
      expect(err.code).toBe("disconnected");
      expect(err.written).toBe(true); // it reached the server: it may have run
      expect(err.message).toContain(`${fake.host}:${fake.port}`);
      // Not retried: the command may already have run. The queued one was never sent, so it goes out now.
      expect(await queued).toBe("queued");
      expect(await rcon.send("echo after")).toBe("after");
      expect(fake.commands.filter((c) => c === "hang")).toHaveLength(1);
      expect(fake.connections).toBe(2);
    });

    test("a command that gets no reply times out, and the next one still works", async () => {
      const { fake, rcon } = await setup({ dialect, handler: handler("") });
      const err = (await rcon.send("hang", { timeoutMs: 150 }).catch((e) => e)) as TransportError;
      expect(err.code).toBe("timeout");
      expect(err.written).toBe(true);
      expect(err.message).toContain("hang");
      expect(await rcon.send("echo next")).toBe("next");
      expect(fake.connections).toBe(2);
    });

    test("times out with the connection error when the server is down", async () => {
      const { fake, rcon } = await setup({ dialect });
      await fake.close();
      const err = (await rcon.send("echo hi", { timeoutMs: 200 }).catch((e) => e)) as TransportError;
      expect(err.code).toBe("timeout");
      expect(err.written).toBe(false); // never sent: safe to send again
      expect(err.message).toContain("not connected");
    });

    test("rejects commands over the protocol limit and NUL bytes without sending", async () => {
      const { fake, rcon } = await setup({ dialect });
      const limit = dialect === "minecraft" ? 1446 : 4086;
      expect(((await rcon.send("x".repeat(limit + 1)).catch((e) => e)) as TransportError).code).toBe("invalid");
      expect(((await rcon.send("a\0b").catch((e) => e)) as TransportError).code).toBe("invalid");
      expect(await rcon.send(`echo ${"z".repeat(limit - 5)}`)).toBe("z".repeat(limit - 5));
      expect(fake.commands).toHaveLength(1);
    });

    test("a reply past MAX_REPLY_CHARS fails with a clear error; the connection is reset for the next command", async () => {
      const flood = "A".repeat(MAX_REPLY_CHARS + 4096);
      const { fake, rcon } = await setup({ dialect, handler: (c) => (c === "flood" ? flood : handler("")(c)) });
      const err = (await rcon.send("flood", { timeoutMs: 20_000 }).catch((e) => e)) as TransportError;
      expect(err.code).toBe("protocol");
      expect(err.message).toContain(`the reply to "flood" passed ${MAX_REPLY_CHARS} bytes`);
      // What was left of the flood went with the old connection: the next reply is the next command's own.
      expect(await rcon.send("echo next")).toBe("next");
      expect(fake.connections).toBe(2);
    }, 30_000);

    test("close() fails queued and in-flight commands", async () => {
      const { fake, rcon } = await setup({ dialect, handler: handler("") });
      const states: TransportState[] = [];
      rcon.on("state", (s) => states.push(s));
      const inFlight = rcon.send("hang").catch((e: TransportError) => e.code);
      const queued = rcon.send("echo never").catch((e: TransportError) => e.code);
      await fake.received("hang");
      await rcon.close();
      expect(await inFlight).toBe("closed");
      expect(await queued).toBe("closed");
      expect(((await rcon.send("echo x").catch((e) => e)) as TransportError).code).toBe("closed");
      expect(states.at(-1)).toBe("closed");
    });
  });
}

describe("SourceRcon (source dialect specifics)", () => {
  test("works without the double auth reply too", async () => {
    const { rcon } = await setup({ dialect: "source", doubleAuthReply: false });
    expect(await rcon.send("echo single")).toBe("single");
  });

  test("handles small packets split across many segments", async () => {
    const big = bigText();
    const { rcon } = await setup({ dialect: "source", writeMode: "split", maxBody: 700, handler: handler(big) });
    expect(await rcon.send("big")).toBe(big);
  });

  test("a server that answers one command with packet after packet of 1 MiB is cut off at MAX_REPLY_CHARS", async () => {
    const frame = (id: number, type: number, body: Buffer) => {
      const head = Buffer.alloc(12);
      head.writeInt32LE(body.length + 10, 0);
      head.writeInt32LE(id, 4);
      head.writeInt32LE(type, 8);
      return Buffer.concat([head, body, Buffer.from([0, 0])]);
    };
    // Answers auth, then the command with 64 packets just under the reader's 1 MiB limit each, and no end.
    const server = net.createServer((s) => {
      let buf = Buffer.alloc(0);
      s.on("data", (c: Buffer) => {
        buf = Buffer.concat([buf, c]);
        while (buf.length >= 4 && buf.length >= 4 + buf.readInt32LE(0)) {
          const [id, type] = [buf.readInt32LE(4), buf.readInt32LE(8)];
          buf = buf.subarray(4 + buf.readInt32LE(0));
          if (type === 3) s.write(frame(id, 2, Buffer.alloc(0)));
          else if (type === 2) for (let i = 0; i < 64; i++) s.write(frame(id, 0, Buffer.alloc(1024 * 1024 - 16, 0x41)));
        }
      });
      s.on("error", () => {});
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    cleanups.push(() => new Promise((r) => server.close(() => r())));
    const port = (server.address() as net.AddressInfo).port;
    const rcon = new SourceRcon({ host: "127.0.0.1", port, password: "x", timeoutMs: 20_000 });
    cleanups.push(() => rcon.close());
    const err = (await rcon.send("status").catch((e) => e)) as TransportError;
    expect(err.code).toBe("protocol");
    expect(err.message).toContain(`passed ${MAX_REPLY_CHARS} bytes`);
  }, 30_000);

  test("idle-period end detection, for servers that mishandle the terminator packet", async () => {
    const big = bigText();
    const { rcon } = await setup({ dialect: "source", handler: handler(big) }, { end: { idleMs: 50 } });
    expect(await rcon.send("big")).toBe(big);
    expect(await rcon.send("echo next")).toBe("next");
  });
});

describe("SourceRcon (connection management)", () => {
  test("connect() connects ahead of the first command", async () => {
    const { fake, rcon } = await setup();
    await rcon.connect();
    expect(rcon.state).toBe("connected");
    expect(fake.authAttempts).toBe(1);
  });

  test("after a rejected password, one new attempt is made only once authRetryMs has passed", async () => {
    const clock = new ManualClock();
    const { fake, rcon } = await setup({}, { password: "new-pass", clock, authRetryMs: 300_000 });
    expect(((await rcon.send("echo 1").catch((e) => e)) as TransportError).code).toBe("auth");
    await clock.advance(60_000);
    expect(((await rcon.send("echo 2").catch((e) => e)) as TransportError).code).toBe("auth");
    expect(fake.authAttempts).toBe(1);
    fake.password = "new-pass"; // the operator fixed the server
    await clock.advance(240_000);
    expect(await rcon.send("echo 3")).toBe("3");
    expect(fake.authAttempts).toBe(2);
  });

  test("reconnect attempts back off exponentially up to maxMs, and report each failure", async () => {
    const backoffs: number[] = [];
    // Records the backoff sleeps (the small values); timeouts use the big ones.
    const clock: Clock = {
      now: systemClock.now,
      monotonic: systemClock.monotonic,
      sleep: (ms, signal) => (ms < 100 && backoffs.push(ms), systemClock.sleep(ms, signal)),
    };
    const { fake, rcon } = await setup({}, { clock, backoff: { initialMs: 1, maxMs: 8 } });
    await fake.close();
    const failures: Error[] = [];
    const enough = new Promise<void>((resolve) =>
      rcon.on("state", (s, e) => {
        if (s === "connecting" && e) failures.push(e);
        if (failures.length === 6) resolve();
      }),
    );
    const pending = rcon.send("echo hi", { timeoutMs: 10_000 }).catch((e: TransportError) => e.code);
    await enough;
    expect(backoffs.slice(0, 5)).toEqual([1, 2, 4, 8, 8]);
    expect(failures[0]?.message).toContain(`${fake.host}:${fake.port}`);
    await rcon.close();
    expect(await pending).toBe("closed");
  });

  test("why the minecraft dialect never sends the terminator behind a command: vanilla drops the connection", async () => {
    const { fake, rcon } = await setup({ dialect: "minecraft" }, { end: "terminator" });
    expect(((await rcon.send("echo hi").catch((e) => e)) as TransportError).code).toBe("disconnected");
    expect(fake.badReads).toBe(1);
  });
});
