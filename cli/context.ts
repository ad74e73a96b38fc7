import { type Logger, jsonPrintable, printable } from "../lib/log.ts";
import type { Watched } from "../lib/app/service.ts";
import type { Config, GameFacts } from "../lib/config/index.ts";
import type { ServerChoice } from "../lib/app/servers.ts";
import { createLogger, redactor, type LogFormat } from "./log.ts";
import { CliError, EXIT } from "./exit.ts";
import { type Io, processIo } from "./stdio.ts";

export { globalArgs, type GlobalFlags } from "./args.ts";
import type { GlobalFlags } from "./args.ts";

/**
 * One command line's own state, shared by the runner and its command (citty's `data`), so that nothing in cli/ is
 * module state: where it reads and writes (the environment, the working directory, stdout and stderr: the process's,
 * or a test's when the CLI runs in the tests' process), the secrets to keep out of every line, the service clients
 * whose refused key decides the exit code, and the exit code the command chose.
 */
export interface Invocation extends Io {
  secrets: string[];
  /** Service clients (lib/app/service.ts) whose refused key or unknown server id makes the command exit 3. */
  guards: Watched[];
  /** The command's exit code, when it chose one (0 otherwise). */
  code?: number;
  /** Named moments, ms since the process started (HUB_PHASES=1 prints them: npm run bench:startup reads them). */
  marks: [string, number][];
}

export const newInvocation = (io: Io = processIo()): Invocation => ({ ...io, secrets: [], guards: [], marks: [] });

/** `data` as the runner hands it over: its Invocation; a new one (the process's) when the command runs alone. */
export const invocationOf = (data?: unknown): Invocation => (data as Invocation | undefined) ?? newInvocation();

type ConfigOptions = {
  /** This server of servers.d, whatever --server says (`status` of every server). */
  server?: string;
  warnings?: boolean | "changed";
  timePatterns?: boolean;
  exposed?: (files: { message: string; fix: string }[]) => void;
};

/** What a command handler gets: a logger, output helpers, and the configuration on demand. */
export interface Context {
  logger: Logger;
  invocation: Invocation;
  /** The text with every secret of this invocation replaced. */
  redact(text: string): string;
  /** The command's exit code (the runner exits with it once the command returns). */
  exit(code: number): void;
  /** Marks a moment of the command's start-up (Invocation.marks). */
  mark(name: string): void;
  json: boolean;
  /** One line of human text on stdout, unless --json; control characters (line breaks too) are escaped. */
  say(text: string): void;
  /** The machine result on stdout with --json. */
  emit(value: unknown): void;
  /**
   * Loads and validates the configuration; a bad one is a CliError with exit code 3. Its warnings (intervals below
   * the spec's, files with a secret everyone can read) are logged only with `warnings` (`run` and `doctor`):
   * one-shot commands would repeat them every time. `exposed` takes the latter instead of the log (doctor's lines).
   * `"changed"` (`run`): with --quiet, only those not said by the last run (lib/said.ts), so cron mails them once.
   * `timePatterns`: for the commands that run the game's patterns (LoadOptions).
   */
  config(opts?: ConfigOptions): Promise<Config>;
  /**
   * `readOnly` (`status`, `queue status`): they read only the store, so a configuration that is not valid but
   * whose storage.dir can be told is one warning, not exit 3 (the problem said, the store shown).
   */
  config(opts: ConfigOptions & { readOnly: true }): Promise<Pick<Config, "storage">>;
  /** What the configuration last loaded says of the game's ids (LoadResult.game); undefined before it is. */
  gameFacts(): GameFacts | undefined;
  /**
   * Which server's configuration (lib/app/config.ts serverChoice): `config()` refuses "all" (several servers and no
   * --server) as a usage error; `run` and `status` ask first and take every server.
   */
  servers(): Promise<ServerChoice>;
  /** Registers a secret so it never appears in output or logs. */
  secret(value: string): void;
}

/** The line above one server's part of `status` and `doctor` when they show every server of a host. */
export const serverHeading = (name: string): string => `── ${name} ${"─".repeat(Math.max(3, 60 - name.length))}`;

/** Context.servers: asked once, then the same answer (a problem is a usage error). */
function chooser(flags: GlobalFlags, invocation: Invocation): () => Promise<ServerChoice> {
  let chosen: Promise<ServerChoice> | undefined;
  return () =>
    (chosen ??= (async () => {
      const { env, cwd } = invocation;
      // No server named and no servers.d: the one configuration, as always, without loading what choosing needs.
      const named = flags.server !== undefined || !!env.HUB_SERVER;
      // Loaded here, not at the top: the runner's module, which every command line (`--help` too) loads, imports this.
      const [{ serversDirOf }, { exists }] = await Promise.all([
        import("../lib/config/servers.ts"),
        import("../lib/fsio.ts"),
      ]);
      if (!named && !(await exists(serversDirOf({ file: flags.config, env, cwd })))) return { kind: "single" };
      const { serverChoice } = await import("../lib/app/servers.ts");
      const c = await serverChoice({ file: flags.config, env, cwd, ...(flags.server ? { server: flags.server } : {}) });
      if (c.kind === "problem") throw new CliError(c.line, EXIT.USAGE);
      return c;
    })());
}

/** `data`: the runner's Invocation (citty hands it to the command); a new one when the command runs alone. */
export function createContext(flags: GlobalFlags, data?: unknown): Context {
  const invocation = invocationOf(data);
  const { secrets } = invocation;
  const redact = redactor(() => secrets);
  const format = flags["log-format"] ?? "pretty";
  if (format !== "pretty" && format !== "json")
    throw new CliError(`--log-format ${format} is not a log format: use pretty or json`, EXIT.USAGE);
  const logger = createLogger({
    format: format as LogFormat,
    quiet: !!flags.quiet,
    redact,
    env: invocation.env,
    write: invocation.stderr,
    tty: invocation.stderrIsTty,
  });
  const json = !!flags.json;
  const out = (text: string) => invocation.stdout(redact(text));
  const servers = chooser(flags, invocation);
  let game: GameFacts | undefined;
  return {
    logger,
    invocation,
    redact,
    exit: (code) => void (invocation.code = code),
    mark: (name) => void invocation.marks.push([name, performance.now()]),
    json,
    say: (text) => {
      if (!json) out(printable(text));
    },
    emit: (value) => {
      if (json) out(jsonPrintable(JSON.stringify(value, null, 2)));
    },
    // Once each: a host reads every server's configuration again at each SIGHUP and restart, and every line is
    // cleaned of every secret held.
    secret: (value) => void (secrets.includes(value) || secrets.push(value)),
    servers,
    async config(opts: ConfigOptions & { readOnly?: boolean } = {}): Promise<Config> {
      invocation.marks.push(["operation", performance.now()]);
      const choice: ServerChoice = opts.server ? { kind: "one", name: opts.server } : await servers();
      if (choice.kind === "all")
        throw new CliError(
          `${choice.dir} holds ${choice.names.length} servers (${choice.names.join(", ")}): name one with --server <name> (or HUB_SERVER)`,
          EXIT.USAGE,
        );
      const { loadCachedConfig } = await import("../lib/app/config-cache.ts");
      const result = await loadCachedConfig({
        file: flags.config,
        env: invocation.env,
        cwd: invocation.cwd,
        ...(opts.timePatterns ? { timePatterns: true } : {}),
        ...(choice.kind === "one" ? { server: choice.name } : {}),
      });
      for (const value of result.secrets) if (!secrets.includes(value)) secrets.push(value);
      invocation.marks.push(["config", performance.now()]);
      if (!result.ok) {
        const where = result.file ? ` (${result.file})` : " (no config file; environment only)";
        if (opts.readOnly && result.storage) {
          const { configProblemLine } = await import("../lib/app/storage.ts");
          logger.warn(configProblemLine(where, result.problems, result.storage.dir));
          return { storage: result.storage } as Config; // typed Pick<Config, "storage"> by the readOnly overload
        }
        throw new CliError(`configuration is not valid${where}`, EXIT.CONFIG, result.problems);
      }
      if (opts.exposed) opts.exposed(result.exposed);
      if (opts.warnings) {
        let lines = [...result.warnings];
        if (!opts.exposed) lines.push(...result.exposed.map((w) => `${w.message}: \`${w.fix}\``));
        // Even with none: a warning fixed, then back, is a change to say (what was said is forgotten here).
        if (opts.warnings === "changed") {
          const { configWarningsToSay } = await import("../lib/said.ts");
          const quiet = !!flags.quiet;
          lines = [...(await configWarningsToSay(result.config.storage.dir, lines, { quiet, logger }))];
        }
        for (const w of lines) logger.warn(w);
      }
      game = result.game;
      return result.config;
    },
    gameFacts: () => game,
  };
}
