import { ManualClock } from "../../../lib/clock.ts";
import { memoryLogger } from "../../../lib/log.ts";
import type { BridgeEvent } from "../../../lib/game/bridge.ts";
import { PresetBridge } from "../../../lib/game/preset-bridge.ts";
import type { LineSource, OnLine } from "../../../lib/game/sources/lines.ts";
import type { Preset } from "../../../lib/game/presets/types.ts";
import { StateEvents, type Transport, type TransportState } from "../../../lib/game/transports/transport.ts";

/** A transport that records every command and answers from a handler (default ""). */
export class RecordingTransport implements Transport {
  commands: string[] = [];
  states = new StateEvents();
  constructor(public handler: (command: string) => string | Promise<string> = () => "") {}
  async send(command: string): Promise<string> {
    this.commands.push(command);
    return this.handler(command);
  }
  async close(): Promise<void> {}
  on(_event: "state", fn: (state: TransportState, error?: Error) => void): () => void {
    return this.states.on(fn);
  }
}

/** A bridge over a recording transport, not started: for command renderings. */
export function recordingBridge(preset: Preset) {
  const transport = new RecordingTransport();
  const bridge = new PresetBridge({
    preset,
    transport,
    pollIntervalMs: 0,
    clock: new ManualClock(),
    logger: memoryLogger(),
  });
  return { bridge, transport };
}

/** A line source the test feeds by hand. */
export class StubLines implements LineSource {
  onLine?: OnLine;
  stopped = false;
  async start(onLine: OnLine): Promise<void> {
    this.onLine = onLine;
  }
  async stop(): Promise<void> {
    this.stopped = true;
  }
  push(...lines: string[]): void {
    for (const line of lines) this.onLine?.(line, "log");
  }
}

/**
 * A started bridge over a recording transport (answering the list command with `list()`) and a stub line
 * source; `events` records everything the bridge reports.
 */
export async function lineBridge(preset: Preset, list: () => string = () => "", o: { parseReplies?: boolean } = {}) {
  const lines = new StubLines();
  const transport = new RecordingTransport((command) => (command === preset.list.command ? list() : ""));
  const clock = new ManualClock();
  const bridge = new PresetBridge({
    preset,
    transport,
    sources: [lines],
    pollIntervalMs: 0,
    clock,
    logger: memoryLogger(),
    ...o,
  });
  const events: BridgeEvent[] = [];
  bridge.on((e) => events.push(e));
  await bridge.start();
  await bridge.status(); // the first poll has answered
  return { bridge, lines, transport, events, clock };
}

/** Events without the ready/down bookkeeping, for comparing with fixtures. */
export const playerEvents = (events: BridgeEvent[]) => events.filter((e) => e.type !== "ready" && e.type !== "down");
