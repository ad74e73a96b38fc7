/**
 * The conformance suite every transport runs with its protocol-faithful fake server (like unstorage's testDriver):
 * command and reply, a wrong password, a large reply, concurrent commands, a server restart, close(), and the
 * hostile values (test/game/presets/hostile-values.ts) through the escaping of every preset that uses the transport.
 * A new transport adds one `testTransport(...)` call in conformance.test.ts.
 */
import { afterEach, describe, expect, test } from "bun:test";
import type { Preset } from "../../../lib/game/presets/types.ts";
import type { Transport, TransportError } from "../../../lib/game/transports/transport.ts";
import { HOSTILE, hostileCommands } from "../presets/hostile-values.ts";

/** A fake server started for one test. It answers `echo <text>` with `<text>`, `big` with `bigReply`, `slow` with
 * `slow reply` after 600 ms (a server that reads one request at a time answers the next one after it), and never
 * answers `hang`. */
export interface FakeConsole {
  /** A client of this server (a real transport) with this password. */
  client(password: string): Transport;
  /** Resolves once the server has received `command`. */
  received(command: string): Promise<void>;
  /** Every command the server has run, in order (as its console split them). */
  commands(): string[];
  /** The server restarts on the same address: connections drop, a command being answered gets no reply. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export interface TransportHarness {
  /** Starts a fake server whose password is `password` and whose `big` command answers `bigReply`. */
  start(opts: { password: string; bigReply: string }): Promise<FakeConsole>;
  /** The largest reply the protocol carries that this suite should check (bytes of text). */
  bigReplyChars: number;
  /** Per-command timeout for `hang` (UDP consoles end replies by a quiet period, so keep it above that). */
  hangTimeoutMs?: number;
  /** What the server runs for a command it is sent, where its console rewrites it (DarkPlaces: `$$` is `$`). */
  asRun?: (command: string) => string;
  /** The console's output in a reply, where the transport keeps each line's framing (econ: `[category]: `). */
  unframe?: (reply: string) => string;
  /** The presets whose commands travel over this transport (`consoles` in each preset). */
  presets: readonly Preset[];
}

/** The `echo` a transport sends to find where a reply ends (econ, DarkPlaces rcon). */
const MARKER = /^echo hub-?agent[-_][\w$-]+$/;

/** Lines with multi-byte characters, so packet boundaries can fall inside a character. */
function bigText(chars: number): string {
  const lines: string[] = [];
  for (let i = 0; lines.join("\n").length < chars; i++)
    lines.push(`${String(i).padStart(4, "0")} ä € — ${"x".repeat(i % 50)}`);
  return lines.join("\n");
}

/** A reply without the line break(s) ending it (and the space DarkPlaces' `echo` leaves before one). */
const trimmed = (reply: string) => reply.replace(/ ?\n+$/, "");

export function testTransport(name: string, harness: TransportHarness): void {
  const text = (reply: string) => trimmed(harness.unframe?.(reply) ?? reply);
  describe(`${name}: transport conformance`, () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const fn of cleanups.splice(0).reverse()) await fn();
    });
    const big = bigText(harness.bigReplyChars);
    const setup = async (password = "secret") => {
      const server = await harness.start({ password: "secret", bigReply: big });
      cleanups.push(() => server.close());
      const client = server.client(password);
      cleanups.push(() => client.close());
      return { server, client };
    };

    test("a command gets its reply", async () => {
      const { client } = await setup();
      expect(text(await client.send("echo hello world"))).toBe("hello world");
      expect(text(await client.send("echo again"))).toBe("again");
    });

    test("a wrong password is an auth error", async () => {
      const { client } = await setup("wrong");
      const err = (await client.send("echo secret?", { timeoutMs: 3000 }).catch((e) => e)) as TransportError;
      expect(err.code).toBe("auth");
    });

    test("a large reply arrives whole and exact", async () => {
      const { client } = await setup();
      expect(text(await client.send("big"))).toBe(big);
    });

    test("concurrent commands each get their own reply", async () => {
      const { client } = await setup();
      const words = ["one", "two", "three", "four", "five"];
      expect((await Promise.all(words.map((w) => client.send(`echo ${w}`)))).map(text)).toEqual(words);
    });

    test("a late reply of a command that timed out is not taken for the next command's", async () => {
      const { client } = await setup();
      const err = (await client.send("slow", { timeoutMs: 200 }).catch((e) => e)) as TransportError;
      expect(err.code).toBe("timeout");
      expect(text(await client.send("echo after", { timeoutMs: 5000 }))).toBe("after");
      await Bun.sleep(700); // whatever was left of "slow" has arrived meanwhile
      expect(text(await client.send("echo again", { timeoutMs: 5000 }))).toBe("again");
    });

    test("a server restart fails the command in flight (it may have run); the next command works", async () => {
      const { server, client } = await setup();
      expect(text(await client.send("echo before"))).toBe("before");
      const inFlight = client.send("hang", { timeoutMs: harness.hangTimeoutMs ?? 2000 }).catch((e) => e);
      await server.received("hang");
      await server.restart();
      const err = (await inFlight) as TransportError;
      expect(["disconnected", "timeout"]).toContain(err.code);
      expect(err.written).toBe(true);
      expect(text(await client.send("echo after", { timeoutMs: 5000 }))).toBe("after");
    });

    for (const preset of harness.presets) {
      test(`hostile values through the ${preset.name} preset's escaping arrive as one command each, as sent`, async () => {
        const { server, client } = await setup();
        const commands = new Map<string, string>(); // each distinct command once, with a value that makes it
        for (const value of HOSTILE) for (const c of await hostileCommands(preset, value)) commands.set(c, value);
        for (const [command, value] of commands) {
          const before = server.commands().length;
          await client.send(command);
          // The server ran exactly this command (its console split nothing off), byte for byte, besides the
          // transport's own reply markers.
          const ran = server
            .commands()
            .slice(before)
            .filter((c) => !MARKER.test(c));
          expect({ value, ran }).toEqual({ value, ran: [harness.asRun?.(command) ?? command] });
        }
        expect(text(await client.send("echo still here"))).toBe("still here");
      }, 30_000); // a UDP console ends each reply by a quiet period
    }

    test("close() fails the command in flight and every later one", async () => {
      const { server, client } = await setup();
      const inFlight = client.send("hang").catch((e: TransportError) => e.code);
      await server.received("hang");
      await client.close();
      expect(await inFlight).toBe("closed");
      expect(((await client.send("echo x").catch((e) => e)) as TransportError).code).toBe("closed");
    });
  });
}
