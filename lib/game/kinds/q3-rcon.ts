/** `game.bridge = "q3rcon"`: Quake 3 rcon over UDP (ioquake3, OpenArena); docs/game-consoles.md. */
import type { BridgeKind, RemoteConsoleSection } from "./kind.ts";
import { checkRemote, spacelessPasswordProblems, targetOf } from "./remote.ts";

export const q3Rcon: BridgeKind<RemoteConsoleSection> = {
  name: "q3rcon",
  title: "Quake 3 rcon",
  help: "q3rcon (Quake 3 rcon: ioquake3, OpenArena)",
  section: "rcon",
  console: true,
  validate: (raw) => spacelessPasswordProblems(raw, q3Rcon, "which Quake 3 rcon can't send: change rconpassword"),
  async create(input) {
    const { Q3Rcon } = await import("../transports/q3-rcon.ts");
    const { clock, logger } = input.deps;
    // Output printed while a command runs goes into its reply only (a kick's disconnect line).
    return { transport: new Q3Rcon({ ...targetOf(input, q3Rcon), clock, logger }), parseReplies: true };
  },
  async check(input, { timeoutMs }) {
    const { Q3Rcon } = await import("../transports/q3-rcon.ts");
    return checkRemote(input, q3Rcon, timeoutMs, async (target) => new Q3Rcon({ ...target, timeoutMs }));
  },
};
