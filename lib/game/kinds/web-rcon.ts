/**
 * `game.bridge = "webrcon"`: Rust's WebRCON (a WebSocket; docs/game-consoles.md §2.6). Its broadcast of every
 * console line is the event stream, so joins, leaves and chat need no log file.
 */
import type { BridgeKind, RemoteConsoleSection } from "./kind.ts";
import { checkRemote, passwordProblems, targetOf } from "./remote.ts";

export const webRcon: BridgeKind<RemoteConsoleSection> = {
  name: "webrcon",
  title: "WebRCON",
  help: "webrcon (Rust's WebRCON)",
  section: "rcon",
  console: true,
  validate: (raw) => passwordProblems(raw, webRcon),
  async create(input) {
    const { WebRcon } = await import("../transports/web-rcon.ts");
    const { clock, logger } = input.deps;
    const rcon = new WebRcon({ ...targetOf(input, webRcon), clock, logger });
    return { transport: rcon, sources: [rcon] };
  },
  async check(input, { timeoutMs }) {
    const { WebRcon } = await import("../transports/web-rcon.ts");
    return checkRemote(input, webRcon, timeoutMs, async (target) => new WebRcon({ ...target, timeoutMs }));
  },
};
