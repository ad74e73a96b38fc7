import { afterEach, describe, expect, test } from "bun:test";
import { PassThrough } from "node:stream";
import { interceptWords } from "../../../lib/game/wrap/operator-console.ts";
import type { WrapperOptions } from "../../../lib/game/wrap/wrapped-server.ts";
import { until } from "../../agent/harness.ts";
import { cleanup, wrap } from "./harness.ts";

afterEach(cleanup);

/** The wrapped fake server, ready, with the operator's terminal: what is written to `input` is typed. */
async function terminal(opts: Partial<WrapperOptions> = {}) {
  const input = new PassThrough();
  const output = new PassThrough();
  let shown = "";
  output.on("data", (d) => (shown += String(d)));
  const w = await wrap([], { input, output, ...opts });
  await w.server.whenReady();
  return { w, input, shown: () => shown };
}

describe("OperatorConsole", () => {
  test("typed lines reach the server; intercepted words become operator_input; EOF keeps the server", async () => {
    const { w, input, shown } = await terminal({
      intercept: interceptWords(["ban", "unban", "warn", "warns", "verwarnen"]),
    });
    input.write("say typed by the operator\nBAN Bob 10 griefing\n");
    input.write("  warn Bob spam\nwarnings are not intercepted\nverwarnen Eve\n");
    await until(() => w.has('Unknown command "warnings"'), "the pass-through line");
    expect(w.has("[CHAT] Server: typed by the operator")).toBe(true);
    expect(w.events.filter((e) => e.startsWith("operator"))).toEqual([
      "operator: BAN Bob 10 griefing",
      "operator: warn Bob spam",
      "operator: verwarnen Eve",
    ]);
    expect(w.texts().some((t) => /Unknown command "(BAN|ban|warn|verwarnen)"/.test(t))).toBe(false);
    input.end();
    await until(() => w.logger.lines.some((l) => l.msg.includes("operator console closed")), "EOF noticed");
    expect(await w.transport.send("say after EOF")).toBe("[CHAT] Server: after EOF");
    // The operator sees the console, but not the replies to hub-agent's own commands.
    const seen = shown().split("\n");
    expect(seen).toContain("Server ready (type quit to stop)");
    expect(seen).toContain("[CHAT] Server: typed by the operator");
    expect(seen).not.toContain("[CHAT] Server: after EOF");
    expect(seen.some((l) => l.includes("hubagent_end_"))).toBe(false);
  });

  test("a typed line's answer is the operator's even when hub-agent sends a command right after it", async () => {
    const { w, input, shown } = await terminal();
    // The console is still busy with the operator's lines when hub-agent's command comes.
    input.write("sleep 100\nsay typed before the command\n");
    await new Promise((r) => setImmediate(r)); // the typed lines are read first
    expect(await w.transport.send("echo the command's reply")).toBe("the command's reply");
    expect(shown().split("\n")).toContain("[CHAT] Server: typed before the command");
    expect(shown()).not.toContain("the command's reply");
    expect(shown()).not.toContain("hubagent_end_");
  });

  test("a typed line never waits behind hub-agent's commands; each answer goes to whom it belongs", async () => {
    const { w, input, shown } = await terminal();
    // hub-agent's command holds the console and three more wait in its queue when the operator types.
    const replies = Promise.all([
      w.transport.send("slow 300 the agent's answer"),
      ...[1, 2, 3].map((n) => w.transport.send(`say agent ${n}`)),
    ]);
    await until(() => w.has("working on it"), "hub-agent's command to run");
    input.write("say typed by the operator\n");
    expect(await replies).toEqual([
      "working on it\nthe agent's answer",
      "[CHAT] Server: agent 1",
      "[CHAT] Server: agent 2",
      "[CHAT] Server: agent 3",
    ]);
    // The server ran the typed line right after the command in flight, before the queued ones.
    expect(w.texts().filter((t) => t.startsWith("[CHAT]"))).toEqual([
      "[CHAT] Server: typed by the operator",
      "[CHAT] Server: agent 1",
      "[CHAT] Server: agent 2",
      "[CHAT] Server: agent 3",
    ]);
    const seen = shown().split("\n");
    expect(seen).toContain("[CHAT] Server: typed by the operator");
    expect(shown()).not.toContain("agent");
    expect(shown()).not.toContain("working on it");
  });

  test("without echo, a line typed while a reply waits for its quiet period is written after it: its answer is shown", async () => {
    const { w, input, shown } = await terminal({ echo: undefined, quietMs: 300 });
    const reply = w.transport.send("slow 200 the agent's answer");
    await until(() => w.has("working on it"), "hub-agent's command to run");
    input.write("say typed by the operator\n");
    expect(await reply).toBe("working on it\nthe agent's answer");
    await until(() => shown().includes("[CHAT] Server: typed by the operator"), "the typed line's answer, shown");
    // hub-agent's next command comes after the typed line, and its reply is its own.
    expect(await w.transport.send("say agent")).toBe("[CHAT] Server: agent");
    expect(shown()).not.toContain("agent's answer");
  });

  test("the stop command typed at the console stops the server as hub-agent's own stop does (no restart)", async () => {
    const { w, input } = await terminal({ restart: { delayMs: 10 } });
    input.write("quit\n");
    await until(() => w.exits.length === 1, "the server to exit");
    expect(w.exits[0]).toMatchObject({ code: 0, requested: true, restarting: false });
    expect(w.transport.state).toBe("closed");
    expect(w.logger.lines.some((l) => l.msg.includes('the operator typed "quit"'))).toBe(true);
  });
});
