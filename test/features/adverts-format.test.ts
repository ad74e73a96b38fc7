import { describe, expect, test } from "bun:test";
import type { Advert } from "../../lib/api/client.ts";
import {
  advertPrefix,
  AdvertRotation,
  type ColourMode,
  enabledAdverts,
  formatAdvert,
  renderColourTags,
} from "../../lib/features/adverts-format.ts";

function advert(id: string, sort_id: number | null, enabled = true): Advert {
  return { id, title: null, content: `advert ${id}`, sort_id, color: null, enabled };
}

const ids = (list: (Advert | undefined)[]) => list.map((a) => a?.id);
const take = (r: AdvertRotation, n: number) => ids(Array.from({ length: n }, () => r.next()));

describe("enabledAdverts", () => {
  test("drops disabled adverts and orders by sort_id; missing sort_id last; ties keep API order", () => {
    const list = [
      advert("c", 3),
      advert("none", null),
      advert("off", 0, false),
      advert("a", 1),
      advert("b1", 2),
      advert("b2", 2),
    ];
    expect(ids(enabledAdverts(list))).toEqual(["a", "b1", "b2", "c", "none"]);
  });
  test("an empty list stays empty", () => expect(enabledAdverts([])).toEqual([]));
});

describe("AdvertRotation", () => {
  const abc = [advert("a", 1), advert("b", 2), advert("c", 3)];

  test("cycles in order and wraps with no empty tick", () => {
    expect(take(new AdvertRotation(abc), 7)).toEqual(["a", "b", "c", "a", "b", "c", "a"]);
  });
  test("nothing to show → undefined, every time", () => {
    expect(take(new AdvertRotation([advert("x", 1, false)]), 2)).toEqual([undefined, undefined]);
  });
  test("a single advert repeats", () => expect(take(new AdvertRotation([advert("a", 1)]), 3)).toEqual(["a", "a", "a"]));

  const refreshes: { name: string; shown: number; next: Advert[]; want: string[] }[] = [
    { name: "same list: no repeat, no skip", shown: 2, next: abc, want: ["c", "a", "b"] },
    {
      name: "new advert after the current one is shown next",
      shown: 1,
      next: [...abc, advert("ab", 1.5)],
      want: ["ab", "b", "c"],
    },
    {
      name: "new advert before the current one waits for the next cycle",
      shown: 2,
      next: [advert("0", 0), ...abc],
      want: ["c", "0", "a"],
    },
    {
      name: "the advert shown last was removed: continue with its successor",
      shown: 2,
      next: [abc[0]!, abc[2]!],
      want: ["c", "a", "c"],
    },
    { name: "everything after the last one removed: wrap to the start", shown: 2, next: [abc[0]!], want: ["a", "a"] },
    { name: "at the end of a cycle: start again", shown: 3, next: abc, want: ["a", "b"] },
    {
      name: "last advert disabled by the refresh",
      shown: 1,
      next: [advert("a", 1, false), abc[1]!, abc[2]!],
      want: ["b", "c", "b"],
    },
  ];
  for (const c of refreshes) {
    test(`refresh: ${c.name}`, () => {
      const r = new AdvertRotation(abc);
      take(r, c.shown);
      r.update(c.next);
      expect(take(r, c.want.length)).toEqual(c.want);
    });
  }

  test("refresh to empty and back continues where it was", () => {
    const r = new AdvertRotation(abc);
    take(r, 1);
    r.update([]);
    expect(r.next()).toBeUndefined();
    r.update(abc);
    expect(take(r, 2)).toEqual(["b", "c"]);
  });
  test("the first list may arrive later", () => {
    const r = new AdvertRotation();
    expect(r.next()).toBeUndefined();
    r.update(abc);
    expect(r.size).toBe(3);
    expect(take(r, 2)).toEqual(["a", "b"]);
  });
});

describe("formatAdvert", () => {
  const cases: { name: string; content: string; colours: ColourMode; want: string[] }[] = [
    { name: "one line, prefixed", content: "Visit our shop!", colours: "strip", want: ["[★] Visit our shop!"] },
    { name: "split on \\n, every line prefixed", content: "one\ntwo", colours: "strip", want: ["[★] one", "[★] two"] },
    { name: "\\r\\n content keeps no \\r", content: "one\r\ntwo\r\n", colours: "strip", want: ["[★] one", "[★] two"] },
    { name: "blank lines skipped", content: "one\n\n  \ntwo", colours: "strip", want: ["[★] one", "[★] two"] },
    {
      name: "strip: tags removed",
      content: "Join <green>Discord</green> or <PINK>shop</PINK>",
      colours: "strip",
      want: ["[★] Join Discord or shop"],
    },
    {
      name: "minecraft: § codes, closing resets",
      content: "<red>a</red> <green>b</green> <blue>c</blue> <yellow>d</yellow> <pink>e</pink>",
      colours: "minecraft",
      want: ["[★] §ca§r §ab§r §9c§r §ed§r §de§r"],
    },
    {
      name: "quake: ^ codes, closing resets to white",
      content: "<red>a</red> <green>b</green> <blue>c</blue> <yellow>d</yellow> <pink>e</pink>",
      colours: "quake",
      want: ["[★] ^1a^7 ^2b^7 ^4c^7 ^3d^7 ^6e^7"],
    },
    {
      name: "nested: closing returns to the outer colour",
      content: "<red>a <green>b</green> c</red>",
      colours: "minecraft",
      want: ["[★] §ca §ab§c c§r"],
    },
    {
      name: "colour open across lines carries over",
      content: "<red>one\ntwo</red> three",
      colours: "quake",
      want: ["[★] ^1one", "[★] ^1two^7 three"],
    },
    {
      name: "unknown tags and stray < stay literal",
      content: "<orange>hi</orange> <3 a<b",
      colours: "minecraft",
      want: ["[★] <orange>hi</orange> <3 a<b"],
    },
    {
      name: "existing game codes pass through",
      content: "§6gold ^5cyan",
      colours: "strip",
      want: ["[★] §6gold ^5cyan"],
    },
    { name: "$& and % are plain text", content: "50% off $& more", colours: "quake", want: ["[★] 50% off $& more"] },
    { name: "empty content → no lines", content: "", colours: "strip", want: [] },
  ];
  for (const c of cases) {
    test(c.name, () => expect(formatAdvert(c.content, { prefix: "[★] ", colours: c.colours })).toEqual(c.want));
  }

  test("the prefix: ASCII on Quake consoles (bytes, not UTF-8), as it is everywhere else", () => {
    const en = { prefix: "[★] ", ascii: "[*] " };
    expect(advertPrefix(en.prefix, en.ascii, "quake")).toBe("[*] ");
    for (const colours of ["minecraft", "strip"] as const)
      expect(advertPrefix(en.prefix, en.ascii, colours)).toBe("[★] ");
    // An operator's own prefix that a Quake console can show is kept; a tab or an umlaut can't be shown.
    expect(advertPrefix("<red>[AD]</red> ", en.ascii, "quake")).toBe("<red>[AD]</red> ");
    expect(advertPrefix("[Über] ", en.ascii, "quake")).toBe("[*] ");
    expect(advertPrefix("[\tAD] ", en.ascii, "quake")).toBe("[*] ");
  });

  test("the prefix may carry tags too", () => {
    expect(formatAdvert("hi", { prefix: "<blue>[AD]</blue> ", colours: "minecraft" })).toEqual(["§9[AD]§r hi"]);
    expect(formatAdvert("hi", { prefix: "<blue>[AD]</blue> ", colours: "strip" })).toEqual(["[AD] hi"]);
  });
  test("renderColourTags alone, for other chat text", () => {
    expect(renderColourTags("<green>ok</green>", "quake")).toBe("^2ok^7");
    expect(renderColourTags("</red>stray close", "minecraft")).toBe("§rstray close");
  });
});
