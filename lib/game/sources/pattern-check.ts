/**
 * Patterns run on lines players write into (their names, their chat), in JavaScript's backtracking engine, which has
 * no time limit: a pattern that takes seconds on a line stops hub-agent for those seconds. Two checks keep a slow
 * pattern out (docs/game-consoles.md §8). This one, `ambiguity`, refuses by their shape, before anything runs, the
 * patterns that take exponential time: a repeated part holding another repetition that can match the same
 * characters (`(?:\w+ ?)+`, `(a*)*`), or alternatives under a repetition that can match the same text (`(?:\w|\d)+`).
 * The other, ./pattern-timing.ts, runs the rest on hostile lines.
 */
import { type CharSet, charSet, firstSet, type Node, nullable, parseRegex } from "./regex-tree.ts";

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
