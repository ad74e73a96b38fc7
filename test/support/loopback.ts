/**
 * Attackers on the same host come from another loopback address: Linux routes all of 127.0.0.0/8 to loopback, so a
 * test can connect from 127.0.0.2 while the real client uses 127.0.0.1. Elsewhere (macOS) only 127.0.0.1 exists unless
 * aliased, and such a test says SKIPPED.
 */
import * as net from "node:net";

/** Why connecting from `address` (default 127.0.0.2) is impossible here, or undefined when it works. */
export async function noLoopbackAlias(address = "127.0.0.2"): Promise<string | undefined> {
  const server = net.createServer((c) => c.destroy());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  const ok = await new Promise<boolean>((resolve) => {
    const c = net.connect({ host: "127.0.0.1", port, localAddress: address });
    c.on("connect", () => resolve(true));
    c.on("error", () => resolve(false));
  });
  await new Promise((resolve) => server.close(resolve));
  return ok ? undefined : `${address} is not a loopback address on this machine`;
}
