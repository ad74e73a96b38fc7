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
  const root: Record<string, unknown> = {};
  let table = root;
  let i = 0;
  let line = 1;
  const fail = (msg: string): never => {
    const start = text.lastIndexOf("\n", i - 1) + 1;
    const end = text.indexOf("\n", start);
    throw new TomlError(msg, line, i - start + 1, text.slice(start, end === -1 ? undefined : end).replace(/\r$/, ""));
  };
  const skip = (newlines: boolean) => {
    for (;;) {
      const c = text[i];
      if (c === " " || c === "\t" || c === "\r") i++;
      else if (c === "#") while (i < text.length && text[i] !== "\n") i++;
      else if (c === "\n" && newlines) {
        i++;
        line++;
      } else return;
    }
  };
  const key = (): string[] => {
    const parts: string[] = [];
    for (;;) {
      skip(false);
      const c = text[i];
      if (c === '"' || c === "'") parts.push(str());
      else {
        const m = /^[A-Za-z0-9_-]+/.exec(text.slice(i));
        if (!m) fail(`expected a key, found ${JSON.stringify(text.slice(i, i + 10))}`);
        parts.push(m![0]);
        i += m![0].length;
      }
      skip(false);
      if (text[i] !== ".") return parts;
      i++;
    }
  };
  const str = (): string => {
    const q = text[i++];
    let out = "";
    while (text[i] !== q) {
      if (i >= text.length || text[i] === "\n") fail("unterminated string");
      if (q === '"' && text[i] === "\\") {
        const e = text[++i];
        const simple: Record<string, string> = { n: "\n", t: "\t", r: "\r", '"': '"', "\\": "\\", b: "\b", f: "\f" };
        if (e && simple[e] !== undefined) {
          out += simple[e];
          i++;
        } else if (e === "u" || e === "U") {
          const len = e === "u" ? 4 : 8;
          out += String.fromCodePoint(parseInt(text.slice(i + 1, i + 1 + len), 16));
          i += 1 + len;
        } else fail(`unknown escape \\${e}`);
      } else out += text[i++];
    }
    i++;
    return out;
  };
  const value = (): unknown => {
    skip(false);
    const c = text[i];
    if (c === '"' || c === "'") {
      if (text.startsWith(c.repeat(3), i)) fail("multi-line strings are not supported here; use one line");
      return str();
    }
    if (c === "[") {
      i++;
      const arr: unknown[] = [];
      for (;;) {
        skip(true);
        if (text[i] === "]") return (i++, arr);
        arr.push(value());
        skip(true);
        if (text[i] === ",") i++;
        else if (text[i] !== "]") fail("expected , or ] in array");
      }
    }
    const m = /^[^\s,\]#]+/.exec(text.slice(i));
    if (!m) return fail("expected a value");
    i += m[0].length;
    if (m[0] === "true" || m[0] === "false") return m[0] === "true";
    const n = Number(m[0].replace(/_/g, ""));
    if (!Number.isNaN(n) && /^[+-]?[\d_.eE+-]+$/.test(m[0])) return n;
    return fail(`unsupported value ${m[0]} (strings need quotes)`);
  };
  const descend = (obj: Record<string, unknown>, path: string[]) => {
    for (const k of path) {
      const next = (obj[k] ??= {});
      if (typeof next !== "object" || Array.isArray(next)) fail(`${path.join(".")} is not a table`);
      obj = next as Record<string, unknown>;
    }
    return obj;
  };
  for (;;) {
    skip(true);
    if (i >= text.length) return root;
    if (text[i] === "[") {
      if (text[i + 1] === "[") fail("arrays of tables are not supported here");
      i++;
      const path = key();
      if (text[i++] !== "]") fail("expected ] after table name");
      table = descend(root, path);
    } else {
      const path = key();
      if (text[i++] !== "=") fail(`expected = after ${path.join(".")}`);
      const target = descend(table, path.slice(0, -1));
      const last = path.at(-1) as string;
      if (last in target) fail(`${path.join(".")} is set twice`);
      target[last] = value();
    }
    skip(false);
    if (i < text.length && text[i] !== "\n") fail(`unexpected ${JSON.stringify(text[i])} after value`);
  }
}
