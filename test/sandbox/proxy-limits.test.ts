/** The sandbox refuses what nginx in front of the service refuses with its defaults: long request lines, big bodies. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createApi } from "../../lib/api/client.ts";
import type { RequestEvent } from "../../lib/api/request.ts";
import { MAX_BODY_BYTES, MAX_REQUEST_LINE, requestLineLength } from "../../lib/sandbox/handler.ts";
import { startSandbox, type Sandbox } from "../../lib/sandbox/index.ts";

let sb: Sandbox;
beforeAll(async () => {
  sb = await startSandbox();
});
afterAll(() => sb.stop());

const auth = () => ({ authorization: `Bearer ${sb.key}` });
/** A GET of the applied rewards whose request line is exactly `length` bytes. */
function rewardsUrl(length: number): URL {
  const url = new URL(`${sb.url}/packet/reward/applied/user?active=true&user_id=`);
  const pad = length - requestLineLength("GET", url);
  url.search = `?active=true&user_id=${"a".repeat(pad)}`;
  expect(requestLineLength("GET", url)).toBe(length);
  return url;
}

test("a request line of 8 KiB passes; one byte more is nginx's 414 page, logged as such", async () => {
  const fits = await fetch(rewardsUrl(MAX_REQUEST_LINE), { headers: auth() });
  expect(fits.status).toBe(422); // the service's answer: a user_id that is not a uuid
  const over = await fetch(rewardsUrl(MAX_REQUEST_LINE + 1), { headers: auth() });
  expect(over.status).toBe(414);
  expect(over.headers.get("content-type")).toBe("text/html");
  expect(await over.text()).toContain("<center><h1>414 Request-URI Too Large</h1></center>");
  expect(sb.control.requests({ path: "/packet/reward/applied/user" }).map((r) => r.status)).toEqual([422, 414]);
});

test("a body over 1 MiB is 413 (announced or not), and the client counts it as too_large", async () => {
  const body = (bytes: number) => JSON.stringify({ users_current: 1, pad: "x".repeat(bytes - 32) });
  const over = await fetch(`${sb.url}/server/${sb.serverId}`, {
    method: "PATCH",
    headers: { ...auth(), "content-type": "application/json" },
    body: body(MAX_BODY_BYTES + 10),
  });
  expect(over.status).toBe(413);
  const streamed = await fetch(`${sb.url}/server/${sb.serverId}`, {
    method: "PATCH",
    headers: { ...auth(), "content-type": "application/json" },
    body: new Blob([body(MAX_BODY_BYTES + 10)]).stream(),
  });
  expect(streamed.status).toBe(413);

  const events: RequestEvent[] = [];
  const api = createApi({ url: sb.url, key: sb.key, onRequest: (e) => events.push(e) });
  const res = await api.patchServer(sb.serverId, {
    user_activities: Array.from({ length: 20_000 }, () => ({ user_id: crypto.randomUUID(), extra: { Nickname: "x" } })),
  });
  expect(res.ok ? 200 : res.error.kind === "ClientError" && res.error.status).toBe(413);
  expect(events.map((e) => e.outcome)).toEqual(["too_large"]);
});
