/**
 * `game.bridge = "econ"`: the Teeworlds / DDNet external console (TCP; docs/game-consoles.md §2.7). It streams the
 * server's console, so joins, leaves and chat need no log file. doctor also looks for the console on this host's
 * other addresses: an ec_bindaddr that doesn't do what it says (DDNet 16.4's `::1` opens IPv4 on every interface)
 * is otherwise invisible from loopback.
 */
import { networkInterfaces } from "node:os";
import type { Check } from "../../check.ts";
import type { BridgeKind, RemoteConsoleSection } from "./kind.ts";
import { checkRemote, consoleOf, passwordProblems, targetOf } from "./remote.ts";
import { isLoopback } from "../../loopback.ts";

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
    let transport: InstanceType<typeof Econ> | undefined;
    const check = await checkRemote(
      input,
      econ,
      timeoutMs,
      async (target) => (transport = new Econ({ ...target, timeoutMs })),
      "; three wrong passwords ban this address for ec_bantime",
    );
    if (check.status !== "ok") return check;
    // The other game's preset reads no player and no chat: the lines' form says which server this is (the forms
    // are named as the presets are).
    const form = transport?.form;
    const name = input.preset.name;
    if (form && (name === "teeworlds" || name === "ddnet") && form !== name)
      return {
        ...check,
        status: "warn",
        message: `${check.message}, but the server prints ${form === "ddnet" ? "DDNet" : "Teeworlds"}'s console: the ${name} preset sees no player there`,
        fix: `set game.preset = "${form}"`,
      };
    if (!isLoopback(input.section.host)) return check;
    const port = input.section.port ?? consoleOf(input.preset, econ).port;
    return exposureOf(
      check,
      await answersOn(port, ownAddresses(), Math.min(timeoutMs, 2000)),
      input.preset.consoles.econ?.enable,
    );
  },
};

/** doctor's verdict when the console answers elsewhere than on loopback too. */
export function exposureOf(check: Check, exposed: string[], enable = ""): Check {
  if (!exposed.length) return check;
  return {
    ...check,
    status: "warn",
    message: `${check.message}, but econ answers on ${exposed.join(", ")} too: whoever reaches this host can try its password`,
    fix: `keep econ on loopback: ${enable}`,
  };
}

/** This host's addresses other than loopback (link-local IPv6 left out: it needs an interface to be reached). */
export function ownAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flat()
    .filter((a) => a && !a.internal && !a.address.startsWith("fe80:"))
    .map((a) => a!.address);
}

/**
 * The addresses on which `port` answers with econ's prompt. Only the prompt is read: no password is sent, so
 * nothing counts towards a ban.
 */
export async function answersOn(port: number, addresses: string[], timeoutMs: number): Promise<string[]> {
  // Imported here, not with the bridge kinds: every command's configuration check loads those, and node:net costs a
  // one-shot command ~4 ms at start (docs/performance.md).
  const net = await import("node:net");
  const answered = await Promise.all(
    addresses.map(
      (host) =>
        new Promise<boolean>((resolve) => {
          const socket = net.connect({ host, port });
          const done = (yes: boolean) => {
            socket.destroy();
            clearTimeout(timer);
            resolve(yes);
          };
          const timer = setTimeout(() => done(false), timeoutMs);
          let seen = "";
          socket.on("data", (d: Buffer) => {
            seen = (seen + d.toString("latin1")).slice(0, 64);
            if (seen.startsWith("Enter password:")) done(true);
            else if (seen.length >= 15) done(false);
          });
          socket.on("error", () => done(false));
          socket.on("close", () => done(false));
        }),
    ),
  );
  return addresses.filter((_, i) => answered[i]).map((a) => (a.includes(":") ? `[${a}]:${port}` : `${a}:${port}`));
}
