import { afterEach, describe, expect, test } from "bun:test";
import { memoryLogger } from "../../../lib/log.ts";
import { Q3Rcon, type Q3RconOptions } from "../../../lib/game/transports/q3-rcon.ts";
import type { TransportError } from "../../../lib/game/transports/transport.ts";
import { FakeQ3Server, type FakeQ3Options } from "./fake-q3-server.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function setup(server: FakeQ3Options = {}, client: Partial<Q3RconOptions> = {}) {
  const fake = await FakeQ3Server.start(server);
  cleanups.push(() => fake.close());
  const rcon = new Q3Rcon({ host: fake.host, port: fake.port, password: "secret", quietMs: 50, ...client });
  cleanups.push(() => rcon.close());
  return { fake, rcon };
}

const STATUS = `map: oa_dm1
num score ping name            lastmsg address               qport rate
--- ----- ---- --------------- ------- --------------------- ----- -----
  0     0    0 Sarge^7               0 bot                       0 16384
`;

describe("Q3Rcon", () => {
  test("keeps under ioq3's rate limit, which drops the requests over it unanswered", async () => {
    // ioq3's limit (10, then one a second) five times faster; the client paced to match.
    const rateLimit = { burst: 10, periodMs: 200 };
    const { fake, rcon } = await setup(
      { rateLimit, handler: (c) => `${c}\n` },
      { quietMs: 20, rate: { burst: 8, periodMs: 200 } },
    );
    const commands = Array.from({ length: 16 }, (_, i) => `echo ${i}`);
    const started = performance.now();
    expect(await Promise.all(commands.map((c) => rcon.send(c)))).toEqual(commands.map((c) => `${c}\n`));
    expect(fake.dropped).toBe(0);
    expect(performance.now() - started).toBeGreaterThanOrEqual((16 - 8 - 1) * 200); // waited, after the burst
    // Unpaced, the same server drops requests (and the command times out).
    const { fake: other, rcon: unpaced } = await setup(
      { rateLimit },
      { quietMs: 20, timeoutMs: 500, rate: { burst: 100, periodMs: 1 } },
    );
    const results = await Promise.all(
      commands.map((c) =>
        unpaced.send(c).then(
          () => "ok",
          (e: TransportError) => e.code,
        ),
      ),
    );
    expect(results.filter((r) => r === "timeout").length).toBeGreaterThan(0);
    expect(other.dropped).toBeGreaterThan(0);
  });

  test("sends `rcon <password> <command>` and returns a one-datagram print reply", async () => {
    const { fake, rcon } = await setup({ handler: (c) => (c === "status" ? STATUS : "?\n") });
    expect(await rcon.send("status")).toBe(STATUS);
    expect(fake.commands).toEqual(["status"]);
    expect(fake.datagramsSent).toBe(1);
  });

  test("gathers a reply spread over several datagrams", async () => {
    const lines = Array.from({ length: 200 }, (_, i) => `line ${i} ClientUserinfoChanged: ${i} n\\Bot${i}\\t\\0\n`);
    const { fake, rcon } = await setup({ handler: () => lines.join("") });
    expect(await rcon.send("dump")).toBe(lines.join(""));
    expect(fake.datagramsSent).toBeGreaterThan(3);
    // The next command starts clean.
    expect(await rcon.send("echo")).toBe(lines.join(""));
  });

  test("concurrent sends are serialised, each getting its own reply", async () => {
    const { rcon } = await setup({ handler: (c) => `said ${c}\n` });
    expect(await Promise.all(["say a", "say b", "say c"].map((c) => rcon.send(c)))).toEqual([
      "said say a\n",
      "said say b\n",
      "said say c\n",
    ]);
  });

  test("a bad password is a clear auth error", async () => {
    const logger = memoryLogger();
    const { fake, rcon } = await setup({}, { password: "hunter2", logger });
    const err = (await rcon.send("status").catch((e) => e)) as TransportError;
    expect(err.code).toBe("auth");
    expect(err.message).toContain(`${fake.host}:${fake.port}`);
    expect(err.message).toContain("password");
    expect(fake.commands).toEqual([]);
    expect(JSON.stringify(logger.lines)).not.toContain("hunter2");
  });

  test("times out when the server never answers", async () => {
    const { rcon } = await setup({ silent: true });
    const err = (await rcon.send("status", { timeoutMs: 200 }).catch((e) => e)) as TransportError;
    expect(err.code).toBe("timeout");
    expect(err.message).toContain("status");
  });

  test("rejects what ioq3 can't take", async () => {
    const { fake, rcon } = await setup();
    expect(((await rcon.send("say a\nquit").catch((e) => e)) as TransportError).code).toBe("invalid");
    expect(((await rcon.send("x".repeat(1100)).catch((e) => e)) as TransportError).code).toBe("invalid");
    expect(() => new Q3Rcon({ host: fake.host, port: fake.port, password: "two words" })).toThrow("whitespace");
  });
});
