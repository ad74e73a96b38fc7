import { describe, expect, test } from "bun:test";
import type { AppliedReward } from "../../lib/api/client.ts";
import { commandLines, fillTemplate, rewardValues, steamId32 } from "../../lib/rewards/replace.ts";
import { NO_QUOTES } from "../../lib/game/presets/quoting.ts";
import { SimGame } from "../../lib/game/sim.ts";
import { parseSimConsole } from "../support/sim-console.ts";
import { patchOutcome } from "../../lib/rewards/executed.ts";

const reward = (purchase: { amount_text: string } | null) =>
  ({
    id: "ar-1",
    active: true,
    status: "OPEN",
    executed_on: [],
    applied_packet_id: "ap-1",
    applied_packet: { id: "ap-1", packet: { id: "p-1", title: "VIP (30 days)" }, purchase },
    user: { id: "u-1", type: "STEAM", identifier: "76561198012345671" },
    reward: { id: "r-1", name: "VIP", type: "COMMAND", on_event: "DIRECT", data: { command: "" } },
  }) as unknown as AppliedReward;

describe("replacement values", () => {
  test("the spec's tokens and the addons' player tokens", () => {
    const values = rewardValues(reward({ amount_text: "4.99 €" }), { id: "76561198012345671", name: "Alice" }, "STEAM");
    expect(values).toEqual({
      user_id: "u-1",
      applied_packet_id: "ap-1",
      packet_title: "VIP (30 days)",
      purchase_amount: "4.99 €",
      nick: "Alice",
      player_id: "76561198012345671",
      user_type: "STEAM",
      user_identifier: "76561198012345671",
      steamid64: "76561198012345671",
      steamid32: "STEAM_0:1:26039971",
    });
  });

  test("no purchase is '-'; Steam ids only for Steam games", () => {
    const uuid = "069a79f4-44e9-4726-a5be-fca90e38aaf5";
    const values = rewardValues(reward(null), { id: uuid, name: "Notch" }, "MINECRAFT");
    expect(values.purchase_amount).toBe("-");
    expect(values.player_id).toBe(uuid);
    expect(values.steamid64).toBeUndefined();
    expect(values.steamid32).toBeUndefined();
  });

  test("steamId32", () => {
    expect(steamId32("76561197960265728")).toBe("STEAM_0:0:0");
    expect(steamId32("76561197960265729")).toBe("STEAM_0:1:0");
    expect(steamId32("76561198087654322")).toBe("STEAM_0:0:63694297");
    expect(steamId32("123")).toBeUndefined();
    expect(steamId32("00000000000000000")).toBeUndefined();
  });
});

describe("fillTemplate", () => {
  const esc = { escape: (v: string) => `<${v}>`, quoting: NO_QUOTES };

  test("every value escaped, tokens case-insensitive, unknown ones kept and listed once", () => {
    const { text, unknown } = fillTemplate(
      "give %NICK% %user_id% %char_name% %char_name% 100%",
      { nick: "A", user_id: "u" },
      esc,
    );
    expect(text).toBe("give <A> <u> %char_name% %char_name% 100%");
    expect(unknown).toEqual(["%char_name%"]);
  });

  test("one pass: a value holding a token or $& stays text", () => {
    const { text } = fillTemplate(
      "say %nick% %user_id%",
      { nick: "%user_id% $& $1", user_id: "u" },
      {
        escape: (v) => v,
        quoting: NO_QUOTES,
      },
    );
    expect(text).toBe("say %user_id% $& $1 u");
  });

  test("a hostile nick stays one argument of one command on the sim console", () => {
    for (const nick of ["x; op me", "x\nop me", 'x"; op me; "', "x\r\nquit", "x\u2028quit", '\\"; kill']) {
      const { text } = fillTemplate("say Welcome %nick%", { nick }, new SimGame());
      expect(parseSimConsole(text)).toEqual([["say", "Welcome", nick]]);
    }
  });
});

test("commandLines: one console line per template line, blanks dropped", () => {
  expect(commandLines("a 1\r\n\n  b 2  \rc 3\n")).toEqual(["a 1", "b 2", "c 3"]);
  expect(commandLines("  \n")).toEqual([]);
});

test("patchOutcome: 2xx sent, 4xx refused, 429/5xx/network retried", () => {
  const fail = (error: object) => ({
    ok: false as const,
    error: { endpoint: "PATCH", message: "x", ...error } as never,
  });
  expect(patchOutcome({ ok: true, status: 200, value: {}, headers: new Headers() })).toBe("sent");
  expect(patchOutcome(fail({ kind: "NotFound", status: 404 }))).toBe("refused");
  expect(patchOutcome(fail({ kind: "ClientError", status: 422 }))).toBe("refused");
  expect(patchOutcome(fail({ kind: "RateLimited", status: 429, retryAfterMs: 1000 }))).toBe("retry");
  expect(patchOutcome(fail({ kind: "ServerError", status: 503 }))).toBe("retry");
  expect(patchOutcome(fail({ kind: "Network", timeout: true }))).toBe("retry");
});
