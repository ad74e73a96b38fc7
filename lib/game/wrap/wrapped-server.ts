/**
 * `game.bridge = "wrapper"` put together: the server as a child (./supervisor.ts), its stdin and stdout as the
 * console transport (./stdio-transport.ts) and hub-agent's own stdin and stdout as the operator's console
 * (./operator-console.ts). The bridge sees the supervisor as a line source and this as the server process.
 */
import { systemClock } from "../../clock.ts";
import type { ServerProcess, ServerProcessEvents } from "../preset-bridge.ts";
import { OperatorConsole, type OperatorConsoleOptions } from "./operator-console.ts";
import { StdioTransport, type StdioTransportOptions } from "./stdio-transport.ts";
import { Supervisor, type SupervisorOptions } from "./supervisor.ts";

export { interceptWords } from "./operator-console.ts";
export type { ExitInfo } from "./supervisor.ts";

/** The options of the three parts in one (the supervisor's stop command and logger serve the console too). */
export type WrapperOptions = SupervisorOptions & Partial<StdioTransportOptions> & OperatorConsoleOptions;

export class WrappedServer implements ServerProcess {
  readonly supervisor: Supervisor;
  readonly transport: StdioTransport;
  readonly operatorConsole: OperatorConsole;

  constructor(opts: WrapperOptions) {
    const { echo, quietMs, timeoutMs, readBytes, clock = systemClock } = opts;
    this.supervisor = new Supervisor(opts);
    this.transport = new StdioTransport(this.supervisor, {
      clock,
      ...(echo ? { echo } : {}),
      ...(quietMs ? { quietMs } : {}),
      ...(timeoutMs ? { timeoutMs } : {}),
      ...(readBytes ? { readBytes } : {}),
    });
    this.operatorConsole = new OperatorConsole(this.supervisor, this.transport, opts);
  }

  on<K extends keyof ServerProcessEvents>(event: K, fn: (...args: ServerProcessEvents[K]) => void): () => void {
    if (event === "operator_input") return this.operatorConsole.on(event, fn as (line: string) => void);
    return this.supervisor.on(event as Exclude<K, "operator_input">, fn as never);
  }
}
