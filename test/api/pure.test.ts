import { describe, expect, test } from "bun:test";
import * as v from "valibot";
import {
  AdvertSchema,
  AppliedRewardMapSchema,
  AppliedRewardSchema,
  AttributeDefinitionSchema,
  BanListSchema,
  BanPageSchema,
  BanSchema,
  buildQuery,
  collectSkipped,
  describeError,
  GroupSchema,
  isRejected,
  joinUrl,
  MembershipSchema,
  parseErrorBody,
  parseRetryAfter,
  redact,
  ServerSchema,
  SuccessSchema,
  TimestampSchema,
  UserAttributeSchema,
  UserSchema,
  WarningPageSchema,
  WarningSchema,
} from "../../lib/api/client.ts";
import examples from "../fixtures/api-examples.json";

type Example = { response: { status: number; body: unknown } };
const ex = examples as unknown as Record<string, Example>;
const body = (key: string) => {
  const e = ex[key];
  if (!e) throw new Error(`no example ${key}`);
  return e.response.body;
};

describe("joinUrl", () => {
  test("keeps the base path and the canonical trailing slash", () => {
    expect(joinUrl("https://api.vyhub.app/inst/v1", "/group/")).toBe("https://api.vyhub.app/inst/v1/group/");
    expect(joinUrl("https://api.vyhub.app/inst/v1/", "/server/abc")).toBe("https://api.vyhub.app/inst/v1/server/abc");
    expect(joinUrl("https://x.org/api/v1//", "/ban/")).toBe("https://x.org/api/v1/ban/");
    expect(joinUrl("http://127.0.0.1:8080", "/user/attribute/definition")).toBe(
      "http://127.0.0.1:8080/user/attribute/definition",
    );
  });
});

describe("buildQuery", () => {
  test("arrays repeat the key, booleans are true/false, empty values vanish", () => {
    expect(buildQuery({ user_id: ["a", "b"], active: true, foreign_ids: false, x: undefined, y: null })).toBe(
      "?user_id=a&user_id=b&active=true&foreign_ids=false",
    );
    expect(buildQuery({})).toBe("");
    expect(buildQuery(undefined)).toBe("");
    expect(buildQuery({ q: "c d/é", page: 1 })).toBe("?q=c+d%2F%C3%A9&page=1");
  });
});

describe("parseRetryAfter", () => {
  const now = Date.UTC(2024, 5, 1, 12, 0, 0);
  test("delay-seconds", () => {
    expect(parseRetryAfter("30", now)).toBe(30_000);
    expect(parseRetryAfter(" 0 ", now)).toBe(0);
    expect(parseRetryAfter("1.5", now)).toBe(1_500);
  });
  test("HTTP date relative to the clock", () => {
    expect(parseRetryAfter("Sat, 01 Jun 2024 12:00:45 GMT", now)).toBe(45_000);
  });
  test("negative, past or otherwise unusable values get the default, never 0", () => {
    // A past date is a skewed clock; taken as 0 it let the agent retry at once.
    expect(parseRetryAfter("Sat, 01 Jun 2024 11:00:00 GMT", now)).toBe(60_000);
    expect(parseRetryAfter("Sat, 01 Jun 2024 12:00:00 GMT", now)).toBe(60_000);
    // Date.parse("-5") is a date in 2001: a negative delay must not be read as one.
    expect(parseRetryAfter("-5", now)).toBe(60_000);
    expect(parseRetryAfter("-0.5", now)).toBe(60_000);
    expect(parseRetryAfter("+5", now)).toBe(60_000);
    expect(parseRetryAfter("1e3", now)).toBe(60_000);
  });
  test("absent or garbage falls back, huge values are capped", () => {
    expect(parseRetryAfter(null, now)).toBe(60_000);
    expect(parseRetryAfter("soon", now)).toBe(60_000);
    expect(parseRetryAfter("", now, 5_000)).toBe(5_000);
    expect(parseRetryAfter("99999999", now)).toBe(3_600_000);
  });
});

describe("parseErrorBody", () => {
  test("validation array renders loc and msg", () => {
    expect(parseErrorBody(JSON.stringify(body("E1 422 validation error (FastAPI/Pydantic v1)")))).toEqual({
      message: "body.user_id: field required",
    });
    const two = {
      detail: [
        { loc: ["body", "a"], msg: "x" },
        { loc: ["query", "page"], msg: "y" },
      ],
    };
    expect(parseErrorBody(JSON.stringify(two)).message).toBe("body.a: x; query.page: y");
  });
  test("application error object carries code and msg", () => {
    expect(parseErrorBody(JSON.stringify(body("E2 403 permission error (morph user lacks property)")))).toEqual({
      message: "Missing properties: warning_edit",
      code: "missing_properties",
    });
  });
  test("plain string detail, raw text, empty body", () => {
    expect(parseErrorBody('{"detail":"Not Found"}')).toEqual({ message: "Not Found" });
    expect(parseErrorBody("upstream broke")).toEqual({ message: "upstream broke" });
    expect(parseErrorBody("", "Bad Gateway")).toEqual({ message: "Bad Gateway" });
  });
  test("HTML is never echoed and long text is capped", () => {
    const html = "<!DOCTYPE html><html><body><h1>502 Bad Gateway</h1>secret-ish</body></html>";
    expect(parseErrorBody(html)).toEqual({ message: "HTML error page" });
    expect(parseErrorBody("x".repeat(5000)).message.length).toBeLessThanOrEqual(300);
  });
});

describe("describeError", () => {
  test("one line per kind", () => {
    expect(
      describeError({
        kind: "ClientError",
        status: 422,
        endpoint: "POST /ban/",
        message: "body.user_id: field required",
      }),
    ).toBe("POST /ban/: 422 body.user_id: field required");
    expect(
      describeError({
        kind: "NotFound",
        status: 404,
        endpoint: "GET /user/1",
        message: "User not found.",
        code: "not_found",
      }),
    ).toBe("GET /user/1: 404 User not found. (not_found)");
    expect(
      describeError({ kind: "RateLimited", status: 429, endpoint: "GET /group/", message: "", retryAfterMs: 1500 }),
    ).toBe("GET /group/: 429 rate limited, retry in 2 s");
    expect(describeError({ kind: "Network", endpoint: "GET /group/", message: "no response", timeout: true })).toBe(
      "GET /group/: timed out: no response",
    );
    expect(describeError({ kind: "InvalidResponse", endpoint: "GET /group/", field: "0.name", message: "m" })).toBe(
      "GET /group/: invalid response at 0.name: m",
    );
    expect(
      describeError({ kind: "ServerError", status: 503, endpoint: "GET /group/", message: "HTML error page" }),
    ).toBe("GET /group/: 503 HTML error page");
  });
  test("isRejected: 4xx except 429", () => {
    expect(isRejected({ kind: "NotFound", status: 404, endpoint: "e", message: "" })).toBe(true);
    expect(isRejected({ kind: "ClientError", status: 403, endpoint: "e", message: "" })).toBe(true);
    expect(isRejected({ kind: "RateLimited", status: 429, endpoint: "e", message: "", retryAfterMs: 1 })).toBe(false);
    expect(isRejected({ kind: "ServerError", status: 500, endpoint: "e", message: "" })).toBe(false);
    expect(isRejected({ kind: "Network", endpoint: "e", message: "", timeout: false })).toBe(false);
    expect(isRejected({ kind: "InvalidResponse", endpoint: "e", field: "x", message: "" })).toBe(false);
  });
  test("redact removes every copy of the key", () => {
    expect(redact("a KEY b KEY", "KEY")).toBe("a *** b ***");
    expect(redact("abc", "")).toBe("abc");
  });
});

describe("schemas accept the contract examples", () => {
  const cases: [string, v.GenericSchema][] = [
    ["01 GET /server/{server_id}", ServerSchema],
    ["02 PATCH /server/{server_id}", ServerSchema],
    ["03 GET /user/{id}?type=", UserSchema],
    ["04 POST /user/", UserSchema],
    ["05 GET /user/{user_id}/group?serverbundle_id=", v.array(GroupSchema)],
    ["06 GET /group/", v.array(GroupSchema)],
    ["07 POST /user/{user_id}/membership", MembershipSchema],
    ["09 GET /user/{user_id}/membership?serverbundle_id=", v.array(MembershipSchema)],
    ["11 GET /server/bundle/{serverbundle_id}/ban?active=true", BanListSchema],
    ["12 POST /ban/", BanSchema],
    ["14 POST /warning/", WarningSchema],
    ["15 GET /user/attribute/definition/playtime", AttributeDefinitionSchema],
    ["16 POST /user/attribute/definition", AttributeDefinitionSchema],
    ["17 POST /user/attribute/", UserAttributeSchema],
    ["18 GET /packet/reward/applied/user", AppliedRewardMapSchema],
    ["19 PATCH /packet/reward/applied/{id}", AppliedRewardSchema],
    ["20 GET /advert/?serverbundle_id=&enabled=true", v.array(AdvertSchema)],
    ["X1 GET /ban/{uuid}", BanSchema],
    ["X2 GET /warning/{uuid}", WarningSchema],
    ["X3 DELETE /user/{uuid}/membership/by-group", SuccessSchema],
    ["X6 GET /warning/?user_id= (list a user's warnings)", WarningPageSchema],
    ["X7 GET /ban/?user_id= (list a user's bans)", BanPageSchema],
  ];
  for (const [key, schema] of cases) {
    test(key, () => {
      const r = v.safeParse(schema, body(key));
      expect(r.issues?.map((i) => `${v.getDotPath(i)}: ${i.message}`) ?? []).toEqual([]);
    });
  }

  test("open enums, unknown keys and nulls pass; loose objects keep extra keys", () => {
    const server = { ...(body("01 GET /server/{server_id}") as object), type: "NEW_GAME", status: "WEIRD", future: 1 };
    const r = v.parse(ServerSchema, server);
    expect(r.type).toBe("NEW_GAME");
    expect((r as Record<string, unknown>).future).toBe(1);
  });

  test("timestamps: offset or Z, optional fraction; not bare dates", () => {
    for (const ok of [
      "2024-05-30T20:14:03+00:00",
      "2024-05-30T22:14:03+02:00",
      "2024-06-01T11:58:21.904113Z",
      "2024-06-01T11:58:21.9z",
    ]) {
      expect(v.is(TimestampSchema, ok)).toBe(true);
    }
    for (const bad of ["2024-05-30", "2024-05-30T20:14:03", "yesterday"])
      expect(v.is(TimestampSchema, bad)).toBe(false);
  });

  test("a mismatch names the field path", () => {
    const bans = structuredClone(body("11 GET /server/bundle/{serverbundle_id}/ban?active=true")) as Record<
      string,
      Record<string, unknown>[]
    >;
    const first = bans["76561198087654322"]?.[0];
    if (first) first.created_on = 12;
    const server = { ...(body("01 GET /server/{server_id}") as Record<string, unknown>), port: "x" };
    const r = v.safeParse(ServerSchema, server);
    expect(r.success).toBe(false);
    expect(r.issues?.[0] && v.getDotPath(r.issues[0])).toBe("port");
    // In a list answer the bad item is left out and collected with its place, id and problem; the rest stays.
    const { result, skipped } = collectSkipped(() => v.safeParse(BanListSchema, bans));
    expect(result.success && result.output["76561198087654322"]).toEqual([]);
    expect(result.success && Object.keys(result.output)).toEqual(Object.keys(bans));
    expect(skipped).toEqual([
      {
        at: "76561198087654322[0]",
        id: first?.id as string,
        problem: "created_on: Invalid type: Expected string but received 12",
      },
    ]);
  });

  test("a keyed answer with one key that is no list: that key left out and collected, the others kept", () => {
    const bans = structuredClone(body("11 GET /server/bundle/{serverbundle_id}/ban?active=true")) as Record<
      string,
      unknown
    >;
    const kept = Object.keys(bans);
    bans["76561198000000099"] = null;
    const { result, skipped } = collectSkipped(() => v.safeParse(BanListSchema, bans));
    expect(result.success && Object.keys(result.output)).toEqual(kept);
    expect(skipped).toEqual([{ at: "76561198000000099", problem: "Invalid type: Expected Array but received null" }]);
  });

  test("expanded years (past 9999) are read, and Date.parse agrees", () => {
    expect(v.is(TimestampSchema, "+192159-03-15T07:46+00:00")).toBe(true);
    expect(Date.parse("+192159-03-15T07:46+00:00")).toBeGreaterThan(6e15);
    expect(v.is(TimestampSchema, "192159-03-15T07:46+00:00")).toBe(false);
  });
});
