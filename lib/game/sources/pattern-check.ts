/**
 * Patterns run on lines players write into (their names, their chat), in JavaScript's backtracking engine, which has
 * no time limit: a pattern that takes seconds on a line stops hub-agent for those seconds. Two checks keep a slow
 * pattern out (docs/game-consoles.md §8):
 *
 * - `ambiguity`: the shapes that take exponential time — a repeated part holding another repetition that can
 *   match the same characters (`(?:\w+ ?)+`, `(a*)*`), or alternatives under a repetition that can match the same
 *   text (`(?:\w|\d)+`). Refused by their shape, before anything runs.
 * - `slowest`: the rest are run on hostile lines built from the pattern itself (each repetition pumped with the
 *   characters it and its neighbour share, at lengths doubling up to the line cut), so a pattern whose time grows
 *   faster than the line (`^(.+): (.*)x$` is quadratic) is seen to be slow and refused too.
 */
import { boundLine, MATCH_CHARS } from "./lines.ts";
import {
  ALPHABET,
  type CharSet,
  charSet,
  firstSet,
  type Node,
  nullable,
  parseRegex,
  pick,
  sample,
} from "./regex-tree.ts";

/** The time a pattern may take on a line of 64 KiB: patterns are linear, so a line of the cut's length gets its share. */
export const LIMIT_MS_PER_64KIB = 10;

/** Why `re` is refused by its shape, or undefined. */
export function ambiguity(re: RegExp): string | undefined {
  const tree = parseRegex(re.source, re.flags);
  return loopProblem(tree, re.flags);
}

function loopProblem(node: Node, flags: string): string | undefined {
  switch (node.t) {
    case "seq":
      return firstOf(node.items, (n) => loopProblem(n, flags));
    case "alt":
      return firstOf(node.alts, (n) => loopProblem(n, flags));
    case "group":
    case "look":
      return loopProblem(node.body, flags);
    case "quant":
      if (node.max >= 2) {
        const body = node.body;
        if (node.max === Infinity && nullable(body)) {
          return "a repeated part can match nothing (like `(a*)*`): the engine tries every way to repeat nothing";
        }
        // A body without a choice of its own (a character, a fixed word) can be repeated only one way.
        const problem = hasChoice(body) ? inLoop(body, firstSet(body, flags), flags) : undefined;
        if (problem) return problem;
      }
      return loopProblem(node.body, flags);
    default:
      return undefined;
  }
}

/** Whether the part holds an alternation or a repetition of variable length. */
function hasChoice(node: Node): boolean {
  switch (node.t) {
    case "seq":
      return node.items.some(hasChoice);
    case "alt":
      return true;
    case "group":
    case "look":
      return hasChoice(node.body);
    case "quant":
      return node.min < node.max || hasChoice(node.body);
    default:
      return false;
  }
}

/**
 * Inside a repeated part: a repetition of variable length whose characters may also be what follows it (the rest
 * of the part, or the part again), or alternatives that may match the same text. `follow`: what can come after
 * `node` inside the loop.
 */
function inLoop(node: Node, follow: CharSet, flags: string): string | undefined {
  switch (node.t) {
    case "seq": {
      for (const [k, item] of node.items.entries()) {
        const rest = node.items.slice(k + 1);
        let after = 0n;
        let restNullable = true;
        for (const r of rest) {
          after |= firstSet(r, flags);
          if (!nullable(r)) {
            restNullable = false;
            break;
          }
        }
        const problem = inLoop(item, restNullable ? after | follow : after, flags);
        if (problem) return problem;
      }
      return undefined;
    }
    case "alt": {
      for (const [k, a] of node.alts.entries()) {
        for (const b of node.alts.slice(k + 1)) {
          if (!distinguishable(a, b, flags)) {
            return "alternatives inside a repeated part can match the same text (like `(?:\\w|\\d)+`): the engine tries each way";
          }
        }
      }
      return firstOf(node.alts, (a) => inLoop(a, follow, flags));
    }
    case "group":
      return inLoop(node.body, follow, flags);
    case "quant": {
      const variable = node.min < node.max;
      const own = firstSet(node.body, flags);
      if (variable && (own & follow) !== 0n) {
        return "a repeated part holds another repetition that can match the same characters (like `(?:\\w+ ?)+`): the engine tries every way to split them";
      }
      return inLoop(node.body, node.max >= 2 ? own | follow : follow, flags);
    }
    default:
      return undefined;
  }
}

/** Whether two alternatives can't match the same text: at some position their characters differ for sure. */
function distinguishable(a: Node, b: Node, flags: string): boolean {
  const pa = fixedPrefix(a, flags);
  const pb = fixedPrefix(b, flags);
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) if ((pa[i]! & pb[i]!) === 0n) return true;
  return false;
}

/** The sets of the single characters a part starts with, up to its first repetition or choice (then its first set). */
function fixedPrefix(node: Node, flags: string): CharSet[] {
  const out: CharSet[] = [];
  const walk = (n: Node): boolean => {
    if (n.t === "char") return (out.push(charSet(n.src, flags)), true);
    if (n.t === "group") return walk(n.body);
    if (n.t === "seq") return n.items.every(walk);
    if (n.t === "assert" || n.t === "look") return true;
    if (!nullable(n)) out.push(firstSet(n, flags));
    return false;
  };
  walk(node);
  return out;
}

function firstOf<T>(items: T[], fn: (item: T) => string | undefined): string | undefined {
  for (const item of items) {
    const r = fn(item);
    if (r) return r;
  }
  return undefined;
}

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
