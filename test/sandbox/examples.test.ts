// With its clock at the examples' "now", the sandbox answers every read-only example of api-examples.json exactly.
import { expect, test } from "bun:test";
import examples from "../fixtures/api-examples.json";
import { start } from "./helpers.ts";

interface Example {
  request: { method: string; path: string; query?: Record<string, unknown>; body?: unknown };
  response: { status: number; body: unknown };
}

const READ_ONLY = [
  "01 GET /server/{server_id}",
  "03 GET /user/{id}?type=",
  "03b GET /user/{id}?type= (unknown user)",
  "05 GET /user/{user_id}/group?serverbundle_id=",
  "06 GET /group/",
  "09 GET /user/{user_id}/membership?serverbundle_id=",
  "11 GET /server/bundle/{serverbundle_id}/ban?active=true",
  "15 GET /user/attribute/definition/playtime",
  "18 GET /packet/reward/applied/user",
  "20 GET /advert/?serverbundle_id=&enabled=true",
  "X1 GET /ban/{uuid}",
  "X2 GET /warning/{uuid}",
  "X4 GET /user/ (paginated, post-2.0.19)",
  "X6 GET /warning/?user_id= (list a user's warnings)",
  "X7 GET /ban/?user_id= (list a user's bans)",
  "X8 GET /server/bundle/{uuid}/warning?active=true",
  "X10 GET /server/bundle/{uuid}",
  "X11 GET /general/frontend-url",
  "X12 GET /openapi.json (health probe)",
  "E1 422 validation error (FastAPI/Pydantic v1)",
  "E2 403 permission error (morph user lacks property)",
] as const;

const all = examples as unknown as Record<string, Example>;

for (const name of READ_ONLY) {
  test(`example ${name}`, async () => {
    const sb = await start();
    const { request, response } = all[name]!;
    const query = Object.fromEntries(
      Object.entries(request.query ?? {}).map(([k, v]) => [k, Array.isArray(v) ? v.map(String) : String(v)]),
    );
    const reply = await sb.call(request.method, request.path, { query, body: request.body });
    expect(reply.status).toBe(response.status);
    expect(reply.headers.get("content-type")).toBe("application/json");
    if (name.startsWith("X12")) expect(reply.body.info).toEqual({ title: "VyHub API", version: "2.1.2" });
    else expect(reply.body).toEqual(response.body);
  });
}

test("example E3: a wrong token gets 401 invalid_token", async () => {
  const sb = await start();
  const reply = await sb.call("GET", `/server/${sb.serverId}`, { auth: "Bearer wrong" });
  expect(reply.status).toBe(401);
  expect(reply.body).toEqual(all["E3 401 bad/expired token"]!.response.body);
});

test("durations are written as floats, like Pydantic (604800.0)", async () => {
  const sb = await start();
  const reply = await sb.call("GET", "/ban/b54c70b8-f535-4614-b6b3-472feb637a98");
  expect(reply.text).toContain('"length":604800.0');
});
