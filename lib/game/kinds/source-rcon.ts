/** `game.bridge = "rcon"`: Source RCON over TCP (srcds, Minecraft, Rust's legacy console); docs/game-consoles.md. */
import type { SourceRcon } from "../transports/source-rcon.ts";
import type { BridgeKind, RemoteConsoleSection } from "./kind.ts";
import { checkRemote, consoleOf, passwordProblems, targetOf } from "./remote.ts";

const dialectOf = (d: string | undefined) => (d === "minecraft" ? "minecraft" : "source");

export const sourceRcon: BridgeKind<RemoteConsoleSection> = {
  name: "rcon",
  title: "Source RCON",
  help: "rcon (Source RCON: srcds, Minecraft, Rust's legacy console)",
  section: "rcon",
  console: true,
  validate: (raw) => passwordProblems(raw, sourceRcon),
  async create(input) {
    const { SourceRcon } = await import("../transports/source-rcon.ts");
    const { clock, logger } = input.deps;
    const dialect = dialectOf(consoleOf(input.preset, sourceRcon).dialect);
    return { transport: new SourceRcon({ ...targetOf(input, sourceRcon), dialect, clock, logger }) };
  },
  async check(input, { timeoutMs }) {
    const { SourceRcon } = await import("../transports/source-rcon.ts");
    const dialect = dialectOf(consoleOf(input.preset, sourceRcon).dialect);
    return checkRemote(
      input,
      sourceRcon,
      timeoutMs,
      async (target) => {
        const rcon = new SourceRcon({ ...target, dialect, timeoutMs, backoff: { initialMs: timeoutMs } });
        try {
          await connectOnce(rcon, timeoutMs);
        } catch (e) {
          await rcon.close();
          throw e;
        }
        return rcon;
      },
      "; srcds bans an address after repeated wrong passwords, so fix it before trying again",
    );
  },
};

/** Connects and authenticates once: the first failure is the answer (no retries with backoff). */
async function connectOnce(rcon: SourceRcon, timeoutMs: number): Promise<void> {
  let off = () => {};
  const failed = new Promise<never>((_, reject) => {
    off = rcon.on("state", (state, error) => {
      if (error && state !== "connected") reject(error);
    });
  });
  try {
    await Promise.race([rcon.connect({ timeoutMs }), failed]);
  } finally {
    off();
  }
}
