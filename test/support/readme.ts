/**
 * The README's code blocks, for the tests that run its configurations word for word: a section is found by its
 * heading, and its fenced blocks are returned in order, with their language. Headings inside code blocks (a TOML
 * comment) don't count.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

export interface CodeBlock {
  lang: string;
  text: string;
}

const README = join(import.meta.dir, "..", "..", "README.md");

/** The headings of the sections one level below `heading` (e.g. every "### …" of "## Games"), in order. */
export function readmeSubsections(heading: string): string[] {
  const level = /^#+/.exec(heading)?.[0].length ?? 0;
  const out: string[] = [];
  let inSection = false;
  let fenced = false;
  for (const line of readFileSync(README, "utf8").split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    const h = fenced ? null : /^(#+) /.exec(line);
    if (!h) continue;
    if (inSection && h[1]!.length <= level) break;
    if (line.startsWith(heading)) inSection = true;
    else if (inSection && h[1]!.length === level + 1) out.push(line);
  }
  return out;
}

/** The fenced code blocks of the section whose heading line starts with `heading` (e.g. "### OpenArena"). */
export function readmeBlocks(heading: string): CodeBlock[] {
  const lines = readFileSync(README, "utf8").split("\n");
  const level = /^#+/.exec(heading)?.[0].length ?? 0;
  const blocks: CodeBlock[] = [];
  let inSection = false;
  let block: CodeBlock | undefined;
  for (const line of lines) {
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
    const h = /^(#+) /.exec(line);
    if (h) {
      if (inSection && h[1]!.length <= level) break;
      if (line.startsWith(heading)) inSection = true;
    }
  }
  if (!inSection) throw new Error(`README.md has no section "${heading}"`);
  return blocks;
}

/** The one block of `lang` in the section, the `index`-th when there are several. */
export function readmeBlock(heading: string, lang: string, index = 0): string {
  const found = readmeBlocks(heading).filter((b) => b.lang === lang);
  const block = found[index];
  if (!block) throw new Error(`README.md's "${heading}" has ${found.length} ${lang} blocks, not ${index + 1}`);
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
