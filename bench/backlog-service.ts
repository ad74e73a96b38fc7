/**
 * The in-memory service in a process of its own, for bench/backlog.ts: timing the commands in the bench's process
 * must not wait on the service's work, nor the service on the bench's. Driven over IPC: it sends its address first,
 * then answers each request with its id.
 *   { op: "limit", perSecond }  standing rate limit (SandboxControl.limitRate), 0 lifts it
 *   { op: "down" } / { op: "up" }  stop / start listening
 *   { op: "count", prefix }   bans whose reason starts with prefix: how many, how many intents (user + reason) more
 *                             than once, and their reasons in the order they were made
 *   { op: "requests" }        requests answered, and how many with 429
 */
import { startSandbox } from "../lib/sandbox/index.ts";

const sb = await startSandbox({ seed: "empty" });
type Msg = { id: number; op: string; perSecond?: number; prefix?: string };
// Counted as they are answered, and the request log emptied every second: 30,000 requests kept in memory would make
// the service itself slower as a drain goes on (its garbage collection), which is not the agent's doing.
const counts = { requests: 0, limited: 0 };
sb.control.onHandled({}, (e) => {
  counts.requests++;
  if (e.status === 429) counts.limited++;
});
setInterval(() => sb.control.clearRequests(), 1_000);

process.on("message", async (m: Msg) => {
  const reply = (value: unknown) => process.send?.({ id: m.id, value });
  switch (m.op) {
    case "limit":
      sb.control.limitRate(m.perSecond ?? 0);
      return reply(true);
    case "down":
      await sb.control.down();
      return reply(true);
    case "up":
      await sb.control.up();
      return reply(true);
    case "count": {
      const made = [...sb.state.bans.values()].filter((b) => b.reason?.startsWith(m.prefix ?? ""));
      const per = new Map<string, number>();
      for (const b of made) per.set(`${b.user_id} ${b.reason}`, (per.get(`${b.user_id} ${b.reason}`) ?? 0) + 1);
      const order = made.map((b) => b.reason); // the map keeps the order they were made in
      return reply({ bans: made.length, duplicates: [...per.values()].filter((n) => n > 1).length, order });
    }
    case "requests": {
      const now = { ...counts };
      Object.assign(counts, { requests: 0, limited: 0 });
      return reply(now);
    }
    case "stop":
      await sb.stop();
      reply(true);
      process.exit(0);
  }
});
process.send?.({ ready: { url: sb.url, key: sb.key, serverId: sb.serverId, bundleId: sb.bundleId } });
