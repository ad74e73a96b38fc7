// The controls tests and demos use: injected failures, latency, rate limits, outages and the request log.
import { expect, test } from "bun:test";
import { startSandbox } from "../../lib/sandbox/index.ts";
import { start } from "./helpers.ts";

test("failNext answers the next matching requests with the given status and JSON body, then recovers", async () => {
  const sb = await start();
  sb.control.failNext({ method: "GET", path: "/group/" }, 2, 503, { detail: "maintenance" });
  expect((await sb.call("GET", "/advert/")).status).toBe(200);
  for (let i = 0; i < 2; i++) {
    const reply = await sb.call("GET", "/group/");
    expect(reply.status).toBe(503);
    expect(reply.body).toEqual({ detail: "maintenance" });
    expect(reply.headers.get("content-type")).toBe("application/json");
  }
  expect((await sb.call("GET", "/group/")).status).toBe(200);
});

test("failNext sends a string body raw: invalid JSON, or an HTML page; without a body, the service's error shape", async () => {
  const sb = await start();
  sb.control.failNext({ path: /^\/user\// }, 1, 200, "{not json");
  const broken = await sb.call("GET", "/user/76561198087654322", { query: { type: "STEAM" } });
  expect(broken.status).toBe(200);
  expect(broken.text).toBe("{not json");
  sb.control.failNext({}, 1, 502, "<html><body>Bad gateway</body></html>", { "x-proxy": "edge" });
  const html = await sb.call("GET", "/group/");
  expect(html.headers.get("content-type")).toStartWith("text/html");
  expect(html.headers.get("x-proxy")).toBe("edge");
  sb.control.failNext({ method: "POST" }, 1, 500);
  expect((await sb.call("POST", "/ban/", { body: {} })).body.detail.code).toBe("internal_error");
});

test("rateLimit answers 429 with Retry-After for the next matching requests", async () => {
  const sb = await start();
  sb.control.rateLimit(1, 30, { path: "/group/" });
  const limited = await sb.call("GET", "/group/");
  expect(limited.status).toBe(429);
  expect(limited.headers.get("retry-after")).toBe("30");
  expect((await sb.call("GET", "/group/")).status).toBe(200);
});

test("limitRate: at most N matching requests in each second, 429 with Retry-After in whole seconds beyond; 0 lifts it", async () => {
  const sb = await start();
  // Start right after a second begins, so the burst falls in one window.
  await Bun.sleep(1000 - (performance.now() % 1000) + 5);
  sb.control.limitRate(5, { path: "/group/" });
  const answers = [];
  for (let i = 0; i < 8; i++) answers.push(await sb.call("GET", "/group/"));
  expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
  expect(answers[5]!.headers.get("retry-after")).toBe("1");
  expect((await sb.call("GET", "/advert/")).status).toBe(200); // not matched: not counted
  await Bun.sleep(1000);
  expect((await sb.call("GET", "/group/")).status).toBe(200); // a new second
  sb.control.limitRate(0);
  for (let i = 0; i < 8; i++) expect((await sb.call("GET", "/group/")).status).toBe(200);
});

test("latency delays matching requests until cleared; reset drops pending faults", async () => {
  const sb = await start();
  sb.control.latency(300, { path: "/group/" });
  const slow = sb.call("GET", "/group/");
  const fast = await sb.call("GET", "/advert/");
  expect(fast.status).toBe(200);
  // The delayed request is still in flight after the fast one finished.
  expect(sb.control.requests({ path: "/group/" })[0]!.status).toBe(0);
  expect((await slow).status).toBe(200);
  sb.control.latency(0);
  sb.control.failNext({}, 5, 500);
  sb.control.reset();
  expect((await sb.call("GET", "/group/")).status).toBe(200);
});

test("where picks requests by their body or path: a fault for one client's request among others alike", async () => {
  const sb = await start();
  const one = "76561198000000007";
  const where = (e: { body: unknown }) => (e.body as { identifier?: string } | null)?.identifier === one;
  sb.control.failNext({ method: "POST", path: "/user/", where }, 5, 502);
  sb.control.latency(300, { method: "POST", where }, { after: true });
  const started = performance.now();
  const other = await sb.call("POST", "/user/", { body: { type: "STEAM", identifier: "76561198000000008" } });
  expect([other.status, performance.now() - started < 300]).toEqual([200, true]);
  const picked = await sb.call("POST", "/user/", { body: { type: "STEAM", identifier: one } });
  expect([picked.status, performance.now() - started >= 300]).toEqual([502, true]);
  expect(sb.control.requests({ where }).map((e) => e.status)).toEqual([502]);
});

test("down refuses connections; up listens again on the same port with the same data", async () => {
  const sb = await start();
  await sb.call("POST", "/user/", { body: { type: "STEAM", identifier: "76561198000000001" } });
  await sb.control.down();
  await expect(fetch(`${sb.url}/group/`)).rejects.toThrow();
  await sb.control.up();
  const again = await sb.call("GET", "/user/76561198000000001", { query: { type: "STEAM" } });
  expect(again.status).toBe(200);
});

test("the request log keeps method, relative path, repeated query keys, parsed body, headers, status and time", async () => {
  const sb = await start();
  await sb.call("GET", "/packet/reward/applied/user", { query: { user_id: ["a", "b"] } });
  await sb.call("POST", "/ban/", { body: { user_id: sb.state.users.keys().next().value, length: 60 } });
  const [get, post] = sb.control.requests();
  expect(get).toMatchObject({
    method: "GET",
    path: "/packet/reward/applied/user",
    query: [
      ["user_id", "a"],
      ["user_id", "b"],
    ],
    body: null,
    status: 422,
  });
  expect(post).toMatchObject({ method: "POST", path: "/ban/", body: { length: 60 }, status: 200, time: sb.clock.now });
  expect(post!.headers.authorization).toBe(`Bearer ${sb.key}`);
  expect(sb.control.requests({ method: "post" })).toEqual([post!]);
  expect(sb.control.requests({ path: /reward/ })).toEqual([get!]);
  sb.control.clearRequests();
  expect(sb.control.requests()).toEqual([]);
});

test("a sandbox on a fixed port answers on it", async () => {
  const probe = await startSandbox();
  const port = Number(new URL(probe.url).port);
  await probe.stop();
  const sb = await startSandbox({ port, key: "fixed" });
  try {
    expect(sb.url).toBe(`http://127.0.0.1:${port}/sandbox/v1`);
    expect((await fetch(`${sb.url}/openapi.json`)).status).toBe(200);
  } finally {
    await sb.stop();
  }
});

test("the handler is web-standard: it answers a Request directly, without a listening server", async () => {
  const { createSandboxHandler, createSandboxState } = await import("../../lib/sandbox/index.ts");
  const handle = createSandboxHandler(createSandboxState("empty"), undefined, { basePath: "/v1", key: "k" });
  const res = await handle(new Request("http://vyhub.test/v1/group/", { headers: { authorization: "Bearer k" } }));
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual([]);
});
