/**
 * The second check of a pattern (docs/game-consoles.md §8; the first is ./pattern-check.ts): it runs on hostile lines
 * built from the pattern itself (each repetition pumped with its own characters and those of the part after it, at
 * lengths growing up to the 64 KiB a pattern sees), so a pattern whose time grows faster than the line
 * (`^(.+): (.*)x$` is quadratic) is seen to be slow. For `run` and `doctor`, and the tests of every shipped pattern.
 */
import { boundLine, MATCH_CHARS } from "./lines.ts";
import { ALPHABET, type CharSet, charSet, firstSet, type Node, parseRegex, pick, sample } from "./regex-tree.ts";

/** The time a pattern may take on a line of 64 KiB: patterns are linear, so a shorter line gets its share. */
export const LIMIT_MS_PER_64KIB = 10;

/**
 * Lines meant to make `re` backtrack, `length` characters long (as a source delivers them: cleaned and cut): for
 * each repetition, what leads to it, then its own characters and those of what follows it, over and over, then an
 * ending nothing in the pattern matches (or none); and the pattern's own sample match, over and over (an unanchored
 * pattern tries each start). Raw line ends go in too: the cleaning must take them out.
 */
export function hostileLines(re: RegExp, length: number): string[] {
  const { cores, endings } = hostile(re, length);
  return [...new Set(cores.flatMap((core) => endings.map((end) => hostileLine(core, end, length))))];
}

function hostileLine(core: string, end: string, length: number): string {
  return boundLine(core.slice(0, Math.max(0, length - end.length)) + end);
}

/** The hostile lines' bodies (`length` long) and endings: cut and joined for each length tried. */
function hostile(re: RegExp, length: number): { cores: string[]; endings: string[] } {
  const flags = re.flags;
  const tree = parseRegex(re.source, re.flags);
  const whole = sample(tree, flags) || "a";
  const foreign = pick(~allChars(tree, flags) & ((1n << BigInt(ALPHABET.length)) - 1n));
  const cores = new Set<string>();
  const add = (head: string, pump: string) => {
    if (pump) cores.add(head + pump.repeat(Math.ceil(Math.max(0, length - head.length) / pump.length)));
  };
  add("", whole);
  for (const { head, loop, next } of loops(tree, flags)) {
    const shared = firstSet(loop.body, flags) & (next ? firstSet(next, flags) : 0n);
    const body = sample(loop.body, flags);
    const after = next ? sample(next, flags) : "";
    if (shared) add(head, pick(shared));
    add(head, body);
    add(head, body + after);
  }
  return { cores: [...cores], endings: ["", foreign || "\u2028"] };
}

/** Every character any part of the pattern can match. */
function allChars(n: Node, flags: string): CharSet {
  switch (n.t) {
    case "seq":
      return n.items.reduce((set, i) => set | allChars(i, flags), 0n);
    case "alt":
      return n.alts.reduce((set, a) => set | allChars(a, flags), 0n);
    case "group":
    case "look":
    case "quant":
      return allChars(n.body, flags);
    case "char":
      return charSet(n.src, flags);
    default:
      return 0n;
  }
}

/** Every repetition of the pattern, with a sample of what leads to it and the part that follows it. */
function loops(tree: Node, flags: string): { head: string; loop: Extract<Node, { t: "quant" }>; next?: Node }[] {
  const found: { head: string; loop: Extract<Node, { t: "quant" }>; next?: Node }[] = [];
  const walk = (n: Node, head: string, next?: Node) => {
    switch (n.t) {
      case "seq": {
        let h = head;
        for (const [k, item] of n.items.entries()) {
          walk(item, h, n.items[k + 1] ?? next);
          h += sample(item, flags);
        }
        return;
      }
      case "alt":
        for (const a of n.alts) walk(a, head, next);
        return;
      case "group":
        return walk(n.body, head, next);
      case "quant":
        if (n.max >= 2) found.push({ head, loop: n, ...(next ? { next } : {}) });
        return walk(n.body, head, next);
      default:
        return;
    }
  };
  walk(tree, "");
  return found;
}

/** The best of `runs` timings of one match of `re` on `line` (ms, monotonic clock). */
export function matchMs(re: RegExp, line: string, runs = 3): number {
  let best = Infinity;
  for (let r = 0; r < runs; r++) {
    re.lastIndex = 0;
    const start = performance.now();
    re.exec(line);
    best = Math.min(best, performance.now() - start);
  }
  re.lastIndex = 0;
  return best;
}

export interface Slowest {
  ms: number;
  length: number;
  line: string;
}

/**
 * The slowest of `re`'s hostile lines, tried at lengths growing fourfold from 64 up to `length`: it stops at the
 * first length where a line takes longer than that length's share of `budget` (ms per 64 KiB, at least 1 ms), so a
 * pattern slower than linear is found on short lines, in milliseconds, not run on a whole one. A line over the
 * budget is timed twice more and judged by its best run: a busy machine doesn't make a pattern slow.
 */
export function slowest(re: RegExp, length = MATCH_CHARS, budget = LIMIT_MS_PER_64KIB): Slowest {
  const { cores, endings } = hostile(re, length);
  for (let size = Math.min(64, length); ; size = Math.min(size * 4, length)) {
    const allowed = Math.max(1, (budget * size) / 65536);
    let worst: Slowest = { ms: 0, length: size, line: "" };
    for (const core of cores) {
      for (const end of endings) {
        const line = hostileLine(core, end, size);
        let ms = matchMs(re, line, 1);
        if (ms > allowed) ms = Math.min(ms, matchMs(re, line, 2));
        if (ms > worst.ms) worst = { ms, length: size, line };
        if (ms > allowed) return worst;
      }
    }
    if (size >= length) return worst;
  }
}

/**
 * Why `re` is too slow, or undefined: its slowest hostile line took longer than that line's share of the limit (run
 * and timed as `slowest` does), with the fix.
 */
export function tooSlow(re: RegExp): string | undefined {
  const worst = slowest(re);
  const allowed = Math.max(1, (LIMIT_MS_PER_64KIB * worst.length) / 65536);
  if (worst.ms <= allowed) return undefined;
  const shown = JSON.stringify(worst.line.length > 40 ? `${worst.line.slice(0, 40)}…` : worst.line);
  return `it took ${worst.ms.toFixed(0)} ms on a line of ${worst.length} characters (${shown}), where a pattern may take ${allowed.toFixed(0)} ms, and lines of ${MATCH_CHARS} reach it; its time grows faster than the line: make the parts around each repetition exclusive (e.g. "[^"]*" instead of ".*", a literal that ends a repetition)`;
}
