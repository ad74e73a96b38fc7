import { type ConsolaInstance, createConsola, LogLevels, type LogObject } from "consola/core";
import { type LogData, type Logger, jsonPrintable, printable } from "../lib/log.ts";

export type LogFormat = "pretty" | "json";

export interface LogSetup {
  format: LogFormat;
  quiet: boolean;
  /** Every line passes through this before it is written, so secrets never reach a log. */
  redact: (text: string) => string;
  /** Where each line goes (cli/stdio.ts: the CLI's stderr). */
  write: (line: string) => void;
  /** The environment: HUB_LOG_LEVEL, CI and NO_COLOR. */
  env: Readonly<Record<string, string | undefined>>;
  /**
   * Pretty (colours, short time) or plain timestamped lines. A function (cli/stdio.ts: whether stderr is a
   * terminal) is asked at the first line, and pretty is then for a terminal outside CI.
   */
  tty: boolean | (() => boolean);
}

const LEVEL_NAMES = ["error", "warn", "log", "info", "debug"] as const;
const COLOURS: Record<string, string> = { error: "31", warn: "33", info: "36", debug: "90" };

/** consola's core (its fancy reporter costs ~20 ms of start-up) with three small reporters of our own. */
export function createLogger(setup: LogSetup): Logger {
  const { write, env } = setup;
  // Decided at the first line, by the descriptor: process.stderr.isTTY would build Node's stream objects, which cost
  // a one-shot command time (cli/stdio.ts) and `run` memory.
  let style: { pretty: boolean; colour: boolean } | undefined;
  const styleOf = () => {
    if (!style) {
      const tty = typeof setup.tty === "function" ? setup.tty() && !env.CI : setup.tty;
      const pretty = setup.format === "pretty" && tty;
      style = { pretty, colour: pretty && !env.NO_COLOR };
    }
    return style;
  };
  const envLevel = env.HUB_LOG_LEVEL?.toLowerCase();
  const level = setup.quiet ? LogLevels.warn : envLevel === "debug" ? LogLevels.debug : LogLevels.info;
  const reporter = {
    log(o: LogObject) {
      const name = (LEVEL_NAMES as readonly string[])[o.level] ?? "debug";
      const [msg, data] = o.args as [string, LogData | undefined];
      let line: string;
      if (setup.format === "json") {
        line = jsonPrintable(
          JSON.stringify({
            ts: o.date.toISOString(),
            level: name,
            ...(o.tag ? { tag: o.tag } : {}),
            msg,
            ...data,
          }),
        );
      } else {
        const fields = data
          ? Object.entries(data)
              .map(([k, v]) => ` ${k}=${typeof v === "string" && !/\s/.test(v) ? v : JSON.stringify(v)}`)
              .join("")
          : "";
        const { pretty, colour } = styleOf();
        const tag = o.tag ? `[${o.tag}] ` : "";
        const time = pretty ? o.date.toTimeString().slice(0, 8) : o.date.toISOString();
        const label = name.toUpperCase().padEnd(5);
        // The time dim (it is not the news), the level in its colour.
        const shown = colour
          ? `\x1b[2m${time}\x1b[0m \x1b[${COLOURS[name] ?? "0"}m${label}\x1b[0m`
          : `${time} ${label}`;
        // Nicks, reasons and the service's text are in msg and fields: escaped, they can't drive the terminal.
        line = `${shown} ${printable(tag + msg + fields)}`;
      }
      write(setup.redact(line));
    },
  };
  // consola and each tagged child are made at their first line: a one-shot command that logs nothing skips them.
  const wrap = (c: () => ConsolaInstance): Logger => ({
    debug: (msg, data) => c().debug(msg, data),
    info: (msg, data) => c().info(msg, data),
    warn: (msg, data) => c().warn(msg, data),
    error: (msg, data) => c().error(msg, data),
    withTag: (tag) => {
      let tagged: ConsolaInstance | undefined;
      return wrap(() => (tagged ??= c().withTag(tag)));
    },
  });
  let consola: ConsolaInstance | undefined;
  return wrap(() => (consola ??= createConsola({ level, reporters: [reporter] })));
}

/**
 * Replaces every registered secret (API key, RCON password) with [redacted]: as written, and as the line shows it
 * once escaped (a quote, a backslash or a control character in a JSON string or a log field is no longer the same
 * text, and would pass unredacted). Longest form first, so no form is left half-replaced.
 */
export function redactor(secrets: () => string[]): (text: string) => string {
  // Every line passes here: each secret's forms are worked out once, when it is first seen.
  const formsOf = new Map<string, string[]>();
  const forms = (s: string) => {
    let f = formsOf.get(s);
    if (!f) {
      const json = JSON.stringify(s).slice(1, -1);
      f = [...new Set([s, printable(s), json, jsonPrintable(json), printable(json)])].sort(
        (a, b) => b.length - a.length,
      );
      formsOf.set(s, f);
    }
    return f;
  };
  return (text) => {
    for (const s of secrets()) {
      if (s.length < 4) continue;
      for (const form of forms(s)) text = text.split(form).join("[redacted]");
    }
    return text;
  };
}
