/**
 * TOML for the config file. Bun parses it natively; on other runtimes (the core also runs under Deno) a small
 * strict parser covers what a config file uses: tables, dotted keys, strings, numbers, booleans, arrays.
 * Anything else is a clear error rather than a silent misread.
 */
export function parseToml(text: string): Record<string, unknown> {
  const bun = (globalThis as { Bun?: { TOML: { parse(s: string): unknown } } }).Bun;
  if (!bun) return parseTomlSubset(text);
  try {
    return bun.TOML.parse(text) as Record<string, unknown>;
  } catch (e) {
    const message = String((e as Error).message ?? e).replace(/^TOML Parse error: /, "");
    throw new TomlError(message, ...locate(text, (s) => void bun.TOML.parse(s)));
  }
}

/** A syntax error at a 1-based line and column; `source` is that line as written. */
export class TomlError extends Error {
  override name = "TomlError";
  constructor(
    readonly reason: string,
    readonly line: number,
    readonly column: number,
    readonly source: string,
  ) {
    super(`line ${line}, column ${column}: ${reason}`);
  }
}

/** Up to this many lines, `locate` tries every prefix (exact); beyond, it bisects (a few parses, see below). */
const EXACT_LINES = 2_000;

/**
 * Where a parser that names no position failed: the line after the longest run of whole lines that parses (a
 * multi-line array cut in half fails, so shorter prefixes prove nothing), and in that line the column after its
 * longest prefix that still parses, alone or given a value (at least its indentation). One parse per line from the
 * end, then two per character of one line: about 2 ms for a 160-line file. A longer file is bisected instead, which a multi-line value cut at a
 * probe can mislead by a few lines, but a 20,000-line file costs a few dozen parses, not 20,000.
 */
export function locate(text: string, parse: (s: string) => void): [line: number, column: number, source: string] {
  const starts = [0];
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
  /** The first k lines, each with its line break (CRLF too). */
  const prefix = (k: number) => text.slice(0, k < starts.length ? starts[k] : text.length);
  const ok = (s: string) => {
    try {
      parse(s);
      return true;
    } catch {
      return false;
    }
  };
  let good: number;
  if (starts.length <= EXACT_LINES) {
    good = starts.length - 1;
    while (good > 0 && !ok(prefix(good))) good--;
  } else {
    let lo = 0; // parses
    let hi = starts.length; // fails (the whole text)
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (ok(prefix(mid))) lo = mid;
      else hi = mid;
    }
    good = lo;
  }
  const before = prefix(good);
  const end = good + 1 < starts.length ? (starts[good + 1] as number) : text.length;
  const source = text.slice(before.length, end).replace(/\r?\n$/, "");
  let column = source.length - source.trimStart().length;
  // A prefix that parses as it is (`n = 10 x` → after `10 `), or once given a value (`bridge = sim`, an unquoted
  // string, → after `= `): either way the caret lands on what is wrong rather than on the line's key.
  for (let c = source.length; c > column; c--)
    if (ok(before + source.slice(0, c)) || ok(`${before}${source.slice(0, c)}""`)) {
      column = c;
      break;
    }
  return [good + 1, Math.min(column, Math.max(source.length - 1, 0)) + 1, source];
}

export function parseTomlSubset(text: string): Record<string, unknown> {
  return new SubsetParser(text).document();
}

/** The escapes of a basic string that stand for one character. */
const SIMPLE_ESCAPES: Record<string, string> = { n: "\n", t: "\t", r: "\r", '"': '"', "\\": "\\", b: "\b", f: "\f" };

/** The subset's parser: a cursor (`i`) over the text, with the line it is on for errors. */
class SubsetParser {
  private i = 0;
  private line = 1;

  constructor(private readonly text: string) {}

  /** The whole file: `[table]` headers and `key = value` lines. */
  document(): Record<string, unknown> {
    const { text } = this;
    const root: Record<string, unknown> = {};
    let table = root;
    for (;;) {
      this.skip(true);
      if (this.i >= text.length) return root;
      if (text[this.i] === "[") {
        if (text[this.i + 1] === "[") this.fail("arrays of tables are not supported here");
        this.i++;
        const path = this.key();
        if (text[this.i++] !== "]") this.fail("expected ] after table name");
        table = this.descend(root, path);
      } else {
        const path = this.key();
        if (text[this.i++] !== "=") this.fail(`expected = after ${path.join(".")}`);
        const target = this.descend(table, path.slice(0, -1));
        const last = path.at(-1) as string;
        if (last in target) this.fail(`${path.join(".")} is set twice`);
        target[last] = this.value();
      }
      this.skip(false);
      if (this.i < text.length && text[this.i] !== "\n")
        this.fail(`unexpected ${JSON.stringify(text[this.i])} after value`);
    }
  }

  private fail(msg: string): never {
    const { text, i } = this;
    const start = text.lastIndexOf("\n", i - 1) + 1;
    const end = text.indexOf("\n", start);
    throw new TomlError(
      msg,
      this.line,
      i - start + 1,
      text.slice(start, end === -1 ? undefined : end).replace(/\r$/, ""),
    );
  }

  /** Spaces and comments, and line breaks too when `newlines`. */
  private skip(newlines: boolean): void {
    for (;;) {
      const c = this.text[this.i];
      if (c === " " || c === "\t" || c === "\r") this.i++;
      else if (c === "#") while (this.i < this.text.length && this.text[this.i] !== "\n") this.i++;
      else if (c === "\n" && newlines) {
        this.i++;
        this.line++;
      } else return;
    }
  }

  /** A dotted key, bare or quoted parts. */
  private key(): string[] {
    const parts: string[] = [];
    for (;;) {
      this.skip(false);
      const c = this.text[this.i];
      if (c === '"' || c === "'") parts.push(this.string());
      else {
        const m = /^[A-Za-z0-9_-]+/.exec(this.text.slice(this.i));
        if (!m) this.fail(`expected a key, found ${JSON.stringify(this.text.slice(this.i, this.i + 10))}`);
        parts.push(m[0]);
        this.i += m[0].length;
      }
      this.skip(false);
      if (this.text[this.i] !== ".") return parts;
      this.i++;
    }
  }

  /** A one-line string: basic (`"`, with escapes) or literal (`'`). */
  private string(): string {
    const { text } = this;
    const q = text[this.i++];
    let out = "";
    while (text[this.i] !== q) {
      if (this.i >= text.length || text[this.i] === "\n") this.fail("unterminated string");
      if (q === '"' && text[this.i] === "\\") out += this.escape();
      else out += text[this.i++];
    }
    this.i++;
    return out;
  }

  /** The escape at the cursor (on its backslash). */
  private escape(): string {
    const e = this.text[++this.i];
    if (e && SIMPLE_ESCAPES[e] !== undefined) {
      this.i++;
      return SIMPLE_ESCAPES[e];
    }
    if (e === "u" || e === "U") {
      const len = e === "u" ? 4 : 8;
      const char = String.fromCodePoint(parseInt(this.text.slice(this.i + 1, this.i + 1 + len), 16));
      this.i += 1 + len;
      return char;
    }
    return this.fail(`unknown escape \\${e}`);
  }

  private value(): unknown {
    this.skip(false);
    const c = this.text[this.i];
    if (c === '"' || c === "'") {
      if (this.text.startsWith(c.repeat(3), this.i))
        this.fail("multi-line strings are not supported here; use one line");
      return this.string();
    }
    if (c === "[") return this.array();
    const m = /^[^\s,\]#]+/.exec(this.text.slice(this.i));
    if (!m) return this.fail("expected a value");
    this.i += m[0].length;
    if (m[0] === "true" || m[0] === "false") return m[0] === "true";
    const n = Number(m[0].replace(/_/g, ""));
    if (!Number.isNaN(n) && /^[+-]?[\d_.eE+-]+$/.test(m[0])) return n;
    return this.fail(`unsupported value ${m[0]} (strings need quotes)`);
  }

  /** An array at the cursor (on its `[`), over any number of lines. */
  private array(): unknown[] {
    this.i++;
    const arr: unknown[] = [];
    for (;;) {
      this.skip(true);
      if (this.text[this.i] === "]") return (this.i++, arr);
      arr.push(this.value());
      this.skip(true);
      if (this.text[this.i] === ",") this.i++;
      else if (this.text[this.i] !== "]") this.fail("expected , or ] in array");
    }
  }

  /** The table at `path` under `obj`, created where missing. */
  private descend(obj: Record<string, unknown>, path: string[]): Record<string, unknown> {
    for (const k of path) {
      const next = (obj[k] ??= {});
      if (typeof next !== "object" || Array.isArray(next)) this.fail(`${path.join(".")} is not a table`);
      obj = next as Record<string, unknown>;
    }
    return obj;
  }
}
