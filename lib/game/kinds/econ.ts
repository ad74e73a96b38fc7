/**
 * `game.bridge = "econ"`: the Teeworlds / DDNet external console (TCP; docs/game-consoles.md §2.7). It streams the
 * server's console, so joins, leaves and chat need no log file.
 */
import type { BridgeKind, RemoteConsoleSection } from "./kind.ts";
import { checkRemote, passwordProblems, targetOf } from "./remote.ts";

export const econ: BridgeKind<RemoteConsoleSection> = {
  name: "econ",
  title: "econ",
  help: "econ (Teeworlds and DDNet's external console)",
  section: "rcon",
  console: true,
  validate: (raw) => passwordProblems(raw, econ),
  async create(input) {
    const { Econ } = await import("../transports/econ.ts");
    const { clock, logger } = input.deps;
    const console = new Econ({ ...targetOf(input, econ), clock, logger });
    return { transport: console, sources: [console] };
  },
  async check(input, { timeoutMs }) {
    const { Econ } = await import("../transports/econ.ts");
    return checkRemote(
      input,
      econ,
      timeoutMs,
      async (target) => new Econ({ ...target, timeoutMs }),
      "; three wrong passwords ban this address for ec_bantime",
    );
  },
};
