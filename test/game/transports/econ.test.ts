/**
 * The econ transport against a broken or hostile peer (the fake behaves as teeworlds-server 0.7.5 and DDNet-Server
 * 16.4 do, ./fake-econ-server.ts): a connection reset with a command waiting, a command longer than econ's line, a
 * reply that never ends. What every transport shares is in conformance.test.ts.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { Econ, MAX_COMMAND_BYTES } from "../../../lib/game/transports/econ.ts";
import { MAX_REPLY_CHARS } from "../../../lib/game/transports/transport.ts";
import type { TransportError } from "../../../lib/game/transports/transport.ts";
import { until } from "../../support/until.ts";
import { FakeEconServer } from "./fake-econ-server.ts";

let fake: FakeEconServer | undefined;
let econ: Econ | undefined;
afterEach(async () => {
  await econ?.close();
  await fake?.close();
  econ = fake = undefined;
});

describe("econ under a broken peer", () => {
  test("a reset with a command waiting: one new connection, each line delivered once, none left open after close", async () => {
    fake = await FakeEconServer.start({ password: "pw", handler: (c) => (c === "wait" ? new Promise(() => {}) : []) });
    econ = new Econ({ host: fake.host, port: fake.port, password: "pw", timeoutMs: 5000, backoff: { initialMs: 50 } });
    const lines: string[] = [];
    await econ.start((line) => lines.push(line));
    expect(await econ.send("echo one")).toBe("[Console]: one");
    const inFlight = econ.send("wait").catch((e: TransportError) => e);
    await fake.received("wait");
    fake.reset(); // the peer's reset: "error", then "close" on hub-agent's side
    expect((await inFlight) as TransportError).toMatchObject({ code: "disconnected" });
    // The next command connects again, while the dropped socket still closes behind it.
    expect(await econ.send("echo two")).toBe("[Console]: two");
    // The reconnect loop (50 ms) finds that connection: no second one is opened beside it.
    await Bun.sleep(300);
    expect(fake.connections).toBe(1);
    fake.broadcast("chat", "1:0:Jack: hello");
    await until(() => lines.includes("[chat]: 1:0:Jack: hello"), "the chat line");
    await Bun.sleep(100);
    expect(lines.filter((l) => l === "[chat]: 1:0:Jack: hello")).toHaveLength(1);
    await econ.close();
    await until(() => fake!.connections === 0, "every connection closed");
  });

  test("a command longer than econ's line is refused before it is written, naming the limit; the connection stays", async () => {
    fake = await FakeEconServer.start({ password: "pw" });
    econ = new Econ({ host: fake.host, port: fake.port, password: "pw", timeoutMs: 5000 });
    const states: string[] = [];
    econ.on("state", (s) => states.push(s));
    expect(await econ.send("echo before")).toBe("[Console]: before");
    // The longest line econ reads (bytes, not characters: é is two), and one byte more.
    const fits = `say "${"é".repeat((MAX_COMMAND_BYTES - 6) / 2)}"`;
    expect(Buffer.byteLength(fits)).toBe(MAX_COMMAND_BYTES);
    await econ.send(fits);
    const err = (await econ.send(`${fits} `).catch((e) => e)) as TransportError;
    expect(err).toMatchObject({ code: "invalid", written: false });
    expect(err.message).toContain(`${MAX_COMMAND_BYTES + 1} bytes`);
    expect(err.message).toContain(`at most ${MAX_COMMAND_BYTES}`);
    expect(await econ.send("echo after")).toBe("[Console]: after");
    expect(states.filter((s) => s === "connecting")).toHaveLength(1); // the first connect only
    expect(fake.commands.filter((c) => c.startsWith("say "))).toHaveLength(1);
  });

  test("a reply that never ends fails once it passes its limit, and later commands still get their own replies", async () => {
    const line = "x".repeat(1000);
    fake = await FakeEconServer.start({
      password: "pw",
      handler: (c) =>
        c === "flood"
          ? Array.from({ length: MAX_REPLY_CHARS / 1000 + 10 }, () => ["Console", line] as [string, string])
          : [],
    });
    econ = new Econ({ host: fake.host, port: fake.port, password: "pw", timeoutMs: 10_000 });
    const err = (await econ.send("flood").catch((e) => e)) as TransportError;
    expect(err).toMatchObject({ code: "protocol" });
    expect(err.message).toContain("reply");
    expect(await econ.send("echo next")).toBe("[Console]: next");
  });
});
