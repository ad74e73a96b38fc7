/** What a process's sockets are bound and connected to, read from /proc (Linux). */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

interface Row {
  table: string;
  local: string;
  remote: string;
}

/** The sockets of a process, from its fds and the kernel's socket tables. */
function rowsOf(pid: number): Row[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    const target = (() => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        return "";
      }
    })();
    const m = /^socket:\[(\d+)\]$/.exec(target);
    if (m) inodes.add(m[1]!);
  }
  const out: Row[] = [];
  for (const table of ["udp", "udp6", "tcp", "tcp6"]) {
    for (const row of readFileSync(`/proc/${pid}/net/${table}`, "utf8").split("\n").slice(1)) {
      const cols = row.trim().split(/\s+/);
      if (cols.length < 10 || !inodes.has(cols[9]!)) continue;
      out.push({ table, local: addressOf(cols[1]!), remote: addressOf(cols[2]!) });
    }
  }
  return out;
}

/** `0100007F:6978` → `127.0.0.1:27000`; IPv6 loopback as `[::1]`, other IPv6 addresses as the kernel's hex. */
function addressOf(column: string): string {
  const [hex = "", portHex = ""] = column.split(":");
  const port = Number.parseInt(portHex, 16);
  const address =
    hex.length === 8
      ? (hex.match(/../g) ?? [])
          .reverse()
          .map((b) => Number.parseInt(b, 16))
          .join(".")
      : hex === "00000000000000000000000001000000"
        ? "[::1]"
        : hex === "00000000000000000000000000000000"
          ? "[::]"
          : `[${hex}]`;
  return `${address}:${port}`;
}

/** The local addresses of a process's UDP and TCP sockets (`127.0.0.1:26000`, `[::1]:26000`). */
export function socketsOf(pid: number): string[] {
  return rowsOf(pid).map((r) => r.local);
}

/** A process's UDP sockets connected to a peer, as `local → remote` (`127.0.0.1:40000 → 127.0.0.1:27960`). */
export function connectedUdpOf(pid: number): string[] {
  return rowsOf(pid)
    .filter((r) => r.table.startsWith("udp") && !/^(0\.0\.0\.0|\[::\]):0$/.test(r.remote))
    .map((r) => `${r.local} → ${r.remote}`);
}

/** The local addresses of a process's UDP sockets. */
export function udpSocketsOf(pid: number): string[] {
  return rowsOf(pid)
    .filter((r) => r.table.startsWith("udp"))
    .map((r) => r.local);
}
