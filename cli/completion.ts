import type { ArgDef, ArgsDef, CommandDef } from "citty";
import type { Example, Meta } from "./args.ts";

/**
 * Shell completion scripts generated from the command table: the commands and subcommands citty knows, each
 * one's flags, and the values a flag or positional argument takes where they are a fixed list (a `valueHint` like
 * "pretty|json", an enum's options) or a file (`valueHint: "file"`). Every script finds where the cursor is the
 * way the runner does (cli/runner.ts): global flags may come before the command, a flag that takes a value skips
 * the next word, and nothing after `--` is completed (it is free text, like a ban reason). docs/packaging.md §3.
 */

export const SHELLS = ["bash", "zsh", "fish"] as const;
export type Shell = (typeof SHELLS)[number];

export interface Flag {
  name: string;
  description: string;
  /** Takes a value (a string or enum flag). */
  value: boolean;
  /** The fixed values it takes; "file" for a path; undefined for free text. */
  choices?: string[] | "file";
}

export interface CommandNode {
  /** The words that name it, e.g. ["queue", "status"]; [] for the root. */
  path: string[];
  description: string;
  flags: Flag[];
  /** Fixed values of each positional argument, in order (undefined: free text). */
  positionals: (string[] | "file" | undefined)[];
  subcommands: CommandNode[];
  /** What its --help ends with (the meta's examples). */
  examples: Example[];
}

type Lazy<T> = T | (() => T | Promise<T>) | Promise<T>;
const value = async <T>(v: Lazy<T> | undefined): Promise<T | undefined> =>
  typeof v === "function" ? await (v as () => T | Promise<T>)() : await v;

/** Loads every command (each module's import is what `--help` avoids; generating completion may pay it). */
export async function commandTree(cmd: CommandDef<ArgsDef>, path: string[] = []): Promise<CommandNode> {
  const [meta, args, subs] = await Promise.all([value(cmd.meta), value(cmd.args), value(cmd.subCommands)]);
  const entries = Object.entries(args ?? {});
  const subcommands = await Promise.all(
    Object.entries(subs ?? {}).map(async ([name, sub]) =>
      commandTree((await value(sub)) as CommandDef<ArgsDef>, [...path, name]),
    ),
  );
  return {
    path,
    description: meta?.description ?? "",
    flags: [
      ...entries.filter(([, def]) => def.type !== "positional").map(([name, def]) => flag(name, def)),
      { name: "help", description: "show this command's help", value: false },
      ...(path.length === 0 ? [{ name: "version", description: "print the version", value: false }] : []),
    ],
    positionals: entries.filter(([, def]) => def.type === "positional").map(([, def]) => choicesOf(def)),
    subcommands,
    examples: (meta as Meta | undefined)?.examples ?? [],
  };
}

function flag(name: string, def: ArgDef): Flag {
  const takes = def.type === "string" || def.type === "enum";
  return { name, description: def.description ?? "", value: takes, ...(takes ? { choices: choicesOf(def) } : {}) };
}

function choicesOf(def: ArgDef): string[] | "file" | undefined {
  if (def.type === "enum" && def.options?.length) return def.options;
  if (def.valueHint === "file") return "file";
  return def.valueHint?.includes("|") ? def.valueHint.split("|") : undefined;
}

const WORD = /^[a-z][a-z0-9-]*$/;
const CHOICE = /^[\w.@+-]+$/;

function nodes(root: CommandNode): CommandNode[] {
  const all = [root, ...root.subcommands.flatMap(nodes)];
  // Names and choices go into scripts unquoted (case patterns, word lists): only plain words may.
  for (const n of all) {
    for (const word of [...n.path, ...n.flags.map((f) => f.name)])
      if (!WORD.test(word)) throw new Error(`completion: "${word}" is not a plain command or flag name`);
    for (const c of [...n.flags.map((f) => f.choices), ...n.positionals])
      for (const word of Array.isArray(c) ? c : [])
        if (!CHOICE.test(word)) throw new Error(`completion: "${word}" is not a plain value`);
  }
  return all;
}

export function completionScript(shell: Shell, root: CommandNode, program = "hub-agent"): string {
  return { bash, zsh, fish }[shell](root, program);
}

/** Every flag that takes a value, anywhere: the path walk skips the word after it. */
const valueFlags = (all: CommandNode[]) => [
  ...new Set(all.flatMap((n) => n.flags.filter((f) => f.value).map((f) => `--${f.name}`))),
];
const key = (n: CommandNode) => n.path.join(" ");

/**
 * One `case` branch per flag value and action, for the pattern "<path>:<flag>": a flag every command has (the
 * global ones) is one "*:--flag" branch instead of one per command.
 */
function valueCases(all: CommandNode[], action: (f: Flag) => string): [pattern: string, action: string][] {
  const groups = new Map<string, { flag: string; action: string; paths: string[] }>();
  for (const n of all)
    for (const f of n.flags.filter((f) => f.value)) {
      const a = action(f);
      const g = groups.get(`${f.name}\0${a}`) ?? { flag: f.name, action: a, paths: [] };
      g.paths.push(key(n));
      groups.set(`${f.name}\0${a}`, g);
    }
  return [...groups.values()].map((g) => [
    g.paths.length === all.length ? `*:--${g.flag}` : g.paths.map((p) => `"${p}:--${g.flag}"`).join("|"),
    g.action,
  ]);
}
const choiceWords = (c: string[]) => c.join(" ");

/** The flags every command has (the global ones and --help), listed once; then each command's own. */
function splitFlags(all: CommandNode[]): { common: Flag[]; own: (n: CommandNode) => Flag[] } {
  const common = all[0]!.flags.filter((f) => all.every((n) => n.flags.some((g) => g.name === f.name)));
  const names = new Set(common.map((f) => f.name));
  return { common, own: (n) => n.flags.filter((f) => !names.has(f.name)) };
}

/**
 * The loop of the bash and zsh scripts that reads the words before the cursor: `<path>` becomes the command's words
 * ("queue status"), `npos` the count of its positional arguments so far; after a literal -- it returns at once.
 */
function walk(
  all: CommandNode[],
  o: { words: string; from: number; to: string; path: string; skipValue: string },
): string[] {
  const p = o.path;
  const paths = all.filter((n) => n.path.length).map((n) => (n.path.length > 1 ? `"${key(n)}"` : key(n)));
  return [
    `  for (( i = ${o.from}; i < ${o.to}; i++ )); do`,
    `    word=\${${o.words}[i]}`,
    `    case $word in`,
    `      --) return 0 ;;`,
    `      ${valueFlags(all).join("|")}) ${o.skipValue} ;;`,
    `      -*) ;;`,
    `      *)`,
    `        case "\${${p}:+$${p} }$word" in`,
    `          ${paths.join("|")}) ${p}="\${${p}:+$${p} }$word"; npos=0 ;;`,
    `          *) (( npos++ )) ;;`,
    `        esac ;;`,
    `    esac`,
    `  done`,
  ];
}

function bash(root: CommandNode, program: string): string {
  const all = nodes(root);
  const fn = `_${program.replace(/\W/g, "_")}_complete`;
  const lines = [
    `# ${program} completion for bash, generated by \`${program} completion bash\`.`,
    `# Load it in ~/.bashrc: source <(${program} completion bash)`,
    `# or install it: ${program} completion bash > /etc/bash_completion.d/${program}`,
    `${fn}() {`,
    `  local cur=\${COMP_WORDS[COMP_CWORD]} prev="" path="" word i npos=0`,
    `  (( COMP_CWORD > 0 )) && prev=\${COMP_WORDS[COMP_CWORD-1]}`,
    `  # --name=value: bash splits it at "=", so the flag is the word before the "="`,
    `  if [[ $cur == "=" ]]; then prev=\${COMP_WORDS[COMP_CWORD-1]}; cur=""; fi`,
    `  if [[ $prev == "=" ]] && (( COMP_CWORD > 1 )); then prev=\${COMP_WORDS[COMP_CWORD-2]}; fi`,
    `  COMPREPLY=()`,
    ...walk(all, {
      words: "COMP_WORDS",
      from: 1,
      to: "COMP_CWORD",
      path: "path",
      // --flag=value arrives as three words: the flag, "=", the value
      skipValue: `[[ \${COMP_WORDS[i+1]} == "=" ]] && (( i++ )); (( i++ ))`,
    }),
    `  case "$path:$prev" in`,
  ];
  const bashValue = (f: Flag) =>
    f.choices === "file"
      ? `compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur"))`
      : f.choices
        ? `COMPREPLY=($(compgen -W "${choiceWords(f.choices)}" -- "$cur"))`
        : ":";
  for (const [pattern, action] of valueCases(all, bashValue)) lines.push(`    ${pattern}) ${action}; return 0 ;;`);
  const { common, own } = splitFlags(all);
  const flagWords = (flags: Flag[]) => flags.map((f) => `--${f.name}`).join(" ");
  lines.push(
    `  esac`,
    `  local words=""`,
    `  if [[ $cur == -* ]]; then`,
    `    words="${flagWords(common)}"`,
    `    case $path in`,
  );
  for (const n of all) if (own(n).length) lines.push(`      "${key(n)}") words+=" ${flagWords(own(n))}" ;;`);
  lines.push(`    esac`, `  else`, `    case "$path:$npos" in`);
  for (const n of all) {
    if (n.subcommands.length)
      lines.push(`      "${key(n)}:0") words="${n.subcommands.map((s) => s.path.at(-1)).join(" ")}" ;;`);
    n.positionals.forEach((c, i) => {
      if (c === "file")
        lines.push(
          `      "${key(n)}:${i}") compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur")); return 0 ;;`,
        );
      else if (c) lines.push(`      "${key(n)}:${i}") words="${choiceWords(c)}" ;;`);
    });
  }
  lines.push(
    `    esac`,
    `  fi`,
    `  COMPREPLY=($(compgen -W "$words" -- "$cur"))`,
    `}`,
    `complete -F ${fn} ${program}`,
    "",
  );
  return lines.join("\n");
}

/** A single-quoted string for zsh and POSIX shells. */
const shQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
/** A single-quoted string for fish. */
const fishQuote = (s: string) => `'${s.replace(/[\\']/g, (c) => `\\${c}`)}'`;
/** One line of help text (descriptions may hold backticks, colons and line breaks). */
const oneLine = (s: string) => s.replace(/\s+/g, " ").trim();

function zsh(root: CommandNode, program: string): string {
  const all = nodes(root);
  const fn = `_${program.replace(/\W/g, "_")}`;
  const described = (name: string, text: string) => shQuote(`${name}:${oneLine(text)}`);
  const lines = [
    `#compdef ${program}`,
    `# ${program} completion for zsh, generated by \`${program} completion zsh\`.`,
    `# Install it as _${program} in a directory of $fpath, or load it in ~/.zshrc after compinit:`,
    `#   source <(${program} completion zsh)`,
    `${fn}() {`,
    `  local path_="" word prev="\${words[CURRENT-1]}" cur="\${words[CURRENT]}" i npos=0`,
    `  local -a items`,
    ...walk(all, { words: "words", from: 2, to: "CURRENT", path: "path_", skipValue: "(( i++ ))" }),
    `  if [[ $cur == --*=* ]]; then prev=\${cur%%=*}; compset -P '*='; fi`,
    `  case "$path_:$prev" in`,
  ];
  const zshValue = (f: Flag) =>
    f.choices === "file"
      ? "_files"
      : f.choices
        ? `compadd -- ${f.choices.map(shQuote).join(" ")}`
        : `_message ${shQuote(oneLine(f.description) || f.name)}`;
  for (const [pattern, action] of valueCases(all, zshValue)) lines.push(`    ${pattern}) ${action}; return ;;`);
  const { common, own } = splitFlags(all);
  const flagItems = (flags: Flag[]) => flags.map((f) => described(`--${f.name}`, f.description)).join(" ");
  lines.push(`  esac`, `  if [[ $cur == -* ]]; then`, `    items=(${flagItems(common)})`, `    case $path_ in`);
  for (const n of all) if (own(n).length) lines.push(`      "${key(n)}") items+=(${flagItems(own(n))}) ;;`);
  lines.push(`    esac`, `    _describe -t options option items`, `    return`, `  fi`, `  case "$path_:$npos" in`);
  for (const n of all) {
    if (n.subcommands.length)
      lines.push(
        `    "${key(n)}:0") items=(${n.subcommands.map((s) => described(s.path.at(-1) as string, s.description)).join(" ")}); _describe -t commands command items ;;`,
      );
    n.positionals.forEach((c, i) => {
      if (c === "file") lines.push(`    "${key(n)}:${i}") _files ;;`);
      else if (c) lines.push(`    "${key(n)}:${i}") compadd -- ${c.map(shQuote).join(" ")} ;;`);
    });
  }
  lines.push(`  esac`, `}`, `if [[ $zsh_eval_context[-1] == loadautofunc ]]; then`, `  ${fn} "$@"`, `else`);
  lines.push(`  compdef ${fn} ${program}`, `fi`, "");
  return lines.join("\n");
}

function fish(root: CommandNode, program: string): string {
  const all = nodes(root);
  const fn = `__${program.replace(/\W/g, "_")}`;
  const paths = all.filter((n) => n.path.length).map((n) => shQuote(key(n)));
  const lines = [
    `# ${program} completion for fish, generated by \`${program} completion fish\`.`,
    `# Install it: ${program} completion fish > ~/.config/fish/completions/${program}.fish`,
    `# Where the cursor is: the command's words so far ("queue status", "" at the top, "--" after a literal --),`,
    `# then how many of its positional arguments come before it.`,
    `function ${fn}_where`,
    `    set -l path ""`,
    `    set -l npos 0`,
    `    set -l skip 0`,
    `    for word in (commandline -opc)[2..-1]`,
    `        if test $skip = 1`,
    `            set skip 0`,
    `            continue`,
    `        end`,
    `        switch $word`,
    `            case --`,
    `                printf '%s\\n' 'after --' 0`,
    `                return`,
    `            case ${valueFlags(all).join(" ")}`,
    `                set skip 1`,
    `            case '-*'`,
    `            case '*'`,
    `                set -l next (string trim -- "$path $word")`,
    `                if contains -- $next ${paths.join(" ")}`,
    `                    set path $next`,
    `                    set npos 0`,
    `                else`,
    `                    set npos (math $npos + 1)`,
    `                end`,
    `        end`,
    `    end`,
    `    printf '%s\\n' $path $npos`,
    `end`,
    `# ${fn}_at <path> [<positional index>]`,
    `function ${fn}_at`,
    `    set -l where (${fn}_where)`,
    `    test "$where[1]" = "$argv[1]"; and begin; test (count $argv) -lt 2; or test "$where[2]" = "$argv[2]"; end`,
    `end`,
    `function ${fn}_free`,
    `    set -l where (${fn}_where)`,
    `    test "$where[1]" != 'after --'`,
    `end`,
    `complete -c ${program} -f`,
  ];
  const fishFlag = (f: Flag, condition: string) => {
    const takes = !f.value
      ? ""
      : f.choices === "file"
        ? " -r -F"
        : f.choices
          ? ` -x -a ${fishQuote(choiceWords(f.choices))}`
          : " -x";
    return `complete -c ${program} -n ${fishQuote(condition)} -l ${f.name}${takes} -d ${fishQuote(oneLine(f.description))}`;
  };
  const { common, own } = splitFlags(all);
  for (const f of common) lines.push(fishFlag(f, `${fn}_free`));
  for (const n of all) {
    const where = (pos?: number) => `${fn}_at ${shQuote(key(n))}${pos === undefined ? "" : ` ${pos}`}`;
    const at = (pos?: number) => `-n ${fishQuote(where(pos))}`;
    for (const s of n.subcommands)
      lines.push(`complete -c ${program} ${at(0)} -a ${s.path.at(-1)} -d ${fishQuote(oneLine(s.description))}`);
    for (const f of own(n)) lines.push(fishFlag(f, where()));
    n.positionals.forEach((c, i) => {
      if (c === "file") lines.push(`complete -c ${program} ${at(i)} -F`);
      else if (c) lines.push(`complete -c ${program} ${at(i)} -a ${fishQuote(choiceWords(c))}`);
    });
  }
  return lines.join("\n") + "\n";
}
