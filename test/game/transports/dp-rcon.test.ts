import { afterEach, describe, expect, test } from "bun:test";
import { hmacMd4, md4 } from "../../../lib/game/transports/md4.ts";
import { DpRcon, type DpRconOptions } from "../../../lib/game/transports/dp-rcon.ts";
import type { TransportError } from "../../../lib/game/transports/transport.ts";
import { memoryLogger } from "../../../lib/log.ts";
import { connectedUdpOf } from "../../support/sockets.ts";
import { FakeDpServer, type FakeDpOptions } from "./fake-dp-server.ts";
import { ATTACKERS, type Attacker, strays } from "./udp-fake.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function setup(server: FakeDpOptions = {}, client: Partial<DpRconOptions> = {}) {
  const fake = await FakeDpServer.start(server);
  cleanups.push(() => fake.close());
  const rcon = new DpRcon({ host: fake.host, port: fake.port, password: "secret", probeMs: 300, ...client });
  cleanups.push(() => rcon.close());
  return { fake, rcon };
}

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
const bytes = (s: string) => new TextEncoder().encode(s);

describe("MD4 and HMAC-MD4", () => {
  test("RFC 1320's test suite", () => {
    const suite: [string, string][] = [
      ["", "31d6cfe0d16ae931b73c59d7e0c089c0"],
      ["a", "bde52cb31de33e46245e05fbdbd6fb24"],
      ["abc", "a448017aaf21d8525fc10ae87aa6729d"],
      ["message digest", "d9130a8164549fe818874806e1c7014b"],
      ["abcdefghijklmnopqrstuvwxyz", "d79e1c308aa5bbcdeea8ed63df412da9"],
      ["ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", "043f8582f241db351ce627e153e7f0e4"],
      [
        "12345678901234567890123456789012345678901234567890123456789012345678901234567890",
        "e33b4ddc9c38f2199c3e7b164fcc0536",
      ],
    ];
    for (const [input, digest] of suite) expect({ input, digest: hex(md4(bytes(input))) }).toEqual({ input, digest });
  });

  test("every length around the block edges agrees with Bun's native MD4", () => {
    for (let n = 0; n < 200; n++) {
      const data = Uint8Array.from({ length: n }, (_, i) => (i * 31 + n) & 0xff);
      expect(hex(md4(data))).toBe(new Bun.CryptoHasher("md4").update(data).digest("hex"));
    }
  });

  test("HMAC-MD4 agrees with Bun's native HMAC for short, block-sized and long keys", () => {
    for (const key of ["", "secret", "k".repeat(64), "k".repeat(65), "ä".repeat(100)]) {
      const message = bytes(`1700000000.123456 echo x\0say "${key.length}"`);
      const native = new Bun.CryptoHasher("md4", key).update(message).digest("hex");
      expect({ key, mac: hex(hmacMd4(bytes(key), message)) }).toEqual({ key, mac: native });
    }
  });
});

describe("DpRcon", () => {
  test("a reply spread over several datagrams (flushed inside lines and characters) arrives whole", async () => {
    const lines = Array.from({ length: 300 }, (_, i) => `${i} :join:${i}:${i}:bot:Bøt ${"x".repeat(i % 40)}\n`);
    const { fake, rcon } = await setup({ handler: () => lines.join("") });
    expect(await rcon.send("dump")).toBe(lines.join(""));
    expect(fake.replies.at(-1)).toBeGreaterThan(5);
    expect(await rcon.send("echo next")).toBe("next \n");
  });

  test("a reply past maxReplyBytes (MAX_REPLY_CHARS) fails; what is left of it is not the next command's", async () => {
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

  test("a command that prints nothing answers empty at once (no quiet period)", async () => {
    const { rcon } = await setup({ handler: () => "" });
    const t0 = performance.now();
    expect(await rcon.send("sv_cmd nothing")).toBe("");
    expect(performance.now() - t0).toBeLessThan(250);
  });

  for (const expands of [false, true]) {
    test(`an escaped $ ($$) runs as one $ on a server that ${expands ? "expands" : "doesn't expand"} $ in rcon commands`, async () => {
      const { fake, rcon } = await setup({ expands, handler: (c) => `${c}\n` });
      expect(await rcon.send('say "costs $$5"')).toBe('say "costs $5"\n');
      expect(fake.commands).toContain('say "costs $5"');
      expect(await rcon.send("say $$$$")).toBe("say $$\n");
    });
  }

  test("each request is signed afresh: commands at rcon_secure 2 ask for a challenge each", async () => {
    const { fake, rcon } = await setup({ secure: 2 });
    for (const w of ["a", "b", "c"]) expect(await rcon.send(`echo ${w}`)).toBe(`${w} \n`);
    expect(fake.getchallenges).toBe(3);
  });

  test("a wrong password meets silence; the answered probe makes it an auth error, and the password is never logged", async () => {
    const logger = memoryLogger();
    const { fake, rcon } = await setup({}, { password: "hunter2", logger });
    const err = (await rcon.send("status 1").catch((e) => e)) as TransportError;
    expect(err.code).toBe("auth");
    expect(err.message).toContain(`${fake.host}:${fake.port}`);
    expect(err.message).toContain("rcon_password is wrong");
    expect(fake.commands).toEqual([]);
    expect(JSON.stringify(logger.lines)).not.toContain("hunter2");
  });

  test("a server that says it denied the request (DarkPlaces since 2024) is an auth error without waiting", async () => {
    const { rcon } = await setup({ answersDenied: true }, { password: "wrong", probeMs: 5000 });
    const t0 = performance.now();
    expect(((await rcon.send("status 1").catch((e) => e)) as TransportError).code).toBe("auth");
    expect(performance.now() - t0).toBeLessThan(1000);
  });

  test("a request below the server's rcon_secure is ignored: the error names rcon_secure", async () => {
    const { rcon } = await setup({ secure: 1 }, { secure: 0 });
    const err = (await rcon.send("echo x").catch((e) => e)) as TransportError;
    expect(err.code).toBe("auth");
    expect(err.message).toContain("rcon_secure is above 0");
  });

  test("rcon_secure 1 signs the time: a clock 10 s off is refused, as the server allows 5 s", async () => {
    const fakeNow = () => Date.now() + 10_000;
    const { rcon } = await setup({ secure: 1, now: fakeNow }, { secure: 1 });
    expect(((await rcon.send("echo x").catch((e) => e)) as TransportError).code).toBe("auth");
  });

  test("a late reply of a command that timed out is not taken for the next command's", async () => {
    const { rcon } = await setup({
      handler: async (c) => {
        if (c === "slow") await Bun.sleep(400);
        return `${c} done\n`;
      },
    });
    expect(((await rcon.send("slow", { timeoutMs: 150 }).catch((e) => e)) as TransportError).code).toBe("timeout");
    expect(await rcon.send("fast")).toBe("fast done\n");
    await Bun.sleep(400); // the slow reply has arrived meanwhile and was dropped
    expect(await rcon.send("fast")).toBe("fast done\n");
  });

  test("silence after earlier replies is first taken for a restart, then for a changed password", async () => {
    const { fake, rcon } = await setup();
    expect(await rcon.send("echo up")).toBe("up \n");
    fake.options.password = "changed"; // rcon_password set anew on the server
    const first = (await rcon.send("echo x").catch((e) => e)) as TransportError;
    expect(first.code).toBe("disconnected");
    expect(first.message).toContain("restarted meanwhile, or its rcon_password or rcon_secure changed");
    expect(((await rcon.send("echo y").catch((e) => e)) as TransportError).code).toBe("auth");
  });

  test("rejects what can't be sent", async () => {
    const { fake, rcon } = await setup();
    for (const bad of ["say a\nquit", "say a\0quit", "x".repeat(1400)]) {
      expect(((await rcon.send(bad).catch((e) => e)) as TransportError).code).toBe("invalid");
    }
    expect(() => new DpRcon({ host: fake.host, port: fake.port, password: "two words" })).toThrow("whitespace");
    expect(() => new DpRcon({ host: fake.host, port: fake.port, password: "p".repeat(64), secure: 0 })).toThrow(
      "63 bytes",
    );
    expect(fake.commands).toEqual([]);
  });
});

describe("DpRcon takes replies only from the game", () => {
  for (const { where, host, at } of ATTACKERS) {
    test(`from ${where}: a forged reply between the request's own markers is not taken, and under Bun none reaches the process`, async () => {
      const logger = memoryLogger();
      let attacker: Attacker | undefined;
      const { fake, rcon } = await setup(
        {
          host,
          handler: () => "real answer\n",
          // The attacker reads the marker off the wire and answers first, with an empty `n` for good measure.
          before: async (request) => {
            const marker = /echo (hubagent_[0-9a-f]{12})_start/.exec(request.toString("latin1"))?.[1];
            if (!marker) return;
            await attacker!.send(fake.client!, "n");
            await attacker!.send(
              fake.client!,
              `n${marker}_start$$ \nsay: Admin: !ban Victim perm forged\n${marker}_end \n`,
            );
            await Bun.sleep(30);
          },
        },
        { logger },
      );
      attacker = await at(fake.port);
      cleanups.push(() => attacker!.close());
      for (let i = 0; i < 3; i++) expect(await rcon.send("status 1")).toBe("real answer\n");
      expect(attacker.sent).toBe(6);
      expect(strays(logger.lines)).toEqual([]);
      const game = host === "::1" ? `[::1]:${fake.port}` : `127.0.0.1:${fake.port}`;
      expect(connectedUdpOf(process.pid).filter((s) => s.endsWith(` → ${game}`))).toHaveLength(1);
    });

    test(`from ${where}: forged challenges don't make the password look wrong`, async () => {
      let attacker: Attacker | undefined;
      const { fake, rcon } = await setup({
        host,
        before: async (request) => {
          if (!request.toString("latin1").startsWith("getchallenge")) return;
          await attacker!.send(fake.client!, "challenge AAAAAAAAAAA\0");
          await Bun.sleep(30);
        },
      });
      attacker = await at(fake.port);
      cleanups.push(() => attacker!.close());
      for (const w of ["a", "b"]) expect(await rcon.send(`echo ${w}`)).toBe(`${w} \n`);
      expect(attacker.sent).toBe(2);
    });
  }
});
