/**
 * How each target console splits a line into commands and arguments, written from the engines' own rules (not
 * from our escaping), so tests can prove that an escaped value stays one argument of one command.
 */

/**
 * Quake 3 / ioquake3 (code/qcommon/cmd.c): Cbuf_Execute counts every `"` (comments included) and, at even parity,
 * ends a command at `;` outside a comment, and at the `*\/` closing a `/*` comment (the rest of the line is the next
 * command: measured on Debian's ioquake3, `echo AAA /* c *\/ echo BBB` prints both); `//` comments out the rest of
 * the line, and a line break ends the command outside a `/*` comment. Cmd_TokenizeString then splits on characters
 * <= ' ', stops at `//`, skips `/* … *\/` (to the next `*\/`, quotes or not), takes "…" as one argument (no
 * escapes, ends at the next quote), and an unquoted word ends at whitespace, a quote, `//` or `/*`.
 */
export function parseQuakeConsole(line: string): string[][] {
  const commands: string[] = [];
  let start = 0;
  let quotes = 0;
  let slash = false;
  let star = false;
  const end = (at: number, next: number) => {
    commands.push(line.slice(start, at));
    start = next;
    quotes = 0;
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    const next = line[i + 1];
    if (c === '"') quotes++;
    if (quotes % 2 === 0) {
      if (next !== undefined) {
        if (!star && c === "/" && next === "/") slash = true;
        else if (!slash && c === "/" && next === "*") star = true;
        else if (star && c === "*" && next === "/") {
          star = false;
          end(i + 1, i + 2); // the `*` stays, the `/` goes
          i++;
          continue;
        }
      }
      if (!slash && !star && c === ";") {
        end(i, i + 1);
        continue;
      }
    }
    if (!star && (c === "\n" || c === "\r")) {
      slash = false;
      end(i, i + 1);
    }
  }
  commands.push(line.slice(start));
  return commands.map(tokenizeQuake).filter((args) => args.length > 0);
}

function tokenizeQuake(command: string): string[] {
  const args: string[] = [];
  let i = 0;
  for (;;) {
    while (i < command.length && command.charCodeAt(i) <= 32) i++;
    if (i >= command.length || command.startsWith("//", i)) return args;
    if (command.startsWith("/*", i)) {
      const close = command.indexOf("*/", i);
      if (close < 0) return args;
      i = close + 2;
      continue;
    }
    let arg = "";
    if (command[i] === '"') {
      for (i++; i < command.length && command[i] !== '"'; i++) arg += command[i];
      args.push(arg);
      if (i >= command.length) return args;
      i++;
      continue;
    }
    while (
      i < command.length &&
      command.charCodeAt(i) > 32 &&
      command[i] !== '"' &&
      !command.startsWith("//", i) &&
      !command.startsWith("/*", i)
    )
      arg += command[i++];
    args.push(arg);
  }
}

/**
 * Source engine (srcds): the same command splitting, and CCommand::Tokenize's break characters `{ } ( ) ' :`
 * which are arguments of their own outside quotes.
 */
export function parseSourceConsole(line: string): string[][] {
  return splitCommands(line, { slashComments: true }).map((c) => tokenize(c, { breakChars: "{}()':" }));
}

/**
 * Rust, assumed at its worst since its parser is unverified: every `;` ends a command (even in quotes), and a
 * backslash escapes the next character inside quotes.
 */
export function parseRustConsole(line: string): string[][] {
  return line
    .split(/[;\r\n]/)
    .map((c) => tokenize(c, { breakChars: "", escapes: () => true }))
    .filter((args) => args.length > 0);
}

/**
 * Teeworlds / DDNet (CConsole::ExecuteLine): a command ends at a line break, or at `;` outside double quotes; the
 * splitter steps over a `\"` inside quotes or not (so it neither opens nor closes a quote); the arguments' parser then
 * takes a backslash inside quotes as escaping the next character.
 */
export function parseTeeworldsConsole(line: string): string[][] {
  return splitOutsideQuotes(line, { escapes: (next) => next === '"' })
    .map((c) => tokenize(c, { breakChars: "", escapes: () => true }))
    .filter((args) => args.length > 0);
}

/**
 * DarkPlaces (Cbuf_Execute, Cmd_PreprocessString, COM_ParseToken_Console): a command ends at a line break, or at `;`
 * outside double quotes; inside quotes `\"` and `\\` are skipped over, and outside them `//` after a space (or at the
 * start) comments out the rest of the line. Each command then has `$` expanded: `$$` is a `$`, `$` before anything but
 * a cvar name or `{` stays as it is, and anything else would be replaced by a cvar's value (an error here). Arguments
 * are quoted strings (with `\"` and `\\` escapes) or words running to the next whitespace.
 */
export function parseDarkplacesConsole(line: string): string[][] {
  return splitOutsideQuotes(line, {
    escapes: (next, quoted) => quoted && dpEscape(next),
    comment: (i) => line[i] === "/" && line[i + 1] === "/" && (i === 0 || /\s/.test(line[i - 1]!)),
  })
    .map((c) =>
      tokenize(expandDollars(c), { breakChars: "", escapes: dpEscape, slashComment: true, wordsToSpace: true }),
    )
    .filter((args) => args.length > 0);
}

/**
 * OpenTTD (IConsoleCmdExec): one line is one command, no separator; a line starting with `#` is a comment and a line
 * holding a control character is refused whole. Arguments split at spaces; a `"` anywhere toggles quoting (it is not
 * part of the argument), and `\"` is a literal quote, inside quotes or not; any other backslash is literal.
 */
export function parseOpenttdConsole(line: string): string[][] {
  return line
    .split(/\r\n|\r|\n/)
    .filter((c) => c.trim() !== "" && !c.startsWith("#"))
    .map((c) => {
      if ([...c].some((ch) => ch.charCodeAt(0) < 32))
        throw new Error(`openttd: malformed characters in ${JSON.stringify(c)}`);
      const args: string[] = [];
      let current: string | undefined;
      let quoted = false;
      for (let i = 0; i < c.length; i++) {
        const ch = c[i]!;
        if (ch === " " && !quoted) {
          if (current !== undefined) args.push(current);
          current = undefined;
        } else if (ch === '"') {
          quoted = !quoted;
          current ??= "";
        } else if (ch === "\\" && c[i + 1] === '"') {
          current = (current ?? "") + c[++i];
        } else {
          current = (current ?? "") + ch;
        }
      }
      if (current !== undefined) args.push(current);
      return args;
    });
}

/** DarkPlaces: a backslash escapes only a quote or a backslash. */
const dpEscape = (next: string) => next === '"' || next === "\\";

/**
 * Splits a line into commands at line breaks and at `;` outside double quotes. A backslash takes the next character
 * along where `escapes(next, quoted)` says so; outside quotes `comment(i)` says a comment starts at `i`, which runs
 * to the line break.
 */
function splitOutsideQuotes(
  line: string,
  o: { escapes: (next: string, quoted: boolean) => boolean; comment?: (i: number) => boolean },
): string[] {
  const commands: string[] = [];
  let current = "";
  let quoted = false;
  let comment = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === "\n" || c === "\r") {
      commands.push(current);
      current = "";
      quoted = false;
      comment = false;
      continue;
    }
    if (comment) continue;
    if (c === "\\" && i + 1 < line.length && o.escapes(line[i + 1]!, quoted)) {
      current += c + line[++i];
      continue;
    }
    if (c === '"') quoted = !quoted;
    if (!quoted && o.comment?.(i)) {
      comment = true;
      continue;
    }
    if (!quoted && c === ";") {
      commands.push(current);
      current = "";
      continue;
    }
    current += c;
  }
  commands.push(current);
  return commands;
}

function expandDollars(command: string): string {
  if (/^\s*(alias|bind|in_bind)\s/.test(command)) return command;
  let out = "";
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (c !== "$") {
      out += c;
      continue;
    }
    const next = command[i + 1] ?? "";
    if (next === "$") {
      out += "$";
      i++;
    } else if (next === "{" || /[#*0-9a-zA-Z_-]/.test(next)) {
      throw new Error(`darkplaces: a cvar would be expanded at ${JSON.stringify(command.slice(i))}`);
    } else {
      out += "$";
    }
  }
  return out;
}

/**
 * Minecraft, where the template quotes: one line is one command; Brigadier reads `fixed` arguments, each a word up
 * to the next space or a string in `"…"` or `'…'` (a backslash takes the next character along), then the last
 * argument (`kick`'s reason, `say`'s message) is the rest of the line as it is, left out when empty.
 */
export function parseBrigadier(line: string, fixed: number): string[] {
  const commands = line.split(/\r\n|\r|\n/).filter((c) => c.trim() !== "");
  if (commands.length !== 1) throw new Error(`minecraft: ${commands.length} commands in ${JSON.stringify(line)}`);
  const command = commands[0]!;
  const args: string[] = [];
  let i = 0;
  while (args.length < fixed && i < command.length) {
    const quote = command[i]!;
    let arg = "";
    if (quote === '"' || quote === "'") {
      for (i++; i < command.length && command[i] !== quote; i++) arg += command[i] === "\\" ? command[++i] : command[i];
      if (command[i] !== quote) throw new Error(`minecraft: unclosed ${quote} in ${JSON.stringify(command)}`);
      i++;
    } else for (; i < command.length && command[i] !== " "; i++) arg += command[i];
    if (i < command.length && command[i] !== " ")
      throw new Error(`minecraft: no space after argument ${args.length + 1} in ${JSON.stringify(command)}`);
    args.push(arg);
    i++;
  }
  const rest = command.slice(i);
  return rest === "" ? args : [...args, rest];
}

/**
 * Minecraft: one line is one command (no separator character), split at spaces; the last argument of `kick`,
 * `say`, … takes the rest of the line.
 */
export function parseMinecraftConsole(line: string): string[] {
  const commands = line.split(/\r\n|\r|\n/).filter((c) => c.trim() !== "");
  if (commands.length !== 1) throw new Error(`minecraft: ${commands.length} commands in ${JSON.stringify(line)}`);
  return commands[0]!.split(" ");
}

function splitCommands(line: string, o: { slashComments: boolean }): string[] {
  const out: string[] = [];
  let current = "";
  let quotes = 0;
  let slashComment = false;
  let starComment = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    const next = line[i + 1];
    if (c === "\n" || c === "\r") {
      if (!starComment) {
        out.push(current);
        current = "";
        quotes = 0;
        slashComment = false;
        continue;
      }
    }
    if (slashComment) continue;
    if (starComment) {
      if (c === "*" && next === "/") {
        starComment = false;
        i++;
      }
      continue;
    }
    if (c === '"') quotes++;
    if (quotes % 2 === 0) {
      if (o.slashComments && c === "/" && next === "/") {
        slashComment = true;
        continue;
      }
      if (o.slashComments && c === "/" && next === "*") {
        starComment = true;
        i++;
        continue;
      }
      if (c === ";") {
        out.push(current);
        current = "";
        continue;
      }
    }
    current += c;
  }
  out.push(current);
  return out.filter((c) => tokenize(c, { breakChars: "" }).length > 0);
}

/**
 * Arguments: quoted strings (inside, a backslash takes the next character along where `escapes` says so) and words;
 * `breakChars` are arguments of their own; a word ends at whitespace, and at a quote unless `wordsToSpace`;
 * `slashComment`: `//` where an argument would start ends the command.
 */
function tokenize(
  command: string,
  o: { breakChars: string; escapes?: (next: string) => boolean; slashComment?: boolean; wordsToSpace?: boolean },
): string[] {
  const args: string[] = [];
  let i = 0;
  const space = (c: string) => c.charCodeAt(0) <= 32;
  const endsWord = (c: string) => space(c) || (c === '"' && !o.wordsToSpace) || o.breakChars.includes(c);
  while (i < command.length) {
    const c = command[i]!;
    if (space(c)) {
      i++;
    } else if (o.slashComment && c === "/" && command[i + 1] === "/") {
      break;
    } else if (c === '"') {
      let arg = "";
      i++;
      while (i < command.length && command[i] !== '"') {
        if (command[i] === "\\" && i + 1 < command.length && o.escapes?.(command[i + 1]!)) i++;
        arg += command[i++];
      }
      i++;
      args.push(arg);
    } else if (o.breakChars.includes(c)) {
      args.push(c);
      i++;
    } else {
      let arg = "";
      while (i < command.length && !endsWord(command[i]!)) arg += command[i++];
      args.push(arg);
    }
  }
  return args;
}
