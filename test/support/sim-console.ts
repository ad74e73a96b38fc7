/**
 * The simulated game's console as a Source-like console would read it, for tests that prove an escaped value
 * (lib/game/sim-escape.ts `simEscape`) stays one argument of one command.
 */

/**
 * Parses a sim console line the way a Source-like console would: commands separated by `;` or line breaks,
 * arguments by whitespace, double-quoted arguments in JSON string syntax. Tests use it to prove that an escaped
 * value stays one argument of one command.
 */
export function parseSimConsole(line: string): string[][] {
  const commands: string[][] = [];
  let args: string[] = [];
  let i = 0;
  const endCommand = () => {
    if (args.length) commands.push(args);
    args = [];
  };
  while (i < line.length) {
    const c = line[i]!;
    if (c === ";" || c === "\n" || c === "\r") {
      endCommand();
      i++;
    } else if (/\s/.test(c)) {
      i++;
    } else if (c === '"') {
      // JSON.parse rejects what the console would not take: raw control characters, bad escapes.
      const m = /^"(?:[^"\\]|\\[^])*"/.exec(line.slice(i));
      let arg: unknown;
      try {
        arg = m && JSON.parse(m[0]);
      } catch {
        arg = undefined;
      }
      if (!m || typeof arg !== "string") throw new Error(`sim console: bad quoted argument at ${i}`);
      args.push(arg);
      i += m[0].length;
    } else {
      const m = /^[^\s;"]+/.exec(line.slice(i))!;
      args.push(m[0]);
      i += m[0].length;
    }
  }
  endCommand();
  return commands;
}
