/**
 * The plugin protocol's listener beyond the conformance suite: events, bad and oversized lines (logged once, the
 * connection kept), the hello rules, a second plugin taking over, keepalive, and the address in use.
 */
import { afterEach, describe, expect, test } from "bun:test";
import * as net from "node:net";
import { memoryLogger } from "../../../lib/log.ts";
import { MAX_LINE_BYTES, PluginLink } from "../../../lib/game/transports/plugin-link.ts";
import type { StructuredEvent } from "../../../lib/game/structured.ts";
import type { TransportError } from "../../../lib/game/transports/transport.ts";
import { noLoopbackAlias } from "../../support/loopback.ts";
import { until } from "../../support/until.ts";
import { FakePlugin, helloLine, proof } from "./fake-plugin.ts";

const noAlias = await noLoopbackAlias("127.0.0.5");
if (noAlias) console.warn(`SKIPPED: two plugin link tests need peers on other loopback addresses: ${noAlias}`);
const ALICE = { id: "069a79f4-44e9-4726-a5be-fca90e38aaf5", name: "Alice" };
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function setup(opts: { token?: string; pluginToken?: string; helloTimeoutMs?: number; idleMs?: number } = {}) {
  const log = memoryLogger();
  const link = new PluginLink({
    host: "127.0.0.1",
    port: 0,
    token: opts.token ?? "s3cret-token",
    logger: log,
    ...(opts.helloTimeoutMs ? { helloTimeoutMs: opts.helloTimeoutMs } : {}),
    ...(opts.idleMs ? { idleMs: opts.idleMs } : {}),
  });
  cleanups.push(() => link.close());
  await link.start();
  const port = link.address()!.port;
  const events: StructuredEvent[] = [];
  link.onEvent((e) => events.push(e));
  const plugin = (token = opts.pluginToken ?? "s3cret-token") => {
    const p = FakePlugin.start({ port, token, players: () => [ALICE], handler: (c) => `ran ${c}` });
    cleanups.push(() => p.close());
    return p;
  };
  const warnings = () => log.lines.filter((l) => l.level === "warn").map((l) => l.msg);
  return { link, port, events, plugin, log, warnings };
}

/** A raw TCP peer, for what no well-behaved plugin sends; `from` another loopback address than the plugin's. */
async function rawPeer(port: number, from?: string) {
  const socket = net.connect({ host: "127.0.0.1", port, ...(from ? { localAddress: from } : {}) });
  cleanups.push(() => void socket.destroy());
  let text = "";
  let closed = false;
  socket.setEncoding("utf8");
  socket.on("data", (t: string) => (text += t));
  socket.on("close", () => (closed = true));
  socket.on("error", () => {});
  await new Promise((resolve) => socket.once("connect", resolve));
  return { socket, text: () => text, closed: () => closed };
}

/** The nonce of the challenge hub-agent greets a raw peer with. */
async function challengeOf(peer: { text(): string }): Promise<string> {
  await until(() => peer.text().includes("\n"), "the challenge");
  const m = JSON.parse(peer.text().split("\n")[0]!);
  expect(m).toMatchObject({ t: "challenge", v: 2 });
  return m.nonce;
}

describe("plugin link", () => {
  test("events arrive structured, in order; requests carry their fields", async () => {
    const { link, events, plugin } = await setup();
    const p = plugin();
    await p.connected();
    p.event("player_connect", { p: ALICE, ip: "127.0.0.1" });
    p.event("chat", { p: ALICE, text: "!dashboard now" });
    p.event("player_death", { p: ALICE, killer: { id: "x1", name: "Zed" } });
    p.event("group_change", { p: ALICE, group: "vip", op: "add", origin: "ingame" });
    p.event("player_disconnect", { p: ALICE, reason: "Quit" });
    await until(() => events.length === 5, "five events");
    expect(events).toEqual([
      { type: "connect", player: ALICE, ip: "127.0.0.1" },
      { type: "chat", player: ALICE, text: "!dashboard now" },
      { type: "death", player: ALICE, killer: { id: "x1", name: "Zed" } },
      { type: "group", player: ALICE, group: "vip", op: "add" },
      { type: "disconnect", player: ALICE, reason: "Quit" },
    ]);
    expect((await link.players()).players).toEqual([ALICE]);
    await link.kick(ALICE, "bye");
    await link.message(null, "hello all");
    await link.setGroup({ ...ALICE, slot: "7" }, "vip", "add", 90.5);
    const ops: Record<string, unknown>[] = p.requests.map((r) => ({ ...r, id: undefined }));
    expect(ops).toEqual([
      { t: "req", id: undefined, op: "players" },
      { t: "req", id: undefined, op: "kick", p: ALICE.id, reason: "bye" },
      { t: "req", id: undefined, op: "message", text: "hello all" },
      { t: "req", id: undefined, op: "group", p: ALICE.id, slot: "7", group: "vip", action: "add", seconds: 91 },
    ]);
    expect(new Set(p.requests.map((r) => r.id)).size).toBe(4);
  });

  test("a bad line is one log line and an error reply; the connection goes on", async () => {
    const { link, plugin, warnings, events } = await setup();
    const p = plugin();
    await p.connected();
    p.raw("{not json\n");
    p.raw('{"t":"event","e":"player_connect","p":{"name":"no id"}}\n');
    p.raw('["an array"]\n');
    p.raw('{"t":"res","id":999,"ok":true}\n');
    p.raw('{"t":"from-the-future"}\n{"t":"event","e":"vehicle_enter","p":{}}\n');
    await until(() => p.messages.filter((m) => m.t === "error").length === 3, "three error replies");
    expect(p.messages.filter((m) => m.t === "error").map((m) => m.message)).toEqual([
      "not JSON",
      '"p.id" must be the player\'s id, a non-empty string',
      "not a JSON object",
    ]);
    expect(await link.send("still here")).toBe("ran still here");
    expect(warnings()).toHaveLength(4); // three bad lines and the unknown id; the future's messages are ignored
    expect(warnings()[3]).toContain("request 999");
    expect(events).toEqual([]);
  });

  test("a line over the limit is dropped whole, once; the next line is read", async () => {
    const { link, plugin, warnings, events } = await setup();
    const p = plugin();
    await p.connected();
    const huge = JSON.stringify({ t: "event", e: "chat", p: ALICE, text: "x".repeat(MAX_LINE_BYTES) });
    // In many writes, so the limit is crossed in the middle of a chunk stream.
    for (let i = 0; i < huge.length; i += 65_536) p.raw(huge.slice(i, i + 65_536));
    p.raw("\n");
    p.event("chat", { p: ALICE, text: "after" });
    await until(() => events.length === 1, "the next event");
    expect(events[0]).toEqual({ type: "chat", player: ALICE, text: "after" });
    expect(warnings()).toEqual([expect.stringContaining(`dropped a line of over ${MAX_LINE_BYTES} bytes`)]);
    expect(await link.send("ok")).toBe("ran ok");
  });

  test("multi-byte characters split across writes arrive intact", async () => {
    const { plugin, events } = await setup();
    const p = plugin();
    await p.connected();
    const bytes = new TextEncoder().encode(`${JSON.stringify({ t: "event", e: "chat", p: ALICE, text: "ä€😀" })}\n`);
    for (const b of bytes) p.raw(new Uint8Array([b]));
    await until(() => events.length === 1, "the event");
    expect(events[0]).toMatchObject({ text: "ä€😀" });
  });

  test("a wrong token: refused, logged without the token, and a waiting command fails as auth", async () => {
    const { link, plugin, log } = await setup({ pluginToken: "guessed" });
    const sent = link.send("x", { timeoutMs: 3000 }).then(
      () => undefined,
      (e: TransportError) => e,
    );
    const p = plugin();
    const err = (await sent)!;
    expect(err.code).toBe("auth");
    expect(err.message).toContain("wrong token");
    await p.message((m) => m.error === "auth");
    expect(p.requests).toEqual([]);
    expect(JSON.stringify(log.lines)).not.toContain("s3cret-token");
    expect(JSON.stringify(log.lines)).not.toContain("guessed");
  });

  test("a refused hello ends the connection: guesses sent after it in the same write are not tried", async () => {
    const { link, port, events, warnings } = await setup();
    const states: string[] = [];
    link.on("state", (s) => states.push(s));
    const guesser = await rawPeer(port);
    const nonce = await challengeOf(guesser);
    const hello = (token: string) => helloLine(nonce, token);
    const chat = '{"t":"event","e":"chat","p":{"id":"1","name":"x"},"text":"!ban Alice 1d x"}\n';
    guesser.socket.write(hello("wrong-1") + hello("wrong-2") + hello("s3cret-token") + chat);
    await until(guesser.closed, "the guesser closed");
    expect(states).toEqual([]);
    expect(events).toEqual([]);
    expect(warnings().filter((w) => w.includes("wrong token"))).toHaveLength(1);
    const err = await link.send("x", { timeoutMs: 300 }).then(
      () => undefined,
      (e: TransportError) => e,
    );
    expect(err?.code).toBe("auth");
  });

  // From other addresses than the plugin's: two connections of one address may wait for their hello at once
  // (plugin-hellos.test.ts has what squatters on the plugin's own address do).
  test.skipIf(noAlias !== undefined)(
    "peers holding every connection slot without a hello don't lock the plugin out",
    async () => {
      const { link, port, plugin } = await setup({ helloTimeoutMs: 60_000 });
      const squatters: Awaited<ReturnType<typeof rawPeer>>[] = [];
      for (let i = 0; i < 8; i++) squatters.push(await rawPeer(port, `127.0.0.${2 + (i % 4)}`));
      const p = plugin();
      await p.connected();
      expect(await link.send("still here", { timeoutMs: 3000 })).toBe("ran still here");
      await until(() => squatters.some((s) => s.closed()), "the oldest waiting peer closed");
    },
  );

  // Each from its own address: a failed hello makes the next from its address wait (plugin-hellos.test.ts).
  test.skipIf(noAlias !== undefined)(
    "before hello: anything else closes the connection; silence too, after the hello timeout",
    async () => {
      const { port, warnings } = await setup({ helloTimeoutMs: 200 });
      const early = await rawPeer(port, "127.0.0.3");
      early.socket.write('{"t":"event","e":"chat","p":{"id":"1","name":"x"},"text":"hi"}\n');
      await until(early.closed, "the early talker closed");
      expect(early.text()).toContain('"error":"hello_first"');
      const silent = await rawPeer(port, "127.0.0.4");
      await until(silent.closed, "the silent peer closed");
      expect(silent.text()).toContain('"error":"hello_timeout"');
      const long = await rawPeer(port, "127.0.0.5");
      long.socket.write("x".repeat(10_000));
      await until(long.closed, "the long hello closed");
      expect(warnings()).toHaveLength(3);
    },
  );

  test("a newer plugin connection takes over; the old one's request fails as maybe-run", async () => {
    const { link, plugin } = await setup();
    const first = plugin();
    await first.connected();
    const inFlight = link.send("hang").then(
      () => undefined,
      (e: TransportError) => e,
    );
    await first.received("hang");
    const second = plugin();
    await second.connected();
    const err = (await inFlight)!;
    expect([err.code, err.written]).toEqual(["disconnected", true]);
    expect(await link.send("on the second")).toBe("ran on the second");
    expect(second.requests.map((r) => r.cmd)).toEqual(["on the second"]);
    await first.close();
  });

  test("a quiet plugin is pinged; one that never answers is dropped", async () => {
    const { link, plugin, port } = await setup({ idleMs: 150 });
    const p = plugin();
    await p.connected();
    await p.message((m) => m.t === "ping");
    expect(await link.send("alive")).toBe("ran alive");
    await p.close();
    // A peer that says hello and then nothing, not even pong.
    const mute = await rawPeer(port);
    mute.socket.write(helloLine(await challengeOf(mute), "s3cret-token"));
    await until(mute.closed, "the mute plugin dropped", { timeoutMs: 5000 });
  });

  test("a plugin of version 1 (it sends the token) is refused with one line naming the fix", async () => {
    const { port, warnings } = await setup();
    const peer = await rawPeer(port);
    peer.socket.write('{"t":"hello","v":1,"token":"s3cret-token"}\n');
    await until(peer.closed, "closed");
    const answer = JSON.parse(peer.text().trim().split("\n").at(-1)!);
    expect(answer).toEqual({
      t: "error",
      error: "version",
      message:
        "this hub-agent speaks protocol version 2, in which the token never crosses the wire: update the plugin (docs/plugin-protocol.md §4.1)",
    });
    expect(warnings()).toEqual([
      expect.stringMatching(/speaks protocol version 1; this hub-agent speaks 2: update the plugin/),
    ]);
    expect(JSON.stringify(warnings())).not.toContain("s3cret-token");
  });

  test("a hello proves the token for this challenge only; the welcome proves it back", async () => {
    const { port, warnings } = await setup();
    const peer = await rawPeer(port);
    const nonce = await challengeOf(peer);
    const mine = "ab".repeat(32);
    peer.socket.write(helloLine(nonce, "s3cret-token", mine));
    await until(() => peer.text().includes("welcome"), "the welcome");
    const welcome = JSON.parse(peer.text().split("\n")[1]!);
    expect(welcome).toEqual({ t: "welcome", v: 2, mac: proof("s3cret-token", "agent", nonce, mine) });
    expect(peer.text()).not.toContain("s3cret-token");
    // The same hello on a new connection (another challenge) is a wrong token.
    const replay = await rawPeer(port);
    await challengeOf(replay);
    replay.socket.write(helloLine(nonce, "s3cret-token", mine));
    await until(replay.closed, "the replay closed");
    expect(replay.text()).toContain('"error":"auth"');
    expect(peer.closed()).toBe(false);
    expect(warnings()).toEqual([expect.stringContaining("presented a wrong token")]);
  });

  test("no plugin: a command waits its timeout and says where hub-agent listens", async () => {
    const { link, port } = await setup();
    const err = (await link.send("x", { timeoutMs: 200 }).catch((e) => e)) as TransportError;
    expect(err.code).toBe("disconnected");
    expect(err.message).toBe(`no plugin connected to 127.0.0.1:${port} within 200 ms`);
  });

  test("the address in use is one line naming it", async () => {
    const { port } = await setup();
    const other = new PluginLink({ host: "127.0.0.1", port, token: "t" });
    cleanups.push(() => other.close());
    const err = (await other.start().catch((e) => e)) as Error;
    expect(err.message).toBe(
      `could not listen for the plugin on 127.0.0.1:${port}: the address is in use (another hub-agent, or another program)`,
    );
  });

  test("IPv6 loopback works", async () => {
    const link = new PluginLink({ host: "::1", port: 0, token: "t6" });
    cleanups.push(() => link.close());
    await link.start();
    expect(link.target).toBe(`[::1]:${link.address()!.port}`);
    const p = FakePlugin.start({ host: "::1", port: link.address()!.port, token: "t6" });
    cleanups.push(() => p.close());
    expect(await link.send("echo v6")).toBe("echo v6");
  });
});
