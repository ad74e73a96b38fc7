/** What a process listens on, read from /proc (Linux): the tests check that real game servers bind loopback only. */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/** The local addresses of a process's UDP and TCP sockets (`127.0.0.1:26000`, `[::1]:26000`). */
export function socketsOf(pid: number): string[] {
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
  const out: string[] = [];
  for (const table of ["udp", "udp6", "tcp", "tcp6"]) {
    for (const row of readFileSync(`/proc/${pid}/net/${table}`, "utf8").split("\n").slice(1)) {
      const cols = row.trim().split(/\s+/);
      if (cols.length < 10 || !inodes.has(cols[9]!)) continue;
      const [hex = "", portHex = ""] = cols[1]!.split(":");
      const port = Number.parseInt(portHex, 16);
      const address =
        hex.length === 8
          ? (hex.match(/../g) ?? [])
              .reverse()
              .map((b) => Number.parseInt(b, 16))
              .join(".")
          : hex === "00000000000000000000000001000000"
            ? "[::1]"
            : `[${hex}]`;
      out.push(`${address}:${port}`);
    }
  }
  return out;
}
