/** Cases a real service cannot be made to produce on demand: a hostile echo server and raw headers. */
import { afterAll, describe, expect, test } from "bun:test";
import { createApi, describeError } from "../../lib/api/client.ts";
import { type LogLine, memoryLogger } from "../../lib/log.ts";
import { FastClock } from "./helpers.ts";

const KEY = "sk_live_local_9f8e7d6c5b4a";

/** Bytes the endless answers below have handed to the socket so far. */
let served = 0;
/** 100 MB of a JSON array, produced only as fast as the client reads (a pull stream). */
const endless = () => {
  const chunk = new TextEncoder().encode(`${"1,".repeat(32 * 1024)}`);
  let left = 100_000_000;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (left <= 0) return controller.close();
      const part = left >= chunk.byteLength ? chunk : chunk.subarray(0, left);
      left -= part.byteLength;
      served += part.byteLength;
      controller.enqueue(part);
    },
  });
};

/** Echoes the Authorization header back in every body, the worst case for redaction. */
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch(req) {
    const url = new URL(req.url);
    const auth = req.headers.get("authorization") ?? "";
    const reply = (status: number, body: string, headers: Record<string, string> = {}) =>
      new Response(body, { status, headers: { "content-type": "application/json", ...headers } });
    switch (url.pathname) {
      case "/base/v1/server/echo-404":
        return reply(404, JSON.stringify({ detail: { code: "not_found", msg: `no server for ${auth}` } }));
      case "/base/v1/server/echo-422":
        return reply(422, JSON.stringify({ detail: [{ loc: ["header", auth], msg: `bad ${auth}` }] }));
      case "/base/v1/server/echo-500":
        return reply(500, `${auth} exploded`);
      case "/base/v1/server/echo-invalid":
        return reply(200, JSON.stringify({ id: auth, name: 5, type: "GMOD" }));
      case "/base/v1/server/echo-text":
        return reply(200, `not json ${auth}`);
      case "/base/v1/server/date-429": // by a server whose clock says 2026-01-01 00:00:00
        return reply(429, "{}", {
          date: new Date(Date.UTC(2026, 0, 1, 0, 0, 0)).toUTCString(),
          "retry-after": new Date(Date.UTC(2026, 0, 1, 0, 0, 20)).toUTCString(),
        });
      case "/base/v1/group/":
        return new Response(endless(), { headers: { "content-type": "application/json" } });
      case "/base/v1/server/announced-huge":
        return new Response(endless(), {
          headers: { "content-type": "application/json", "content-length": "100000000" },
        });
      case "/base/v1/server/slow":
        return Bun.sleep(1_000).then(() => reply(200, "{}"));
      case "/base/v1/server/no-header-429":
        return reply(429, '{"detail":"slow down"}');
      case "/base/v1/server/accepted":
        return reply(202, JSON.stringify({ id: "s", name: "n", type: "GMOD" }), {
          "x-seen-ua": req.headers.get("user-agent") ?? "",
        });
      default:
        return reply(404, JSON.stringify({ detail: "Not Found" }));
    }
  },
});
afterAll(() => server.stop(true));
const base = `http://127.0.0.1:${server.port}/base/v1/`;

describe("against a hostile local server", () => {
  test("the key never appears in results, messages or log lines", async () => {
    const lines: LogLine[] = [];
    const api = createApi({ url: base, key: KEY, clock: new FastClock(), logger: memoryLogger(lines), retries: 1 });
    const results = [];
    for (const id of ["echo-404", "echo-422", "echo-500", "echo-invalid", "echo-text"])
      results.push(await api.getServer(id));
    const kinds = results.map((r) => (r.ok ? "ok" : r.error.kind));
    expect(kinds).toEqual(["NotFound", "ClientError", "ServerError", "InvalidResponse", "InvalidResponse"]);
    const everything = JSON.stringify({
      results,
      lines,
      described: results.map((r) => !r.ok && describeError(r.error)),
    });
    expect(everything).not.toContain(KEY);
    expect(everything).toContain("***");
    expect(lines.length).toBeGreaterThan(0);
  });

  test("Retry-After as an HTTP date closes the gate until that time", async () => {
    const clock = new FastClock(Date.UTC(2026, 0, 1, 0, 0, 0));
    const api = createApi({ url: base, key: KEY, clock });
    const r = await api.getServer("date-429");
    expect(r.ok ? 0 : r.error.kind === "RateLimited" && r.error.retryAfterMs).toBe(20_000);
  });

  test("Retry-After as an HTTP date, this machine's clock an hour behind the service's: 20 s, not an hour", async () => {
    const clock = new FastClock(Date.UTC(2025, 11, 31, 23, 0, 0)); // a VM resumed, its clock not synced yet
    const api = createApi({ url: base, key: KEY, clock });
    const r = await api.getServer("date-429");
    expect(r.ok ? 0 : r.error.kind === "RateLimited" && r.error.retryAfterMs).toBe(20_000);
    expect(api.rateLimitedMs).toBe(20_000);
  });

  test("a 429 without Retry-After waits the default minute", async () => {
    const api = createApi({ url: base, key: KEY, clock: new FastClock() });
    const r = await api.getServer("no-header-429");
    expect(r.ok).toBe(false);
    if (!r.ok && r.error.kind === "RateLimited") {
      expect(r.error.retryAfterMs).toBe(60_000);
      expect(r.error.message).toBe("slow down");
    } else throw new Error("expected RateLimited");
  });

  test("any 2xx is success and the user agent is sent", async () => {
    const api = createApi({ url: base, key: KEY, userAgent: "hub-agent/test" });
    const r = await api.getServer("accepted");
    expect(r.ok && r.status).toBe(202);
    expect(r.ok && r.headers.get("x-seen-ua")).toBe("hub-agent/test");
  });
});

describe("whether the service answers at all (Api.unreachable)", () => {
  test("set by an attempt nobody answered, from the first; cleared by any answer, an error status too", async () => {
    const clock = new FastClock();
    const refused = createApi({ url: "http://127.0.0.1:9/base/v1/", key: KEY, clock, retries: 1 });
    expect(refused.unreachable).toBeUndefined();
    const since = clock.monotonic();
    await refused.getServer("x");
    const error = expect.stringContaining("network error: connection refused");
    expect(refused.unreachable).toEqual({ since, last: clock.monotonic(), error }); // the retry came after a backoff
    await refused.getServer("x"); // later, after two more attempts: still since the first, the last one now
    expect(refused.unreachable).toEqual({ since, last: clock.monotonic(), error });
    expect(clock.monotonic()).toBeGreaterThan(since);
    const api = createApi({ url: base, key: KEY, clock: new FastClock(), timeoutMs: 200 });
    await api.getServer("slow");
    expect(api.unreachable?.error).toContain("timed out");
    await api.getServer("echo-500");
    expect(api.unreachable).toBeUndefined();
  });

  test("an attempt sent before an answered one, failing after it, says nothing of the service now", async () => {
    const api = createApi({ url: base, key: KEY, timeoutMs: 300, retries: 0 });
    const slow = api.getServer("slow"); // times out at 300 ms
    await Bun.sleep(20);
    expect((await api.getServer("accepted")).ok).toBe(true);
    expect((await slow).ok).toBe(false);
    expect(api.unreachable).toBeUndefined();
  });
});

describe("response size cap", () => {
  test("a 100 MB answer is abandoned at the cap: a clear error naming endpoint and cap, the rest never read", async () => {
    served = 0;
    const cap = 1024 * 1024;
    const api = createApi({ url: base, key: KEY, clock: new FastClock(), retries: 2, maxResponseBytes: cap });
    const r = await api.getGroups();
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toMatchObject({ kind: "InvalidResponse", field: "(body)", status: 200 });
    expect(describeError(r.error)).toBe(
      "GET /group/: invalid response at (body): response larger than the 1048576-byte cap (api.max_response_bytes); not read",
    );
    // Not retried (the answer would be as large again), and the server stopped soon after the cap: socket buffers
    // hold a few MB at most, nowhere near the 100 MB it would have sent.
    expect(served).toBeGreaterThan(cap);
    expect(served).toBeLessThan(cap + 16 * 1024 * 1024);
  });

  test("a Content-Length over the cap is refused before the body is read", async () => {
    const api = createApi({ url: base, key: KEY, clock: new FastClock(), maxResponseBytes: 1024 });
    const r = await api.getServer("announced-huge");
    expect(!r.ok && r.error.kind === "InvalidResponse" && r.error.message).toBe(
      "response larger than the 1024-byte cap (api.max_response_bytes); not read",
    );
  });

  test("under the default cap (16 MiB) answers are read whole", async () => {
    const api = createApi({ url: base, key: KEY, clock: new FastClock() });
    const r = await api.getServer("accepted");
    expect(r.ok && r.value.id).toBe("s");
  });
});
