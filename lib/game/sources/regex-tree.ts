/**
 * A JavaScript regular expression as a tree, for the checks of ./pattern-check.ts: which parts repeat, what each
 * single-character part can match, what a part may be followed by. Only the syntax a pattern without the `u` or `v`
 * flag accepts; what this parser does not know (it is told an unknown escape) is kept as one character, which is
 * what the engine makes of it too.
 */

export type Node =
  | { t: "seq"; items: Node[] }
  | { t: "alt"; alts: Node[] }
  | { t: "group"; body: Node }
  /** Lookahead and lookbehind: they match no characters. */
  | { t: "look"; body: Node }
  | { t: "quant"; body: Node; min: number; max: number }
  /** One character: a literal, `.`, a class, an escape like `\d`; `src` is its source. */
  | { t: "char"; src: string }
  /** `^`, `$`, `\b`, `\B`: match no characters. */
  | { t: "assert" }
  /** `\1`, `\k<name>`: whatever the group matched. */
  | { t: "backref" };

export class RegexSyntaxError extends Error {}

/**
 * Parses `source` (already accepted by `new RegExp` with `flags`, so only what the checks need is validated here).
 * With `u` or `v`, `\p{…}` is one character class.
 */
export function parseRegex(source: string, flags = ""): Node {
  return new RegexParser(source, /[uv]/.test(flags)).pattern();
}

/** The parser: a cursor (`i`) over the source, one method per part of the grammar. */
class RegexParser {
  private i = 0;

  constructor(
    private readonly source: string,
    /** `u` or `v`: `\p{…}` and `\u{…}` are escapes. */
    private readonly unicode: boolean,
  ) {}

  pattern(): Node {
    const tree = this.alternation();
    if (this.i < this.source.length) throw new RegexSyntaxError(`an unmatched ")" at ${this.i}`);
    return tree;
  }

  private peek(): string | undefined {
    return this.source[this.i];
  }

  private alternation(): Node {
    const alts = [this.sequence()];
    while (this.peek() === "|") {
      this.i++;
      alts.push(this.sequence());
    }
    return alts.length === 1 ? alts[0]! : { t: "alt", alts };
  }

  private sequence(): Node {
    const items: Node[] = [];
    while (this.i < this.source.length && this.peek() !== "|" && this.peek() !== ")") {
      const atom = this.atom();
      items.push(this.quantified(atom));
    }
    return items.length === 1 ? items[0]! : { t: "seq", items };
  }

  private quantified(atom: Node): Node {
    let q = this.quantifier();
    let node = atom;
    while (q) {
      if (this.source[this.i] === "?") this.i++; // lazy: the same set of matches, tried in another order
      node = { t: "quant", body: node, min: q.min, max: q.max };
      q = this.quantifier();
    }
    return node;
  }

  private quantifier(): { min: number; max: number } | undefined {
    const simple = { "*": { min: 0, max: Infinity }, "+": { min: 1, max: Infinity }, "?": { min: 0, max: 1 } }[
      this.peek() ?? ""
    ];
    if (simple) {
      this.i++;
      return simple;
    }
    const m = /^\{(\d+)(,(\d*))?\}/.exec(this.source.slice(this.i, this.i + 32));
    if (!m) return undefined; // not a quantifier: a literal brace, or none
    this.i += m[0].length;
    const min = Number(m[1]);
    return { min, max: m[2] === undefined ? min : m[3] === "" ? Infinity : Number(m[3]) };
  }

  private atom(): Node {
    const c = this.source[this.i]!;
    if (c === "(") return this.group();
    if (c === "[") return this.charClass();
    if (c === "\\") return this.escape();
    this.i++;
    if (c === "^" || c === "$") return { t: "assert" };
    return { t: "char", src: c === "." ? "." : escapeLiteral(c) };
  }

  private group(): Node {
    const rest = this.source.slice(this.i);
    const look = /^\((\?<?[=!])/.exec(rest);
    const open = look?.[0] ?? /^\((?:\?:|\?<[A-Za-z_$][\w$]*>)?/.exec(rest)![0];
    this.i += open.length;
    const body = this.alternation();
    if (this.source[this.i] !== ")") throw new RegexSyntaxError(`an unclosed group at ${this.i}`);
    this.i++;
    return look ? { t: "look", body } : { t: "group", body };
  }

  private charClass(): Node {
    const { source } = this;
    const start = this.i++;
    if (source[this.i] === "^") this.i++;
    if (source[this.i] === "]") this.i++; // `[]]` is not valid JS, but `[^]` is: the engine decides, the source is kept
    while (this.i < source.length && source[this.i] !== "]") this.i += source[this.i] === "\\" ? 2 : 1;
    if (source[this.i] !== "]") throw new RegexSyntaxError(`an unclosed character class at ${start}`);
    this.i++;
    // `[]` matches nothing and `[^]` everything: both are characters sets like any other.
    return { t: "char", src: source.slice(start, this.i) };
  }

  private escape(): Node {
    const rest = this.source.slice(this.i, this.i + 64);
    const ref = /^\\(?:k<[A-Za-z_$][\w$]*>|[1-9]\d*)/.exec(rest)?.[0];
    const long = (
      this.unicode
        ? /^\\(?:x[0-9A-Fa-f]{2}|u(?:[0-9A-Fa-f]{4}|\{[0-9A-Fa-f]+\})|c[A-Za-z]|[pP]\{[^}]*\})/
        : /^\\(?:x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}|c[A-Za-z])/
    ).exec(rest)?.[0];
    const src = ref ?? long ?? rest.slice(0, 2);
    this.i += src.length;
    if (ref) return { t: "backref" };
    if (src === "\\b" || src === "\\B") return { t: "assert" };
    return { t: "char", src };
  }
}

function escapeLiteral(c: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(c) ? `\\${c}` : c;
}

/**
 * The characters a line can hold, as representatives: every ASCII character, Latin-1 letters, and the Unicode
 * characters patterns treat specially (U+200E, spaces, surrogates, a CJK letter). A character part's set is the
 * representatives it matches, asked of the engine itself, so classes, escapes and flags mean what they mean there.
 */
export const ALPHABET: readonly string[] = [
  ...Array.from({ length: 128 }, (_, c) => String.fromCharCode(c)),
  "\u00a0",
  "\u00e9",
  "\u00ff",
  "\u200b",
  "\u200e",
  "\u3000",
  "\u4e2d",
  "\ufeff",
  "\ufffd",
  "\ud83d",
  "\ude00",
];

/** A set of ALPHABET indexes, as a bit mask. */
export type CharSet = bigint;

const setCache = new Map<string, CharSet>();

/** The representatives a character part matches under `flags` (`i`, `s`, `u` matter; `g`, `m`, `y` don't). */
export function charSet(src: string, flags = ""): CharSet {
  const f = flags.replace(/[gmyd]/g, "");
  const key = `${f}/${src}`;
  let set = setCache.get(key);
  if (set === undefined) {
    set = 0n;
    try {
      const re = new RegExp(`^(?:${src})$`, f);
      for (const [n, c] of ALPHABET.entries()) if (re.test(c)) set |= 1n << BigInt(n);
    } catch {
      set = (1n << BigInt(ALPHABET.length)) - 1n; // a part this parser misread: it may match anything
    }
    setCache.set(key, set);
  }
  return set;
}

/** Whether the part can match the empty string. */
export function nullable(node: Node): boolean {
  switch (node.t) {
    case "seq":
      return node.items.every(nullable);
    case "alt":
      return node.alts.some(nullable);
    case "group":
      return nullable(node.body);
    case "quant":
      return node.min === 0 || nullable(node.body);
    case "char":
      return false;
    default:
      return true; // assertions, lookarounds and backreferences (a group may have matched nothing)
  }
}

/** The characters a match of the part can start with. */
export function firstSet(node: Node, flags: string): CharSet {
  switch (node.t) {
    case "seq": {
      let set = 0n;
      for (const item of node.items) {
        set |= firstSet(item, flags);
        if (!nullable(item)) break;
      }
      return set;
    }
    case "alt":
      return node.alts.reduce((set, a) => set | firstSet(a, flags), 0n);
    case "group":
    case "quant":
      return firstSet(node.body, flags);
    case "char":
      return charSet(node.src, flags);
    case "backref":
      return ~0n; // anything
    default:
      return 0n;
  }
}

const samples = new WeakMap<Node, Map<string, string>>();

/** A string the part matches (short, printable where the part allows): for building inputs. */
export function sample(node: Node, flags: string): string {
  let byFlags = samples.get(node);
  if (!byFlags) samples.set(node, (byFlags = new Map()));
  let s = byFlags.get(flags);
  if (s === undefined) byFlags.set(flags, (s = sampleOf(node, flags)));
  return s;
}

function sampleOf(node: Node, flags: string): string {
  switch (node.t) {
    case "seq":
      return node.items.map((n) => sample(n, flags)).join("");
    case "alt":
      return sample(node.alts[0]!, flags);
    case "group":
      return sample(node.body, flags);
    case "quant":
      return sample(node.body, flags).repeat(Math.max(node.min, node.max === 0 ? 0 : 1));
    case "char":
      return pick(charSet(node.src, flags), "a0 ");
    default:
      return "";
  }
}

/** A character of the set, the first of `prefer` it holds, else a printable one, else any. */
export function pick(set: CharSet, prefer = ""): string {
  for (const c of prefer) if (has(set, c)) return c;
  let fallback = "";
  for (let n = 0; set !== 0n && n < ALPHABET.length; n++, set >>= 1n) {
    if (!(set & 1n)) continue;
    const c = ALPHABET[n]!;
    if (c > " " && c !== "\u007f") return c;
    fallback ||= c;
  }
  return fallback;
}

export function has(set: CharSet, c: string): boolean {
  const n = ALPHABET.indexOf(c);
  return n >= 0 && ((set >> BigInt(n)) & 1n) === 1n;
}
