/**
 * Run as a process (`bun unix-relay.ts <socket path> <host> <port>`), typically inside a network namespace: every
 * connection to the Unix socket is relayed to host:port, byte for byte. A socket path is reachable from every
 * namespace, so a test outside reaches a console that listens on the namespace's loopback only (./netns.ts).
 */
import * as net from "node:net";

const [path = "", host = "127.0.0.1", port = "0"] = process.argv.slice(2);
net
  .createServer((inside) => {
    const out = net.connect({ host, port: Number(port) });
    inside.pipe(out).pipe(inside);
    const end = () => (inside.destroy(), out.destroy());
    inside.on("error", end).on("close", end);
    out.on("error", end).on("close", end);
  })
  .listen(path);
