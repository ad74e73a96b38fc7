/**
 * `game.bridge = "dprcon"`: DarkPlaces rcon over UDP (Xonotic, Nexuiz); docs/game-consoles.md §2.8. Commands are
 * signed with a fresh challenge each, which servers accept whatever their rcon_secure.
 */
import type { BridgeKind, RemoteConsoleSection } from "./kind.ts";
import { checkRemote, spacelessPasswordProblems, targetOf } from "./remote.ts";

export const dpRcon: BridgeKind<RemoteConsoleSection> = {
  name: "dprcon",
  title: "DarkPlaces rcon",
  help: "dprcon (DarkPlaces rcon: Xonotic, Nexuiz)",
  section: "rcon",
  console: true,
  validate: (raw) =>
    spacelessPasswordProblems(raw, dpRcon, "which DarkPlaces reads as several passwords: change rcon_password"),
  async create(input) {
    const { DpRcon } = await import("../transports/dp-rcon.ts");
    const { clock, logger } = input.deps;
    // What a command prints goes into its reply (a kick's "dropped" line): read replies as event lines too.
    return { transport: new DpRcon({ ...targetOf(input, dpRcon), clock, logger }), parseReplies: true };
  },
  async check(input, { timeoutMs }) {
    const { DpRcon } = await import("../transports/dp-rcon.ts");
    return checkRemote(input, dpRcon, timeoutMs, async (target) => new DpRcon({ ...target, timeoutMs }));
  },
};
