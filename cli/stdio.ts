/**
 * The CLI's two output lines, written by console.log/console.error: Bun writes those straight to the descriptor,
 * while the first touch of process.stdout or process.stderr builds Node's stream objects, which costs a one-shot
 * command milliseconds at start and at exit (`npm run bench:startup`). A single string argument is written as
 * is (no format directives), then a line break.
 */
export const stdout = (text: string): void => console.log(text);
export const stderr = (text: string): void => console.error(text);
