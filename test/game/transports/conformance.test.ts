/** Every transport against its fake server, through the one conformance suite (./conformance.ts). */
import { DpRcon } from "../../../lib/game/transports/dp-rcon.ts";
import { Econ } from "../../../lib/game/transports/econ.ts";
import { PluginLink } from "../../../lib/game/transports/plugin-link.ts";
import { Q3Rcon } from "../../../lib/game/transports/q3-rcon.ts";
import { SourceRcon } from "../../../lib/game/transports/source-rcon.ts";
import { WebRcon } from "../../../lib/game/transports/web-rcon.ts";
import { PRESETS } from "../../../lib/game/presets/index.ts";
import type { Preset } from "../../../lib/game/presets/types.ts";
import { testTransport } from "./conformance.ts";
import { FakeDpServer } from "./fake-dp-server.ts";
import { FakeEconServer } from "./fake-econ-server.ts";
import { FakePlugin } from "./fake-plugin.ts";
import { FakeQ3Server } from "./fake-q3-server.ts";
import { FakeSourceRconServer } from "./fake-source-rcon-server.ts";
import { FakeWebRconServer } from "./fake-web-rcon-server.ts";

const slow = () => Bun.sleep(600).then(() => "slow reply");

const console = (command: string, bigReply: string) =>
  command === "big"
    ? bigReply
    : command === "hang"
      ? new Promise<string>(() => {})
      : command === "slow"
        ? slow()
        : command.startsWith("echo ")
          ? command.slice(5)
          : `Unknown command "${command}"`;

/** The presets that name `kind` among their consoles; Source RCON's dialect is Minecraft's for `minecraft` only. */
const presetsOver = (kind: string, keep: (p: Preset) => boolean = () => true) =>
  Object.values(PRESETS).filter((p) => kind in p.consoles && keep(p));

for (const dialect of ["source", "minecraft"] as const) {
  testTransport(`Source RCON (${dialect})`, {
    bigReplyChars: 12_400,
    presets: presetsOver("rcon", (p) => (p.name === "minecraft") === (dialect === "minecraft")),
    async start({ password, bigReply }) {
      const fake = await FakeSourceRconServer.start({ dialect, password, handler: (c) => console(c, bigReply) });
      return {
        client: (pw) =>
          new SourceRcon({
            host: fake.host,
            port: fake.port,
            password: pw,
            dialect,
            backoff: { initialMs: 10, maxMs: 50 },
          }),
        received: (c) => fake.received(c),
        commands: () => fake.commands,
        restart: () => fake.restart(),
        close: () => fake.close(),
      };
    },
  });
}

testTransport("Quake 3 rcon", {
  bigReplyChars: 6_000,
  presets: presetsOver("q3rcon"),
  hangTimeoutMs: 1500,
  async start({ password, bigReply }) {
    // ioq3's rate limit, ten times faster (q3-rcon.test.ts checks the real one), and the client's pace to match.
    const rateLimit = { burst: 10, periodMs: 100 };
    const fake = await FakeQ3Server.start({ password, rateLimit, handler: (c) => console(c, bigReply) });
    return {
      client: (pw) =>
        new Q3Rcon({ host: fake.host, port: fake.port, password: pw, quietMs: 100, rate: { burst: 8, periodMs: 100 } }),
      received: (c) => fake.received(c),
      commands: () => fake.commands,
      restart: () => fake.restart(),
      close: () => fake.close(),
    };
  },
});

for (const secure of [0, 1, 2] as const) {
  testTransport(`DarkPlaces rcon (rcon_secure ${secure})`, {
    bigReplyChars: 12_000,
    presets: presetsOver("dprcon"),
    // An engine that expands `$$` gets it as escaped; to an older one the transport sends the `$` it would run.
    asRun: (c) => c.replaceAll("$$", "$"),
    async start({ password, bigReply }) {
      // The fake runs `echo` as DarkPlaces does (each word and a space); the rest goes to the shared console.
      const fake = await FakeDpServer.start({ password, secure, handler: (c) => console(c, bigReply) });
      return {
        client: (pw) => new DpRcon({ host: fake.host, port: fake.port, password: pw, secure, probeMs: 300 }),
        received: (c) => fake.received(c),
        commands: () => fake.commands,
        restart: () => fake.restart(),
        close: () => fake.close(),
      };
    },
  });
}

testTransport("Rust WebRCON", {
  bigReplyChars: 200_000,
  presets: presetsOver("webrcon"),
  async start({ password, bigReply }) {
    const fake = await FakeWebRconServer.start({ password, handler: (c) => console(c, bigReply) });
    return {
      client: (pw) => new WebRcon({ host: fake.host, port: fake.port, password: pw }),
      received: (c) => fake.received(c),
      commands: () => fake.commands,
      restart: () => fake.restart(),
      close: () => fake.close(),
    };
  },
});

for (const dialect of ["teeworlds", "ddnet"] as const) {
  const console = dialect === "ddnet" ? "console" : "Console";
  testTransport(`${dialect === "ddnet" ? "DDNet" : "Teeworlds"} econ`, {
    bigReplyChars: 20_000,
    presets: presetsOver("econ"),
    // The console runs a command without its surrounding spaces (an empty value unquoted by `strip` leaves `say `).
    asRun: (c) => c.trim(),
    // Each line of a reply keeps the category it was printed in: `echo` prints in the console's own.
    unframe: (reply) =>
      reply
        .split("\n")
        .map((l) => l.replace(`[${console}]: `, ""))
        .join("\n"),
    async start({ password, bigReply }) {
      // The console prints line by line: a big reply is many lines.
      const fake = await FakeEconServer.start({
        password,
        dialect,
        handler: (c) =>
          c === "big"
            ? bigReply.split("\n").map((l) => [console, l] as [string, string])
            : c === "slow"
              ? slow().then((l) => [[console, l] as [string, string]])
              : [],
      });
      return {
        client: (pw) => new Econ({ host: fake.host, port: fake.port, password: pw }),
        received: (c) => fake.received(c),
        commands: () => fake.commands,
        restart: () => fake.restart(),
        close: () => fake.close(),
      };
    },
  });
}

testTransport("plugin protocol", {
  bigReplyChars: 200_000,
  presets: Object.values(PRESETS), // a plugin can sit in any game
  async start({ password, bigReply }) {
    // The roles are reversed: hub-agent's side listens, and the fake plugin (holding the game's token) connects.
    let fake: FakePlugin | undefined;
    const { promise: started, resolve } = Promise.withResolvers<FakePlugin>();
    return {
      client: (token) => {
        const link = new PluginLink({ host: "127.0.0.1", port: 0, token });
        void link.start().then(() => {
          fake = FakePlugin.start({
            port: link.address()!.port,
            token: password,
            handler: (c) => console(c, bigReply),
          });
          resolve(fake);
        });
        return link;
      },
      received: async (c) => (await started).received(c),
      commands: () => (fake?.requests ?? []).filter((r) => r.op === "exec").map((r) => String(r.cmd ?? "")),
      restart: async () => (await started).restart(),
      close: async () => fake?.close(),
    };
  },
});
