/** Chat commands as players type them, for every bridge (`!ban Bob 1d "for griefing"`). */

/**
 * Splits a chat line into a command (lower-cased, without the prefix) and its arguments. Double quotes keep
 * an argument with spaces together; an unclosed quote runs to the end of the line. Undefined for plain chat.
 */
export function parseChatCommand(text: string, prefix: string): { command: string; args: string[] } | undefined {
  if (!prefix || !text.startsWith(prefix)) return undefined;
  const words: string[] = [];
  for (const m of text.slice(prefix.length).matchAll(/"([^"]*)"?|(\S+)/g)) words.push(m[1] ?? m[2] ?? "");
  const [command, ...args] = words;
  if (!command) return undefined;
  return { command: command.toLowerCase(), args };
}
