import { afterAll, beforeAll, expect, test } from "bun:test";
import { createApi } from "../../lib/api/client.ts";
import {
  credentialProblem,
  describeCredentialProblem,
  guardCredentials,
  type CredentialProblem,
} from "../../lib/api/credentials.ts";
import { ManualClock } from "../../lib/clock.ts";
import { startSandbox, type Sandbox } from "../../lib/sandbox/index.ts";

let sb: Sandbox;
beforeAll(async () => void (sb = await startSandbox()));
afterAll(() => sb?.stop());

test("which refusals are the agent's own: 401 anywhere; 403 and 404 only on the server's record", () => {
  const e = (kind: "ClientError" | "NotFound", status: number, endpoint: string, code?: string) =>
    credentialProblem({ kind, status, endpoint, message: "x", ...(code ? { code } : {}) } as never)?.kind;
  expect(e("ClientError", 401, "POST /ban/")).toBe("key_refused");
  expect(e("ClientError", 403, "GET /server/541d1c41")).toBe("key_refused");
  expect(e("ClientError", 403, "POST /ban/")).toBeUndefined(); // an --as user without the permission
  // The service's own not_found: it has the path, and no such server.
  expect(e("NotFound", 404, "GET /server/541d1c41", "not_found")).toBe("unknown_server");
  expect(e("NotFound", 404, "PATCH /server/541d1c41", "not_found")).toBe("unknown_server");
  // A 404 without the service's error code (routing's {"detail": "Not Found"}, a gateway's page): no such path.
  expect(e("NotFound", 404, "GET /server/541d1c41")).toBe("wrong_path");
  expect(e("NotFound", 404, "GET /server/bundle/x/ban")).toBeUndefined();
  expect(e("NotFound", 404, "GET /user/123")).toBeUndefined();
});

test("a wrong instance path in api.url is named as such, not as an unknown server id", async () => {
  const wrongPath = sb.url.replace(/\/sandbox\/v1$/, "/wrong/v1");
  expect(wrongPath).not.toBe(sb.url);
  const { api, problem } = guardCredentials(createApi({ url: wrongPath, key: sb.key, retries: 0 }), {
    clock: new ManualClock(),
    baseMs: 1_000,
    maxMs: 3_000,
  });
  expect((await api.getServer(sb.serverId)).ok).toBe(false);
  expect(problem()?.kind).toBe("wrong_path");
  const line = describeCredentialProblem(problem()!, sb.serverId);
  expect(line).toStartWith("the service has no such path (GET /server/");
  expect(line).toContain("check the path of api.url / HUB_API_URL");
  expect(line).not.toContain("server id");

  // The right path and an unknown server id: the service's own 404.
  const right = guardCredentials(createApi({ url: sb.url, key: sb.key, retries: 0 }), {
    clock: new ManualClock(),
    baseMs: 1_000,
    maxMs: 3_000,
  });
  expect((await right.api.getServer("00000000-0000-4000-8000-000000000000")).ok).toBe(false);
  expect(right.problem()?.kind).toBe("unknown_server");
});

test("while the key is refused, calls fail at once; one is let through after a pause that doubles up to the cap", async () => {
  const clock = new ManualClock();
  const changes: [string | undefined, string | undefined][] = [];
  const kind = (p?: CredentialProblem) => p?.kind;
  const { api, problem, waitMs } = guardCredentials(createApi({ url: sb.url, key: sb.key, retries: 0 }), {
    clock,
    baseMs: 1_000,
    maxMs: 3_000,
    onChange: (p, prev) => void changes.push([kind(p), kind(prev)]),
  });
  const sent = () => sb.control.requests().length;
  sb.control.failNext({}, 100, 401, { detail: "Invalid token" });

  expect((await api.getGroups()).ok).toBe(false);
  expect(problem()?.kind).toBe("key_refused");
  expect(waitMs()).toBe(1_000);
  const before = sent();
  const gated = await api.getServer(sb.serverId);
  expect(gated.ok || gated.error.kind).toBe("ClientError"); // the refusal, not sent
  expect(sent()).toBe(before);

  for (const [i, pause] of [1_000, 2_000, 3_000, 3_000].entries()) {
    await clock.advance(pause);
    expect(waitMs()).toBe(0);
    await api.getGroups();
    expect(sent()).toBe(before + 1 + i);
    expect(waitMs()).toBe(Math.min(pause * 2, 3_000));
    await clock.advance(0);
  }
  expect(changes).toEqual([["key_refused", undefined]]); // said once

  sb.control.reset();
  await clock.advance(3_000);
  expect((await api.getGroups()).ok).toBe(true);
  expect(problem()).toBeUndefined();
  expect(waitMs()).toBe(0);
  expect(changes).toEqual([
    ["key_refused", undefined],
    [undefined, "key_refused"],
  ]);
  // Another failure (no answer) says nothing about the key.
  sb.control.failNext({}, 1, 503);
  expect((await api.getGroups()).ok).toBe(false);
  expect(problem()).toBeUndefined();
});

test("an unknown server id is known again only when the server's record answers, not any other request", async () => {
  const changes: (string | undefined)[] = [];
  const { api, problem, waitMs } = guardCredentials(createApi({ url: sb.url, key: sb.key, retries: 0 }), {
    clock: new ManualClock(),
    baseMs: 1_000,
    maxMs: 3_000,
    onChange: (p) => void changes.push(p?.kind),
  });
  sb.control.failNext({ path: /^\/server\/[^/]+$/ }, 2, 404);
  expect((await api.getServer(sb.serverId)).ok).toBe(false);
  expect(problem()?.kind).toBe("unknown_server");
  expect(waitMs()).toBe(0); // nothing is held back: the key works for everything else
  expect((await api.getGroups()).ok).toBe(true);
  expect(problem()?.kind).toBe("unknown_server");
  expect((await api.patchServer(sb.serverId, { user_count: 0 } as never)).ok).toBe(false);
  expect((await api.getServer(sb.serverId)).ok).toBe(true);
  expect(problem()).toBeUndefined();
  expect(changes).toEqual(["unknown_server", undefined]);
});
