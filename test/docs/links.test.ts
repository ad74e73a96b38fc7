/**
 * Every relative link in README.md and docs/ leads somewhere: the file (or directory) exists, and an anchor names
 * a heading of that page, slugged the way GitHub renders it. External links (http:, mailto:) are not followed.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { anchors, brokenLinks, pages, slug } from "../support/docs.ts";

describe("links in README.md and docs/", () => {
  test("GitHub's anchors: punctuation dropped, spaces kept as hyphens, repeats numbered", () => {
    expect(slug('OpenTTD — `preset = "generic"`')).toBe("openttd--preset--generic");
    expect(slug("What `run` does")).toBe("what-run-does");
    expect(slug("The generic preset: any console, described in the configuration")).toBe(
      "the-generic-preset-any-console-described-in-the-configuration",
    );
    expect(slug('Minecraft (vanilla or Paper, with LuckPerms) — `preset = "minecraft"`')).toBe(
      "minecraft-vanilla-or-paper-with-luckperms--preset--minecraft",
    );
    expect([...anchors("# A\n```\n# not a heading\n```\n## A\n## B_c\n")]).toEqual(["a", "a-1", "b_c"]);
  });

  test("the checker finds a missing file, a missing anchor, and ignores code", () => {
    const dir = mkdtempSync(join(tmpdir(), "hub-links-"));
    mkdirSync(join(dir, "docs"));
    writeFileSync(
      join(dir, "README.md"),
      "# Top\n\n[ok](docs/a.md#there) [gone](docs/b.md) [bad](docs/a.md#nowhere) [self](#top) [own](#no)\n" +
        "`[code](nope.md)`\n```\n[fenced](nope.md)\n```\n[web](https://example.org/x.md#y)\n",
    );
    writeFileSync(join(dir, "docs", "a.md"), "# There\n\n[back](../README.md#top)\n");
    expect(brokenLinks("README.md", dir)).toEqual([
      "README.md:3: docs/b.md (no such file: docs/b.md)",
      "README.md:3: docs/a.md#nowhere (docs/a.md has no heading #nowhere)",
      "README.md:3: #no (README.md has no heading #no)",
    ]);
    expect(pages(dir)).toEqual(["README.md", "docs/a.md"]);
    expect(brokenLinks("docs/a.md", dir)).toEqual([]);
    rmSync(dir, { recursive: true, force: true });
  });

  for (const page of pages()) {
    test(`${page}: every relative link leads to a file and a heading`, () => {
      expect(brokenLinks(page)).toEqual([]);
    });
  }
});

describe("the README stays the operator's", () => {
  test("at most 350 lines: everything else lives in docs/, one click away", async () => {
    const lines = (await Bun.file(join(import.meta.dir, "..", "..", "README.md")).text()).split("\n").length - 1;
    expect(lines).toBeLessThanOrEqual(350);
  });
});
