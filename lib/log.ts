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
