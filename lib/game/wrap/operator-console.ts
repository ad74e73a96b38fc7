/**
 * The operator's console of a wrapped server (docs/game-consoles.md §2.3): hub-agent's own stdin and stdout stand in
 * for the server's console. Typed lines reach the server, except the ones hub-agent answers itself.
 */
import { type Logger, silentLogger } from "../../log.ts";
import { LineSplitter } from "../sources/lines.ts";
import { errorMessage } from "../transports/transport.ts";
import { Emitter } from "./emitter.ts";
import type { StdioTransport } from "./stdio-transport.ts";
import type { Supervisor } from "./supervisor.ts";

export interface OperatorConsoleOptions {
  /** What the operator types (hub-agent's stdin). */
  input?: NodeJS.ReadableStream;
  /**
   * The operator's view of the console (hub-agent's stdout; its own log goes to stderr): the server's lines are
   * copied here, except the replies to hub-agent's own commands.
   */
  output?: NodeJS.WritableStream;
  /** Applied to every line copied to `output`: a server that prints a secret must not put it on the console. */
  redact?: (line: string) => string;
  /** Lines for which this holds become `operator_input` events instead of reaching the server. */
  intercept?: (line: string) => boolean;
  /** The server's stop command (`quit`): typed, it stops the server as hub-agent's own stop does. */
  stopCommand?: string;
  logger?: Logger;
}

export interface OperatorConsoleEvents {
  /** An intercepted line the operator typed (`ban Bob 10 griefing`), trimmed. */
  operator_input: [line: string];
}

/** The words a wrapped console's intercept checks: `ban …`, `Warn …` (case-insensitive, first word only). */
export function interceptWords(words: Iterable<string>): (line: string) => boolean {
  const set = new Set([...words].map((w) => w.toLowerCase()));
  return (line) => set.has(line.trim().split(/\s+/, 1)[0]?.toLowerCase() ?? "");
}

/**
 * Reads the operator's lines once the server has started and until it stops for good. Intercepted lines
 * (ban, warn, …) become `operator_input` events, the stop command stops the server (no restart follows; `hub-agent
 * run` then ends cleanly), the rest go through the transport's type(). At EOF the server's stdin stays open: some
 * consoles exit or spin at EOF (systemd, docker run without -i).
 */
export class OperatorConsole {
  #o: OperatorConsoleOptions;
  #log: Logger;
  #events: Emitter<OperatorConsoleEvents>;
  #attached?: { input: NodeJS.ReadableStream; onData: (d: Buffer | string) => void; onEnd: () => void };
  #detached = false;

  constructor(
    private server: Supervisor,
    private transport: StdioTransport,
    opts: OperatorConsoleOptions,
  ) {
    this.#o = opts;
    this.#log = (opts.logger ?? silentLogger).withTag("wrapper");
    this.#events = new Emitter<OperatorConsoleEvents>((event, e) =>
      this.#log.warn(`${event} listener failed: ${errorMessage(e)}`),
    );
    const { output, redact } = opts;
    if (output) server.on("console", (line) => output.write(`${redact ? redact(line) : line}\n`));
    server.on("started", () => this.#attach());
    server.on("stopping", () => this.#detach());
    server.on("state", (state) => state === "closed" && this.#detach());
  }

  on<K extends keyof OperatorConsoleEvents>(event: K, fn: (...args: OperatorConsoleEvents[K]) => void): () => void {
    return this.#events.on(event, fn);
  }

  #attach(): void {
    const input = this.#o.input;
    if (!input || this.#attached || this.#detached) return;
    const splitter = new LineSplitter((line) => this.#typed(line));
    const onData = (d: Buffer | string) => splitter.push(d);
    const onEnd = () => {
      splitter.flush();
      this.#log.info("the operator console closed; the server keeps running");
    };
    input.on("data", onData);
    input.once("end", onEnd);
    this.#attached = { input, onData, onEnd };
  }

  #detach(): void {
    this.#detached = true;
    const attached = this.#attached;
    if (!attached) return;
    this.#attached = undefined;
    attached.input.off("data", attached.onData);
    attached.input.off("end", attached.onEnd);
    attached.input.pause();
  }

  #typed(line: string): void {
    if (this.#o.intercept?.(line)) {
      this.#events.emit("operator_input", line.trim());
      return;
    }
    const stop = this.#o.stopCommand;
    if (stop && line.trim().toLowerCase() === stop.toLowerCase()) {
      this.#log.info(`the operator typed "${stop}": stopping the server`);
      void this.server.stop();
      return;
    }
    this.transport
      .type(line)
      .catch((e: Error) => this.#log.warn(`not passed on to the server (${e.message}): ${line}`));
  }
}
