/**
 * The wrapped fake game server (test/fixtures/fake-game-server.ts, a real child process) as `game.bridge =
 * "wrapper"` puts it together: supervisor, stdio transport and operator console, recording lines, events and states.
 */
import type { LineStream } from "../../../lib/game/sources/lines.ts";
import type { TransportState } from "../../../lib/game/transports/transport.ts";
import { type ExitInfo, WrappedServer, type WrapperOptions } from "../../../lib/game/wrap/wrapped-server.ts";
import { memoryLogger } from "../../../lib/log.ts";

export const FAKE = new URL("../../fixtures/fake-game-server.ts", import.meta.url).pathname;

const cleanups: (() => Promise<void> | void)[] = [];

/** For afterEach: stops every server the test wrapped. */
export async function cleanup(): Promise<void> {
  for (const fn of cleanups.splice(0).reverse()) await fn();
}

/** Wraps the fake server run with `flags`; starts it. */
export async function wrap(flags: string[] = [], opts: Partial<WrapperOptions> = {}) {
  const logger = memoryLogger();
  const wrapped = new WrappedServer({
    command: [process.execPath, FAKE, ...flags],
    stopCommand: "quit",
    ready: /^Server ready/,
    echo: (marker) => `echo ${marker}`,
    timeoutMs: 5000,
    logger,
    ...opts,
  });
  const { supervisor: server, transport } = wrapped;
  cleanups.push(() => server.stop());
  const lines: { line: string; stream: LineStream }[] = [];
  const events: string[] = [];
  const states: TransportState[] = [];
  const exits: ExitInfo[] = [];
  wrapped.on("ready", () => events.push("ready"));
  wrapped.on("down", (reason) => events.push(`down: ${reason}`));
  wrapped.on("operator_input", (line) => events.push(`operator: ${line}`));
  server.on("exit", (info) => exits.push(info));
  transport.on("state", (s) => states.push(s));
  await server.start((line, stream) => lines.push({ line, stream }));
  const has = (text: string) => lines.some((l) => l.line === text);
  return { server, transport, lines, events, states, exits, logger, has, texts: () => lines.map((l) => l.line) };
}
