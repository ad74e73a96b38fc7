/**
 * A network namespace of its own for a game server that can't be kept on loopback by its config alone (DDNet 16.4:
 * docs/game-consoles.md §2.7): its loopback is its only interface, so nothing it opens is reachable from the
 * network. Programs run in it through `ip netns exec`; a test outside reaches one of its loopback ports through a
 * relay over a Unix socket. Root only (`ip netns add`); every process goes through ./procs.ts.
 */
import { existsSync } from "node:fs";
import * as net from "node:net";
import { join } from "node:path";
import { spawn } from "./procs.ts";
import { until } from "./until.ts";

const IP = "/usr/sbin/ip";

/** Namespaces made and not deleted yet: deleted on exit too (an interrupted run), after its processes are killed. */
const made = new Set<string>();
process.on("exit", () => {
  for (const name of made) Bun.spawnSync([IP, "netns", "del", name], { stdout: "ignore", stderr: "ignore" });
});

/** Why no namespace can be made here, or undefined. */
export function netnsMissing(): string | undefined {
  if (!existsSync(IP)) return `needs ${IP} (Debian package iproute2)`;
  if (process.getuid?.() !== 0) return "needs root (ip netns add)";
  return undefined;
}

async function ip(...args: string[]): Promise<void> {
  const p = spawn([IP, ...args], { stdout: "ignore", stderr: "pipe" });
  if ((await p.exited) !== 0) throw new Error(`ip ${args.join(" ")}: ${await new Response(p.stderr).text()}`);
}

export interface Netns {
  name: string;
  /** A command line that runs `command` in the namespace. */
  exec(command: string[]): string[];
  /** Runs `ip` in the namespace (`ip -n <name> …`). */
  ip(...args: string[]): Promise<void>;
  /** Sets a sysctl of the namespace (net.* ones are its own). */
  sysctl(key: string, value: string): Promise<void>;
  /** A port on 127.0.0.1 outside that leads to 127.0.0.1:`port` inside (`dir` holds the socket). */
  relay(port: number, dir: string): Promise<{ port: number; close(): Promise<void> }>;
  /** Deletes the namespace (its processes must have ended). */
  close(): Promise<void>;
}

export async function createNetns(prefix: string): Promise<Netns> {
  const name = `${prefix}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  await ip("netns", "add", name);
  made.add(name);
  const exec = (command: string[]) => [IP, "netns", "exec", name, ...command];
  const ns: Netns = {
    name,
    exec,
    ip: (...args) => ip("-n", name, ...args),
    async sysctl(key, value) {
      const p = spawn(exec(["sysctl", "-q", "-w", `${key}=${value}`]), { stdout: "ignore", stderr: "pipe" });
      if ((await p.exited) !== 0) throw new Error(`sysctl ${key}: ${await new Response(p.stderr).text()}`);
    },
    async relay(port, dir) {
      const path = join(dir, `relay-${port}.sock`);
      const inside = spawn(
        exec([process.execPath, join(import.meta.dir, "unix-relay.ts"), path, "127.0.0.1", String(port)]),
        {
          stdout: "ignore",
          stderr: "inherit",
          scope: "file",
        },
      );
      await until(() => existsSync(path), "the relay's socket", { timeoutMs: 10_000 });
      const open = new Set<net.Socket>();
      const outside = net.createServer((c) => {
        const u = net.connect(path);
        c.pipe(u).pipe(c);
        open.add(c);
        const end = () => (c.destroy(), u.destroy(), open.delete(c));
        c.on("error", end).on("close", end);
        u.on("error", end).on("close", end);
      });
      await new Promise<void>((resolve) => outside.listen(0, "127.0.0.1", () => resolve()));
      return {
        port: (outside.address() as net.AddressInfo).port,
        async close() {
          for (const c of open) c.destroy();
          await new Promise<void>((resolve) => outside.close(() => resolve()));
          inside.kill("SIGTERM");
          await inside.exited;
        },
      };
    },
    async close() {
      await ip("netns", "del", name);
      made.delete(name);
    },
  };
  try {
    await ns.ip("link", "set", "lo", "up");
  } catch (e) {
    await ns.close();
    throw e;
  }
  return ns;
}
