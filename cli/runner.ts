import type { ArgsDef, CommandDef } from "citty";
import type { Example, Meta } from "./args.ts";
import { type Invocation, newInvocation } from "./context.ts";
import { CliError, EXIT } from "./exit.ts";
import { type Io, processIo } from "./stdio.ts";

type AnyCommand = CommandDef<ArgsDef>;

/**
 * Runs the CLI and returns its exit code. Replaces citty's runMain, which shows help whenever `--help` appears
 * anywhere (even inside a ban reason after `--`), silently ignores unknown flags, and prints stack traces for operator
 * mistakes. `io`: the environment, directory and output of this command line (the process's by default; a test's
 * when the tests run the CLI in their own process).
 */
export async function runCli(
  root: AnyCommand,
  argv: string[],
  rootHelp: () => string,
  io: Io = processIo(),
): Promise<number> {
  const invocation = newInvocation(io);
  invocation.marks.push(["main", performance.now()]);
  const code = await runInvocation(root, argv, rootHelp, invocation);
  invocation.marks.push(["exit", performance.now()]);
  // The moments of this start-up, for npm run bench:startup: one line on stderr, ms since the process started.
  if (invocation.env.HUB_PHASES === "1")
    invocation.stderr(
      `phases ${JSON.stringify(Object.fromEntries(invocation.marks.map(([n, ms]) => [n, Math.round(ms * 100) / 100])))}`,
    );
  return code;
}

async function runInvocation(
  root: AnyCommand,
  argv: string[],
  rootHelp: () => string,
  invocation: Invocation,
): Promise<number> {
  const json = argv.includes("--json");
  const { stdout, stderr } = invocation;
  let command: string[] = [];
  try {
    const { cmd, path, rest, walked } = await resolve(root, argv);
    invocation.marks.push(["loaded", performance.now()]);
    command = path;
    const flags = rest.slice(0, rest.indexOf("--") === -1 ? undefined : rest.indexOf("--"));
    if (flags.includes("--help") || flags.includes("-h")) {
      stdout(path.length === 0 ? rootHelp() : await usage(cmd, path));
      return EXIT.OK;
    }
    if (path.length === 0 && rest.length === 0) {
      stderr(rootHelp());
      return EXIT.USAGE;
    }
    if (path.length === 0 && (flags.includes("--version") || flags.includes("-V"))) {
      stdout(`${(await value(root.meta))?.version}`);
      return EXIT.OK;
    }
    const name = ["hub-agent", ...path].join(" ");
    const subs = await value(cmd.subCommands);
    // A command with subcommands of its own (`sandbox` and `sandbox reward`) runs itself when none is named.
    if (subs && Object.keys(subs).length && !cmd.run) {
      const given = rest.find((a) => !a.startsWith("-"));
      throw new CliError(
        given
          ? `unknown command "${name} ${given}": run \`${name} --help\` to see the commands`
          : `${name} needs a command: ${Object.keys(subs).join(", ")}`,
        EXIT.USAGE,
      );
    }
    const defs = (await value(cmd.args)) ?? {};
    const rawArgs = arrange(defs, rest, name);
    const context = { rawArgs, args: argsOf(defs, rawArgs) as ParsedArgs, data: invocation, cmd };
    // Each command on the way, outermost first (cli/main.ts sets the process's file i/o mode in the top one's).
    for (const c of walked) await c.setup?.(context);
    await cmd.run?.(context);
    const code = invocation.code ?? EXIT.OK;
    // A refused key or unknown server id met along the way (a cached answer may have served the command): exit 3.
    const refusal = code === EXIT.CONFIG ? undefined : await refusalOf(invocation);
    if (!refusal) return code;
    const { redactor } = await import("./log.ts");
    stderr(redactor(() => invocation.secrets)(`error: ${refusal}`));
    return EXIT.CONFIG;
  } catch (e) {
    return await report(e, json, command, invocation);
  }
}

/**
 * `hub-agent help [<command>…]`: the root help, or the command's usage as `<command> --help` prints it. A word that
 * names no command is a usage error, as everywhere else.
 */
export async function helpText(root: AnyCommand, words: string[], rootHelp: () => string): Promise<string> {
  if (words.length === 0) return rootHelp();
  const { cmd, path, rest } = await resolve(root, words);
  if (rest.length)
    throw new CliError(
      `hub-agent help takes a command, not "${words.join(" ")}": try \`hub-agent help ${path.join(" ")}\``,
      EXIT.USAGE,
    );
  return usage(cmd, path);
}

async function value<T>(v: T | (() => T | Promise<T>) | Promise<T> | undefined): Promise<T | undefined> {
  return typeof v === "function" ? await (v as () => T | Promise<T>)() : await v;
}

/** Walks down the subcommands named in argv; global flags may come before a command's name. */
async function resolve(root: AnyCommand, argv: string[]) {
  let cmd = root;
  const path: string[] = [];
  const walked: AnyCommand[] = [];
  let rest = argv;
  for (;;) {
    const subs = await value(cmd.subCommands);
    if (!subs) break;
    const args = (await value(cmd.args)) ?? {};
    const i = firstPositional(rest, args);
    const name = i === -1 ? undefined : rest[i];
    if (!name || (rest.indexOf("--") !== -1 && rest.indexOf("--") < i)) break;
    const sub = subs[name];
    if (!sub) {
      const where = ["hub-agent", ...path].join(" ");
      throw new CliError(`unknown command "${name}": run \`${where} --help\` to see the commands`, EXIT.USAGE);
    }
    cmd = (await value(sub)) as AnyCommand;
    walked.push(cmd);
    path.push(name);
    rest = [...rest.slice(0, i), ...rest.slice(i + 1)];
  }
  return { cmd, path, rest, walked };
}

function firstPositional(argv: string[], args: ArgsDef): number {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === "--") return -1;
    if (!a.startsWith("-")) return i;
    const def = args[undashed(a)];
    if (def?.type === "string" && !a.includes("=")) i++;
  }
  return -1;
}

/** Positionals that take the rest of the line (a ban's reason, the words of `help queue retry`). */
const REST_OF_LINE = new Set(["reason", "command"]);

/** A word that is a value, not an option, although it starts with "-": a negative number (`ban x -5 r`), or "-". */
const isValueWord = (a: string) => a === "-" || (a[0] === "-" && a[1] !== undefined && a[1] >= "0" && a[1] <= "9");

/**
 * The option's name with its leading dashes: `--as=Bob` → `as=Bob`. This file parses every command line, so it keeps
 * to plain loops and string calls: each builtin's or pattern's first run (Array.prototype.at, find, forEach, a
 * regular expression) cost the start of every command 0.01–0.1 ms where the rest of the way had no other use for it.
 */
function undashed(a: string): string {
  let i = 0;
  while (a[i] === "-") i++;
  return a.slice(i);
}

/**
 * The command's argv as citty gets it: its options first (a value option as `--name=value`, so a value that starts
 * with "-" stays its value), then `--`, then the positional words in order. Refuses, in one line naming the value and
 * the fix: an unknown option, an option without its value, a missing argument, and words the command does not take.
 */
function arrange(args: ArgsDef, rest: string[], name: string): string[] {
  const options: string[] = [];
  const words: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i] as string;
    if (a === "--") {
      words.push(...rest.slice(i + 1));
      break;
    }
    if (!a.startsWith("-") || isValueWord(a)) {
      words.push(a);
      continue;
    }
    const key = undashed(a).split("=")[0] as string;
    const def = args[key] ?? args[camel(key)];
    if ((def?.type === "string" || def?.type === "enum") && !a.includes("=")) {
      if (i + 1 >= rest.length)
        throw new CliError(
          `${a} needs a value: ${a} <${def.valueHint ?? "value"}> (see \`${name} --help\`)`,
          EXIT.USAGE,
        );
      options.push(`${a}=${rest[++i]}`);
    } else options.push(a);
  }
  checkFlags(args, options, name);
  const positionals = Object.entries(args).filter(([, def]) => def.type === "positional");
  const synopsis = positionals
    .map(([key, def]) => {
      const word = `<${key}${REST_OF_LINE.has(key) ? "…" : ""}>`;
      return def.required === false ? `[${word}]` : word;
    })
    .join(" ");
  let missing: (typeof positionals)[number] | undefined;
  for (let i = words.length; i < positionals.length && !missing; i++)
    if (positionals[i]![1].required !== false) missing = positionals[i];
  if (missing) {
    const word = `<${missing[0]}${REST_OF_LINE.has(missing[0]) ? "…" : ""}>`;
    throw new CliError(`${name} needs ${word}: ${name} ${synopsis}`, EXIT.USAGE);
  }
  const last = positionals[positionals.length - 1]?.[0];
  if (words.length > positionals.length && !(last && REST_OF_LINE.has(last))) {
    const extra = words.slice(positionals.length).join(" ");
    const takes = positionals.length ? `${name} ${synopsis}` : "it takes no arguments";
    throw new CliError(`${name} does not take "${extra}": ${takes}`, EXIT.USAGE);
  }
  return [...options, "--", ...words];
}

/**
 * The arguments a command's `run` gets, as citty's parser would give them, from argv in arrange's form (each option
 * checked and known, a value option as `--name=value`, then `--` and the words): each option under its name and its
 * camelCase name (a boolean true, `--name=false` or `--no-name` false), each positional by name in order, and every
 * word in `_`. Not citty's runCommand: its parser loads node:util, 1.3–1.7 ms of every command's start (docs/libraries.md).
 */
export function argsOf(defs: ArgsDef, arranged: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const names = optionNames(defs);
  const dash = arranged.indexOf("--");
  for (const option of arranged.slice(0, dash)) {
    const [flag = "", ...value] = undashed(option).split("=");
    const negated = !names.has(flag) && flag.startsWith("no-");
    const key = names.get(negated ? flag.slice(3) : flag);
    if (key === undefined) continue; // arrange refused it already
    const def = defs[key]!;
    const text = value.length ? value.join("=") : undefined;
    const v = def.type === "boolean" ? !negated && text !== "false" : negated ? undefined : (text ?? "");
    out[key] = out[camel(key)] = v;
  }
  const words = arranged.slice(dash + 1);
  const positionals = Object.entries(defs).filter(([, def]) => def.type === "positional");
  for (let i = 0; i < positionals.length; i++) out[positionals[i]![0]] = words[i];
  out._ = words;
  return out;
}
type ParsedArgs = Parameters<NonNullable<AnyCommand["run"]>>[0]["args"];

/** `log-format` → `logFormat`: each `-` before a word character goes, and that character is upper case. */
function camel(key: string): string {
  let out = "";
  for (let i = 0; i < key.length; i++) {
    const next = key[i + 1];
    if (key[i] === "-" && next !== undefined && /* \w */ isWordChar(next)) out += key[++i]!.toUpperCase();
    else out += key[i];
  }
  return out;
}
const isWordChar = (c: string) =>
  (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || (c >= "0" && c <= "9") || c === "_";

/** Each name an option answers to (its key, its camelCase name, its aliases), to its key; `no-<name>` aside. */
function optionNames(defs: ArgsDef): Map<string, string> {
  const names = new Map<string, string>();
  for (const [key, def] of Object.entries(defs))
    if (def.type !== "positional")
      for (const n of [key, camel(key), ...[(def as { alias?: string | string[] }).alias ?? []].flat()])
        names.set(n, key);
  return names;
}

/** Refuses flags the command does not define: citty would silently ignore them (and `--lenght 5` is a typo). */
function checkFlags(args: ArgsDef, flags: string[], name: string) {
  const names = optionNames(args);
  for (const f of flags) {
    if (!f.startsWith("-") || f === "-") continue;
    const n = undashed(f).split("=")[0] as string;
    if (!names.has(n) && !(n.startsWith("no-") && names.has(n.slice(3))))
      throw new CliError(`unknown option ${f} for \`${name}\`: run \`${name} --help\` to see its options`, EXIT.USAGE);
  }
}

async function usage(cmd: AnyCommand, path: string[]): Promise<string> {
  // Plain text (citty colours it even when piped), naming the full invocation rather than the last word.
  const name = path.at(-1) as string;
  const [{ renderUsage }, { stripVTControlCharacters: stripAnsi }] = await Promise.all([
    import("citty"),
    import("node:util"),
  ]);
  let text = stripAnsi(await renderUsage(cmd)).replace(`USAGE ${name}`, `USAGE hub-agent ${path.join(" ")}`);
  // A command that also runs by itself (`sandbox`): its subcommands are optional, not the required word citty shows.
  const subs = Object.keys((await value(cmd.subCommands)) ?? {});
  if (cmd.run && subs.length)
    text = text.replace(/^(USAGE .*) (\S+)$/m, (line, head, tail) =>
      tail === subs.join("|") ? `${head} [${tail} …]` : line,
    );
  // citty has no examples: ours are in each command's meta (cli/args.ts helpMeta).
  const examples = examplesHelp(((await value(cmd.meta)) as Meta | undefined)?.examples);
  return examples.length ? `${text.trimEnd()}\n\n${examples.join("\n")}` : text;
}

/** The EXAMPLES section of a help page; empty when the command has none. */
export function examplesHelp(list: Example[] | undefined): string[] {
  if (!list?.length) return [];
  const width = Math.min(56, Math.max(...list.map(([cmd]) => cmd.length)));
  return ["EXAMPLES", ...list.map(([cmd, what]) => `  ${cmd.padEnd(width)}  ${what}`.trimEnd())];
}

/** The refused key or unknown server id the command's service clients met; no import when it made none. */
async function refusalOf(invocation: Invocation): Promise<string | undefined> {
  if (!invocation.guards.length) return undefined;
  return (await import("../lib/app/service.ts")).credentialRefusal(invocation.guards);
}

/** An error as the operator is told it: its line and exit code. */
async function asCliError(e: unknown, command: string[]): Promise<CliError> {
  if (e instanceof CliError) return e;
  // `lang` names no language that can be loaded (lib/messages.ts says which, and the fix): the configuration's.
  if ((e as Error)?.name === "MessagesError") return new CliError((e as Error).message, EXIT.CONFIG);
  const message = `unexpected error: ${(e as Error)?.message ?? String(e)}`;
  return (await storeFailure(e, command)) ?? new CliError(message, EXIT.FAILURE);
}

async function report(e: unknown, json: boolean, command: string[], invocation: Invocation): Promise<number> {
  const [{ redactor }, { jsonPrintable, printable }] = await Promise.all([import("./log.ts"), import("../lib/log.ts")]);
  const redact = redactor(() => invocation.secrets);
  const { stdout, stderr } = invocation;
  const cliError = await credentialFailure(invocation, await asCliError(e, command));
  if (json) {
    const error = { code: cliError.code, message: cliError.message, details: cliError.details };
    stdout(redact(jsonPrintable(JSON.stringify({ error }))));
  } else {
    const lines = ["error: " + cliError.message, ...cliError.details.map((d) => "  " + d)];
    stderr(redact(lines.map((l) => printable(l)).join("\n")));
  }
  if (cliError.code === EXIT.FAILURE && !(e instanceof CliError) && invocation.env.HUB_LOG_LEVEL === "debug")
    stderr(redact(String((e as Error)?.stack)));
  return cliError.code;
}

/** Commands whose failure before the queue write means nothing was queued (after it, they exit 6 themselves). */
const QUEUEING = new Set(["ban", "unban", "warn"]);

/** A full, read-only or blocked store: one line naming the path and the fix, with its own exit code. */
async function storeFailure(e: unknown, command: string[]): Promise<CliError | undefined> {
  const { describeStorageError } = await import("../lib/app/storage.ts");
  const line = describeStorageError(e);
  if (!line) return undefined;
  return new CliError(QUEUEING.has(command[0] ?? "") ? `${line}; nothing was queued` : line, EXIT.STORE);
}

/** Codes that say more than a refused key would: the arguments, the store, another run. */
const KEEPS_ITS_CODE = new Set<number>([EXIT.USAGE, EXIT.CONFIG, EXIT.INSTANCE, EXIT.STORE]);

/**
 * A failure that followed from a refused key or an unknown server id (the serverbundle unknown, no warnings
 * listed, no dashboard link): that is what the operator must fix, so it is the line, with exit 3.
 */
async function credentialFailure(invocation: Invocation, e: CliError): Promise<CliError> {
  if (KEEPS_ITS_CODE.has(e.code)) return e;
  const refusal = await refusalOf(invocation);
  if (!refusal) return e;
  return new CliError(
    e.message.includes("nothing was queued") ? `${refusal}; nothing was queued` : refusal,
    EXIT.CONFIG,
  );
}
