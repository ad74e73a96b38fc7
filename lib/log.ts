/**
 * The logger every lib/ module receives. lib/ never prints directly: the CLI decides where lines go
 * (pretty on a TTY, plain timestamped lines otherwise, JSON with --log-format json).
 */
export type LogData = Record<string, unknown>;

export interface Logger {
  debug(msg: string, data?: LogData): void;
  info(msg: string, data?: LogData): void;
  warn(msg: string, data?: LogData): void;
  error(msg: string, data?: LogData): void;
  /** A logger whose lines carry a subsystem tag, e.g. "api" or "store". */
  withTag(tag: string): Logger;
}

export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  withTag: () => silentLogger,
};

export interface LogLine {
  level: "debug" | "info" | "warn" | "error";
  tag?: string;
  msg: string;
  data?: LogData;
}

/** A logger that keeps its lines in memory, for tests. */
export function memoryLogger(lines: LogLine[] = [], tag?: string): Logger & { lines: LogLine[] } {
  const at = (level: LogLine["level"]) => (msg: string, data?: LogData) => {
    lines.push({ level, msg, ...(tag ? { tag } : {}), ...(data ? { data } : {}) });
  };
  return {
    lines,
    debug: at("debug"),
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
    withTag: (t) => memoryLogger(lines, tag ? `${tag}:${t}` : t),
  };
}

/** C0, DEL, C1 and the line and paragraph separators: what must not reach a terminal or a console raw. */
// oxlint-disable-next-line no-control-regex -- matching control characters is the point
export const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
const NAMED: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };
/** `\u202e`: as JSON and JavaScript write a character by its code, and as they read it back. */
const unicodeEscape = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
const escapeOf = (c: string) =>
  NAMED[c] ?? (c > "\u00ff" ? unicodeEscape(c) : `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);

/**
 * The bidirectional controls (embeddings, overrides, isolates and the marks): a nick holding U+202E shows the rest of
 * the operator's line reversed, so a log line can read as something it does not say.
 */
const BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069";
// oxlint-disable-next-line no-control-regex -- matching control characters is the point
const SHOWN = new RegExp(`[${CONTROL.source.slice(1, -1)}${BIDI}]`, "g");

/**
 * Text from outside (nicks, reasons, the service's messages) made safe for a terminal: every control character —
 * C0 (BEL, CR, line breaks, ESC and so every escape sequence), DEL, C1, the Unicode line separators and the
 * bidirectional controls — becomes a visible escape (`\x1b`, `\n`, `\u202e`), so a value can neither recolour,
 * retitle or clear the operator's terminal, nor forge a second line, nor reorder the one it is on.
 */
export function printable(text: string): string {
  return text.replace(SHOWN, escapeOf);
}

/** JSON.stringify leaves DEL, C1 and the bidirectional controls as they are; escaped they mean the same, inert. */
export function jsonPrintable(json: string): string {
  return json.replace(JSON_RAW, unicodeEscape);
}
const JSON_RAW = new RegExp(`[\\x7f-\\x9f${BIDI}]`, "g");
