import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import de from "../lang/de.json" with { type: "json" };
import en from "../lang/en.json" with { type: "json" };
import { memoryLogger } from "../lib/log.ts";
import { fill, loadMessages, type MessageKey, MessagesError } from "../lib/messages.ts";

/** Load with an in-memory file system: path → contents. */
function load(lang: string, files: Record<string, string> = {}, baseDir = "/cfg") {
  const logger = memoryLogger();
  const reads: string[] = [];
  const readFile = (p: string) => {
    reads.push(p);
    const text = files[p];
    if (text === undefined) throw Object.assign(new Error(`ENOENT: ${p}`), { code: "ENOENT" });
    return text;
  };
  return { logger, reads, messages: loadMessages(lang, { logger, readFile, baseDir }) };
}

const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
const entries = (json: Record<string, Record<string, string>>) =>
  Object.entries(json).flatMap(([s, keys]) => Object.entries(keys).map(([k, t]) => [`${s}.${k}`, t] as const));

describe("language files", () => {
  test("de has exactly the keys of en, with the same placeholders", () => {
    const german = new Map(entries(de));
    expect([...german.keys()].sort()).toEqual(
      entries(en)
        .map(([k]) => k)
        .sort(),
    );
    for (const [key, text] of entries(en))
      expect([key, placeholders(german.get(key)!)]).toEqual([key, placeholders(text)]);
  });
  test("no text is empty", () => {
    for (const [key, text] of [...entries(en), ...entries(de)]) expect([key, text.length > 0]).toEqual([key, true]);
  });
});

describe("t()", () => {
  const cases: { lang: string; key: MessageKey; vars?: Record<string, string | number>; want: string }[] = [
    { lang: "en", key: "group.added", vars: { group: "vip" }, want: "You were added to the group vip." },
    { lang: "de", key: "group.removed", vars: { group: "vip" }, want: "Du wurdest aus der Gruppe vip entfernt." },
    {
      lang: "en",
      key: "dashboard.link",
      vars: { url: "https://hub.example/server-dashboard/s1" },
      want: "Server dashboard: https://hub.example/server-dashboard/s1",
    },
    {
      lang: "en",
      key: "ban.kick",
      vars: { reason: "cheating", creator: "Alice", end: "never", ban_id: "b-1" },
      want: "You are banned from this server. Reason: cheating | Banned by: Alice | Until: never | Ban ID: b-1",
    },
    { lang: "de", key: "ban.never", want: "nie" },
    { lang: "en", key: "ban.minutes", vars: { minutes: 30 }, want: "for 30 minutes" },
    { lang: "en", key: "ban.refused", vars: { player: "Bob" }, want: "VyHub refused the ban of Bob: {error}" },
    {
      lang: "en",
      key: "warn.received",
      vars: { creator: "$& $1 $$", reason: "100% {reason} %s" },
      want: "You have received a warning from $& $1 $$: 100% {reason} %s",
    },
    {
      lang: "DE_at",
      key: "service.unreachable",
      want: "VyHub ist nicht erreichbar; zwischengespeicherte Daten werden verwendet.",
    },
    {
      lang: "de-DE",
      key: "playtime.self",
      vars: { hours: 1.5 },
      want: "Deine Spielzeit auf diesem Server: 1.5 Stunden.",
    },
  ];
  for (const c of cases) {
    test(`${c.lang} ${c.key}`, async () => {
      const { messages, logger } = load(c.lang);
      expect((await messages).t(c.key, c.vars)).toBe(c.want);
      expect(logger.lines).toEqual([]);
    });
  }

  test("fill: one pass, literal values, unknown placeholders stay", () => {
    expect(fill("{a}{b}{a}", { a: "{b}", b: "$&" })).toBe("{b}$&{b}");
    expect(fill("{missing} {toString} {__proto__}")).toBe("{missing} {toString} {__proto__}");
    expect(fill("{ spaced } {}", { spaced: "x" })).toBe("{ spaced } {}");
  });
});

describe("the operator's own file", () => {
  test("relative path resolved from baseDir; missing keys fall back to English, reported once per key", async () => {
    const path = resolve("/cfg", "lang/custom.json");
    const { messages, logger, reads } = load("lang/custom.json", {
      [path]: JSON.stringify({ group: { added: "Welcome to {group}, {player}!" } }),
    });
    const m = await messages;
    expect(reads).toEqual([path]);
    expect(m.lang).toBe(path);
    expect(m.t("group.added", { group: "vip", player: "Bob" })).toBe("Welcome to vip, Bob!");
    expect(m.t("group.removed", { group: "vip" })).toBe("You were removed from the group vip.");
    expect(m.t("group.removed", { group: "mod" })).toBe("You were removed from the group mod.");
    m.t("ban.never");
    const warns = logger.lines.filter((l) => l.level === "warn").map((l) => l.data?.key);
    expect(warns).toEqual(["group.removed", "ban.never"]);
  });

  test("flat keys work; unknown keys are reported at load; a BOM is fine", async () => {
    const { messages, logger } = load("/abs/x.json", {
      "/abs/x.json": `\uFEFF{"ban.never": "jamais", "ban.nevr": "typo"}`,
    });
    expect((await messages).t("ban.never")).toBe("jamais");
    expect(logger.lines.map((l) => [l.level, l.data?.key])).toEqual([["warn", "ban.nevr"]]);
  });

  test("a key unknown everywhere returns the key, reported once", async () => {
    const { messages, logger } = load("en");
    const m = await messages;
    const key = "no.such" as MessageKey;
    expect(m.t(key)).toBe("no.such");
    expect(m.t(key)).toBe("no.such");
    expect(logger.lines.length).toBe(1);
  });

  test("reads a real file with the default reader", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hub-lang-"));
    writeFileSync(join(dir, "fr.json"), JSON.stringify({ ban: { never: "jamais" } }));
    const m = await loadMessages("fr.json", { logger: memoryLogger(), baseDir: dir });
    expect(m.t("ban.never")).toBe("jamais");
  });

  const failures: { name: string; lang: string; files?: Record<string, string>; want: RegExp[] }[] = [
    { name: "missing file", lang: "./nope.json", want: [/\/cfg\/nope\.json/, /no such file/, /lang setting/] },
    {
      name: "bad JSON",
      lang: "/x.json",
      files: { "/x.json": "{ group: " },
      want: [/\/x\.json/, /not valid JSON/, /fix the syntax/],
    },
    { name: "top level not an object", lang: "/x.json", files: { "/x.json": "[]" }, want: [/\/x\.json/, /top level/] },
    {
      name: "too deep",
      lang: "/x.json",
      files: { "/x.json": '{"ban": {"kick": {"a": "b"}}}' },
      want: [/"ban\.kick" must be a text/],
    },
    {
      name: "number value",
      lang: "/x.json",
      files: { "/x.json": '{"ban": 3}' },
      want: [/"ban" must be a text or an object/],
    },
    { name: "unknown locale", lang: "fr", want: [/unknown language "fr"/, /en, de/, /path/] },
  ];
  for (const c of failures) {
    test(`refused: ${c.name}`, async () => {
      const err = await load(c.lang, c.files).messages.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(MessagesError);
      for (const re of c.want) expect((err as Error).message).toMatch(re);
    });
  }
});
