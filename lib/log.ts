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
const escapeOf = (c: string) =>
  NAMED[c] ??
  (c > "\u00ff" ? `\\u${c.charCodeAt(0).toString(16)}` : `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);

/**
 * Text from outside (nicks, reasons, the service's messages) made safe for a terminal: every control character —
 * C0 (BEL, CR, line breaks, ESC and so every escape sequence), DEL, C1, and the Unicode line separators — becomes
 * a visible escape (`\x1b`, `\n`), so a value can neither recolour, retitle or clear the operator's terminal nor
 * forge a second line.
 */
export function printable(text: string): string {
  return text.replace(CONTROL, escapeOf);
}

/** JSON.stringify leaves DEL and C1 as they are; inside a JSON string `\u009b` means the same and is inert. */
export function jsonPrintable(json: string): string {
  return json.replace(/[\x7f-\x9f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
