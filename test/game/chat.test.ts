import { describe, expect, test } from "bun:test";
import { parseChatCommand } from "../../lib/game/chat.ts";

describe("parseChatCommand", () => {
  const cases: [string, string, ReturnType<typeof parseChatCommand>][] = [
    ["!dashboard", "!", { command: "dashboard", args: [] }],
    ["!DashBoard  ", "!", { command: "dashboard", args: [] }],
    ["!ban Bob 1h", "!", { command: "ban", args: ["Bob", "1h"] }],
    ['!warn "Bad Guy" mic spam', "!", { command: "warn", args: ["Bad Guy", "mic", "spam"] }],
    ['!warn "unclosed quote', "!", { command: "warn", args: ["unclosed quote"] }],
    ['!say ""', "!", { command: "say", args: [""] }],
    ["!a\tb\tc", "!", { command: "a", args: ["b", "c"] }],
    ["/shop", "/", { command: "shop", args: [] }],
    ["hello", "!", undefined],
    ["!", "!", undefined],
    ["!   ", "!", undefined],
    [" !dashboard", "!", undefined],
    ["!dashboard", "", undefined],
  ];
  test.each(cases)("%p with prefix %p", (text, prefix, expected) => {
    expect(parseChatCommand(text, prefix)).toEqual(expected);
  });
});
