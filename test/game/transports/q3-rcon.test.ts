import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { memoryLogger } from "../../../lib/log.ts";
import { Q3Rcon, type Q3RconOptions } from "../../../lib/game/transports/q3-rcon.ts";
import type { TransportError } from "../../../lib/game/transports/transport.ts";
import { spawn } from "../../support/procs.ts";
import { connectedUdpOf } from "../../support/sockets.ts";
import { FakeQ3Server, type FakeQ3Options } from "./fake-q3-server.ts";
import { ATTACKERS, type Attacker, strays } from "./udp-fake.ts";

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
    const commands = Array.from({ length: 16 }, (_, i) => `say ${i}`);
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
    expect(fake.commands).toEqual(["status", expect.stringMatching(/^echo hubagent_[0-9a-f]{12}$/)]);
    expect(fake.datagramsSent).toBe(2); // the reply, and the echo of the marker that ends it
  });

  test("gathers a reply spread over several datagrams", async () => {
    const lines = Array.from({ length: 200 }, (_, i) => `line ${i} ClientUserinfoChanged: ${i} n\\Bot${i}\\t\\0\n`);
    const { fake, rcon } = await setup({ handler: () => lines.join("") });
    expect(await rcon.send("dump")).toBe(lines.join(""));
    expect(fake.datagramsSent).toBeGreaterThan(3);
    // The next command starts clean.
    expect(await rcon.send("again")).toBe(lines.join(""));
  });

  test("a reply of 120 KB, flushed at once (OpenArena's `fdir *`), arrives whole", async () => {
    const files = Array.from({ length: 4095 }, (_, i) => `textures/gothic_block/file_${i}.jpg\n`).join("");
    const { fake, rcon } = await setup({ handler: () => `${files}4095 files listed\n` });
    expect(await rcon.send("fdir *")).toBe(`${files}4095 files listed\n`);
    expect(fake.datagramsSent).toBeGreaterThan(120);
  });

  test("a reply past maxReplyBytes (MAX_REPLY_CHARS) fails; what is left of it is dropped before the next reply", async () => {
    const flood = Array.from({ length: 300 }, (_, i) => `flood ${i} ${"x".repeat(90)}\n`).join("");
    const { rcon } = await setup(
      { handler: (c) => (c === "flood" ? flood : `${c} done\n`) },
      { maxReplyBytes: 10_000 },
    );
    const err = (await rcon.send("flood").catch((e) => e)) as TransportError;
    expect(err.code).toBe("protocol");
    expect(err.message).toContain('the reply to "flood" passed 10000 bytes');
    expect(await rcon.send("fast")).toBe("fast done\n");
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

  test("a late reply of a command that timed out is not taken for the next command's", async () => {
    const { fake, rcon } = await setup({
      handler: async (c) => {
        if (c === "slow") await Bun.sleep(400); // the server's one thread: what comes next waits
        return `${c} done\n`;
      },
    });
    expect(((await rcon.send("slow", { timeoutMs: 150 }).catch((e) => e)) as TransportError).code).toBe("timeout");
    // A marker sent before "fast" dropped what was left of "slow" (the server answered it first).
    expect(await rcon.send("fast")).toBe("fast done\n");
    expect(await rcon.send("fast")).toBe("fast done\n");
    expect(fake.commands.slice(0, 3)).toEqual(["slow", expect.stringMatching(/^echo hubagent_/), "fast"]);
  });

  test("a reply's end is its marker's echo: no quiet period to wait, and a reply slower than one still arrives whole", async () => {
    const loading = Array.from({ length: 40 }, (_, i) => `Loading shader ${i} of 40 ...\n`).join("");
    const { fake, rcon } = await setup(
      {
        handler: async (c, print) => {
          if (c !== "map oa_dm2") return "?\n";
          // A map change prints (more than a datagram holds), loads for a while, and prints again.
          print(loading);
          await Bun.sleep(600);
          return "map loaded\n";
        },
      },
      { quietMs: 250 },
    );
    const t0 = performance.now();
    expect(await rcon.send("echo quick")).toBe("quick\n");
    expect(performance.now() - t0).toBeLessThan(200);
    const sent = fake.datagramsSent;
    expect(await rcon.send("map oa_dm2")).toBe(`${loading}map loaded\n`);
    expect(fake.datagramsSent - sent).toBeGreaterThan(2); // flushed while loading, at the end, and the marker's echo
  });

  test("rejects what ioq3 can't take", async () => {
    const { fake, rcon } = await setup();
    expect(((await rcon.send("say a\nquit").catch((e) => e)) as TransportError).code).toBe("invalid");
    expect(((await rcon.send("x".repeat(1100)).catch((e) => e)) as TransportError).code).toBe("invalid");
    expect(() => new Q3Rcon({ host: fake.host, port: fake.port, password: "two words" })).toThrow("whitespace");
  });
});

describe("Q3Rcon takes replies only from the game", () => {
  const STATUS_FORGED = `map: oa_dm1
num score ping name            lastmsg address               qport rate
--- ----- ---- --------------- ------- --------------------- ----- -----
  1     0    0 Mallory^7             0 bot                       0 16384
`;
  const CHAT_FORGED = "say: Admin: !ban Victim perm forged\n";

  for (const { where, host, at } of ATTACKERS) {
    test(`from ${where}: a forged status row or chat line never joins a reply, and under Bun none reaches the process`, async () => {
      const logger = memoryLogger();
      let attacker: Attacker | undefined;
      const { fake, rcon } = await setup(
        {
          host,
          handler: async (c) => {
            if (c !== "status") return "?\n";
            // Forged datagrams, sent to the client before the server's own reply.
            await attacker!.send(fake.client!, `print\n${STATUS_FORGED}`);
            await attacker!.send(fake.client!, `print\n${CHAT_FORGED}`);
            await Bun.sleep(30);
            return STATUS;
          },
        },
        { logger },
      );
      attacker = await at(fake.port);
      cleanups.push(() => attacker!.close());
      for (let i = 0; i < 3; i++) expect(await rcon.send("status")).toBe(STATUS);
      expect(attacker.sent).toBe(6);
      // The kernel dropped them (the socket is connected to the game), so the check in user space saw none.
      expect(strays(logger.lines)).toEqual([]);
      const game = host === "::1" ? `[::1]:${fake.port}` : `127.0.0.1:${fake.port}`;
      expect(connectedUdpOf(process.pid).filter((s) => s.endsWith(` → ${game}`))).toHaveLength(1);
    });

    test(`from ${where}: empty prints every 150 ms don't keep a reply open`, async () => {
      const { fake, rcon } = await setup({ host, handler: (c) => `${c} done\n` }, { quietMs: 250, timeoutMs: 2000 });
      expect(await rcon.send("say first")).toBe("say first done\n");
      const attacker = await at(fake.port);
      cleanups.push(() => attacker.close());
      attacker.flood(fake.client!, "print\n", 150);
      for (const c of ["clientkick 1", "say hello", "status"]) {
        const t0 = performance.now();
        expect(await rcon.send(c)).toBe(`${c} done\n`);
        expect(performance.now() - t0).toBeLessThan(1000);
      }
    });
  }

  test("a name resolves to its IPv4 address first, an IPv6 address in any spelling is the one replies come from", async () => {
    const v4 = await setup({}, { host: "localhost" });
    expect(await v4.rcon.send("echo four")).toBe("four\n");
    expect(connectedUdpOf(process.pid)).toContain(`127.0.0.1:${v4.fake.client!.port} → 127.0.0.1:${v4.fake.port}`);
    const logger = memoryLogger();
    const v6 = await setup({ host: "::1" }, { host: "0:0:0:0:0:0:0:1", logger });
    expect(await v6.rcon.send("echo six")).toBe("six\n");
    expect(strays(logger.lines)).toEqual([]);
  });

  test("an unspecified address (0.0.0.0, ::) is this host's loopback, where the replies come from", async () => {
    for (const [game, configured] of [
      ["127.0.0.1", "0.0.0.0"],
      ["::1", "::"],
    ] as const) {
      const logger = memoryLogger();
      const { fake, rcon } = await setup({ host: game }, { host: configured, logger, timeoutMs: 2000 });
      expect(await rcon.send("echo here")).toBe("here\n");
      expect(fake.client?.address).toBe(game);
      expect(strays(logger.lines)).toEqual([]);
    }
  });

  test("a name that doesn't resolve fails the command, naming it, as not sent", async () => {
    const rcon = new Q3Rcon({ host: "no-such-host.invalid", port: 27960, password: "secret", timeoutMs: 20_000 });
    cleanups.push(() => rcon.close());
    const err = (await rcon.send("status").catch((e) => e)) as TransportError;
    expect(err.code).toBe("disconnected");
    expect(err.written).toBe(false);
    expect(err.message).toContain("can't resolve no-such-host.invalid");
  }, 30_000);

  test("under Deno, which doesn't pass the connect on to the kernel, the check in user space drops the forgeries", async () => {
    const deno = join(import.meta.dir, "..", "..", "..", "node_modules", ".bin", "deno");
    const { code, out, err } = await script([deno, "run", "-A", join(import.meta.dir, "spoof-under-deno.ts")]);
    expect({ code, err }).toEqual({ code: 0, err: "" });
    const result = JSON.parse(out) as { replies: string[]; sent: number; warnings: { count: number; from: string }[] };
    expect(result.replies).toEqual([STATUS, STATUS, STATUS]);
    expect(result.sent).toBeGreaterThan(0);
    // Datagrams reached the process there, and were dropped and reported once (with their count).
    expect(result.warnings).toEqual([{ count: 1, from: expect.stringMatching(/^127\.0\.0\.2:\d+$/) }]);
  }, 30_000);
});

// A mount namespace of its own gives a child process an /etc/hosts of the test's (root, as in .ci/run).
const namespaces = process.getuid?.() === 0 && Bun.spawnSync(["unshare", "-m", "true"]).exitCode === 0;
if (!namespaces) console.warn("SKIPPED: the test of a game whose name moves: needs root and unshare -m (util-linux)");

describe("Q3Rcon follows a game whose name moves", () => {
  test.skipIf(!namespaces)(
    "after a command met silence, the name is resolved again and the next goes to the new address",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "hub-hosts-"));
      cleanups.push(async () => rmSync(dir, { recursive: true }));
      const hosts = join(dir, "hosts");
      writeFileSync(hosts, "");
      const { code, out, err } = await script([
        "unshare",
        "-m",
        "sh",
        "-c",
        'mount --bind "$1" /etc/hosts && exec "$2" "$3"',
        "sh",
        hosts,
        process.execPath,
        join(import.meta.dir, "moved-game.ts"),
      ]);
      expect({ code, err }).toEqual({ code: 0, err: "" });
      expect(JSON.parse(out)).toEqual({
        replies: ["say one\n", "error: timeout", "say three\n", "say four\n"],
        before: ["say one"],
        after: ["say three", "say four"],
        said: ["rcon: game.test now resolves to 127.0.0.2 (was 127.0.0.1)"],
      });
    },
    30_000,
  );
});

/** Runs a helper script to its end: its exit code, standard output and standard error. */
async function script(cmd: string[]): Promise<{ code: number; out: string; err: string }> {
  const proc = spawn(cmd, { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, out, err };
}
