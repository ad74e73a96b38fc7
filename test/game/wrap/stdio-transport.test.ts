import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PRESETS } from "../../../lib/game/presets/index.ts";
import type { TransportError } from "../../../lib/game/transports/transport.ts";
import { until } from "../../agent/harness.ts";
import { HOSTILE, hostileCommands } from "../presets/hostile-values.ts";
import { cleanup, wrap } from "./harness.ts";

afterEach(cleanup);

describe("StdioTransport: commands", () => {
  test("send() waits for ready and returns the lines up to its marker; the marker is not game output", async () => {
    const w = await wrap(["--ready-delay=300"]);
    const reply = w.transport.send("say hello");
    expect(w.transport.state).toBe("connecting");
    expect(await reply).toBe("[CHAT] Server: hello");
    expect(w.has("[CHAT] Server: hello")).toBe(true); // still an event line
    expect(w.texts().some((t) => t.includes("hubagent_end_"))).toBe(false);
    expect(await Promise.all(["join Alice", "join Bob", "nope"].map((c) => w.transport.send(c)))).toEqual([
      "Alice joined the game",
      "Bob joined the game",
      'Unknown command "nope"',
    ]);
  });

  test("without an echo command, commands are fire-and-forget; `until` waits for a matching line", async () => {
    const w = await wrap([], { echo: undefined });
    expect(await w.transport.send("join Carol")).toBe("");
    await until(() => w.has("Carol joined the game"), "the join line");
    expect(await w.transport.send("join Dave", { until: /joined the game$/ })).toBe("Dave joined the game");
  });

  test("without an echo command but with a quiet period, a reply is what the server prints until it falls silent", async () => {
    const w = await wrap([], { echo: undefined, quietMs: 400 });
    // "working on it", 150 ms of work, then the answer: both inside the quiet period's reach.
    expect(await w.transport.send("slow 150 done")).toBe("working on it\ndone");
    expect(await w.transport.send("sleep 10")).toBe(""); // prints nothing: ends after the quiet period
    expect(await w.transport.send("join Frank")).toBe("Frank joined the game");
    expect(w.has("Frank joined the game")).toBe(true); // still an event line
  });

  test("a line break or NUL can't smuggle in a second command", async () => {
    const w = await wrap();
    for (const bad of ["say hi\nquit", "say hi\rquit", "say \0"]) {
      expect(((await w.transport.send(bad).catch((e) => e)) as TransportError).code).toBe("invalid");
    }
    expect(await w.transport.send("say still here")).toBe("[CHAT] Server: still here");
  });

  test("hostile values through every preset's escaping reach the console as one line each, as sent", async () => {
    const input = join(mkdtempSync(join(tmpdir(), "hub-stdio-")), "input");
    const w = await wrap([`--input=${input}`]);
    const read = () =>
      existsSync(input)
        ? readFileSync(input, "utf8")
            .trimEnd()
            .split("\n")
            .map((l) => JSON.parse(l) as string)
        : [];
    for (const preset of Object.values(PRESETS)) {
      for (const value of HOSTILE) {
        for (const command of await hostileCommands(preset, value)) {
          const before = read().length;
          await w.transport.send(command);
          // The transport's begin marker, the command's line, its end marker: nothing split off, nothing added.
          const lines = read().slice(before);
          expect({ preset: preset.name, value, lines: lines.slice(1, -1) }).toEqual({
            preset: preset.name,
            value,
            lines: [command],
          });
          expect(lines[0]).toMatch(/^echo hubagent_begin_[0-9a-f]{12}$/);
          expect(lines.at(-1)).toMatch(/^echo hubagent_end_[0-9a-f]{12}$/);
        }
      }
    }
  }, 30_000);

  test("a command without its marker times out; the late marker is dropped, not taken for the next reply", async () => {
    const w = await wrap();
    const err = (await w.transport.send("sleep 500", { timeoutMs: 200 }).catch((e) => e)) as TransportError;
    expect(err.code).toBe("timeout");
    expect(err.message).toContain('"sleep"');
    expect(await w.transport.send("join Erin")).toBe("Erin joined the game");
    expect(w.texts().some((t) => t.includes("hubagent_end_"))).toBe(false);
  });

  test("a marker-shaped text hub-agent never wrote (a player's chat) is game output, neither dropped nor an end", async () => {
    const w = await wrap();
    for (const text of [
      "hubagent_end_0123456789ab",
      "HUBAGENT_END_0123456789AB!",
      "hubagent_end_",
      "x hubagent_end_12",
    ]) {
      expect(await w.transport.send(`say ${text}`)).toBe(`[CHAT] Server: ${text}`);
      expect(w.has(`[CHAT] Server: ${text}`)).toBe(true);
    }
  });

  test("an echo command that never prints the marker times out", async () => {
    const w = await wrap([], { echo: (m) => `nonsense ${m}` });
    const err = (await w.transport.send("say x", { timeoutMs: 300 }).catch((e) => e)) as TransportError;
    expect(err.code).toBe("timeout");
  });
});
