/**
 * The operator documentation (README.md and docs/) as the tests read it: a page's fenced code blocks, for the tests
 * that run its configurations and command lines word for word (a section is found by its heading; headings inside
 * code blocks, a TOML comment, don't count), and its links, for the test that every link leads somewhere.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";

export interface CodeBlock {
  lang: string;
  text: string;
}

const ROOT = join(import.meta.dir, "..", "..");

/** The Markdown pages checked: the README and every page under docs/, at any depth. */
export function pages(root = ROOT): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith(".md") ? [join(dir, e.name)] : [],
    );
  return ["README.md", ...walk("docs").sort()];
}

/** The page's lines outside fenced code blocks, with inline code spans blanked (a link inside one is text). */
function prose(markdown: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let fence = "";
  markdown.split("\n").forEach((text, i) => {
    const f = /^\s*(```|~~~)/.exec(text);
    if (f) {
      if (!fence) fence = f[1]!;
      else if (f[1] === fence) fence = "";
      return;
    }
    if (!fence) out.push({ line: i + 1, text: text.replace(/(`+)[^`]*?\1/g, (m) => " ".repeat(m.length)) });
  });
  return out;
}

/** GitHub's anchor for a heading: rendered text lower-cased, punctuation and symbols dropped, spaces to hyphens. */
export function slug(heading: string): string {
  const rendered = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1") // a link's text
    .replace(/`([^`]*)`/g, "$1") // code spans keep their text
    .replace(/(\*\*|__|\*|_)(\S(?:.*?\S)?)\1/g, "$2"); // emphasis
  return rendered
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, "")
    .replace(/ /g, "-");
}

/** Every anchor a page offers: its headings' slugs (a repeated one gets -1, -2, … as on GitHub). */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fence = "";
  for (const line of markdown.split("\n")) {
    const f = /^\s*(```|~~~)/.exec(line);
    if (f) {
      if (!fence) fence = f[1]!;
      else if (f[1] === fence) fence = "";
      continue;
    }
    const h = fence ? null : /^#{1,6} (.*?)#*\s*$/.exec(line);
    if (!h) continue;
    const base = slug(h[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  return out;
}

/** The relative links of a page that lead nowhere, as "page:line: target (why)". */
export function brokenLinks(page: string, root = ROOT): string[] {
  const markdown = readFileSync(join(root, page), "utf8");
  const problems: string[] = [];
  for (const { line, text } of prose(markdown)) {
    for (const m of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = m[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      const [path = "", anchor] = target.split("#") as [string, string | undefined];
      const file = path ? join(dirname(join(root, page)), decodeURIComponent(path)) : join(root, page);
      const where = `${page}:${line}: ${target}`;
      if (!existsSync(file)) {
        problems.push(`${where} (no such file: ${relative(root, file)})`);
        continue;
      }
      if (anchor === undefined) continue;
      if (statSync(file).isDirectory() || !file.endsWith(".md")) {
        problems.push(`${where} (an anchor into a file that is not a Markdown page)`);
        continue;
      }
      if (!anchors(readFileSync(file, "utf8")).has(decodeURIComponent(anchor))) {
        problems.push(`${where} (${relative(root, file)} has no heading #${anchor})`);
      }
    }
  }
  return problems;
}

/** The page (a path from the repository's root, e.g. "docs/games/openarena.md"), read. */
function read(page: string): string[] {
  return readFileSync(join(ROOT, page), "utf8").split("\n");
}

/** The text of the page's first heading (its title), without the #s. */
export function pageTitle(page: string): string {
  const h = read(page).find((l) => l.startsWith("# "));
  if (!h) throw new Error(`${page} has no title`);
  return h.slice(2);
}

/** The game pages (docs/games/*.md), in name order. */
export function gamePages(): string[] {
  return readdirSync(join(ROOT, "docs", "games"))
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => `docs/games/${f}`);
}

/** The headings of the sections one level below `heading` in the page (e.g. every "## …" of "# Games"), in order. */
export function docSubsections(page: string, heading: string): string[] {
  const level = /^#+/.exec(heading)?.[0].length ?? 0;
  const out: string[] = [];
  let inSection = false;
  let fenced = false;
  for (const line of read(page)) {
    if (line.trimStart().startsWith("```")) fenced = !fenced;
    const h = fenced ? null : /^(#+) /.exec(line);
    if (!h) continue;
    if (inSection && h[1]!.length <= level) break;
    if (line.startsWith(heading)) inSection = true;
    else if (inSection && h[1]!.length === level + 1) out.push(line);
  }
  return out;
}

/**
 * The fenced code blocks of the page, or of its section whose heading line starts with `heading` (e.g. "## A thin
 * plugin"): the section ends at the next heading of its level or above.
 */
export function docBlocks(page: string, heading?: string): CodeBlock[] {
  const level = heading ? (/^#+/.exec(heading)?.[0].length ?? 0) : 0;
  const blocks: CodeBlock[] = [];
  let inSection = heading === undefined;
  let block: CodeBlock | undefined;
  for (const line of read(page)) {
    const fence = /^```(\S*)\s*$/.exec(line);
    if (block) {
      if (fence && fence[1] === "") {
        if (inSection) blocks.push(block);
        block = undefined;
      } else block.text += `${line}\n`;
      continue;
    }
    if (fence) {
      block = { lang: fence[1] ?? "", text: "" };
      continue;
    }
    const h = heading === undefined ? null : /^(#+) /.exec(line);
    if (h) {
      if (inSection && h[1]!.length <= level) break;
      if (line.startsWith(heading!)) inSection = true;
    }
  }
  if (!inSection) throw new Error(`${page} has no section "${heading}"`);
  return blocks;
}

/** The one block of `lang` in the page (or its section), the `index`-th when there are several. */
export function docBlock(page: string, lang: string, index = 0, heading?: string): string {
  const found = docBlocks(page, heading).filter((b) => b.lang === lang);
  const block = found[index];
  if (!block)
    throw new Error(`${page}${heading ? ` "${heading}"` : ""} has ${found.length} ${lang} blocks, not ${index + 1}`);
  return block.text;
}

/** A shell command line as sh splits it: words, "double" and 'single' quoted parts (no variables or escapes). */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quote = "";
  for (const c of line.replace(/\\\n/g, " ")) {
    if (quote) {
      if (c === quote) quote = "";
      else word += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      word ??= "";
    } else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else word = (word ?? "") + c;
  }
  if (quote) throw new Error(`an unclosed quote in ${line}`);
  if (word !== undefined) words.push(word);
  return words;
}
