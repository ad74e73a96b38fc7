/**
 * Where a command line reads and writes (cli/context.ts's Invocation carries it): the process's own, or a test's
 * when the CLI runs inside the tests' process (test/cli/binary.ts). Nothing else in cli/ reads process.env,
 * process.cwd() or the process's output.
 */
export interface Io {
  env: Readonly<Record<string, string | undefined>>;
  /** The directory relative paths start from (the configuration file, `init`'s file). */
  cwd: string;
  /** One line on stdout: the text as is (no format directives), then a line break. */
  stdout(text: string): void;
  /** One line on stderr, as `stdout`. */
  stderr(text: string): void;
  /** Whether stderr is a terminal (the log's colours), asked at the first log line. */
  stderrIsTty(): boolean;
  /**
   * Ctrl-C (SIGINT) or SIGTERM from now on: `say` the line, then exit with `code`. The process's only: a test's
   * command line leaves the tests' own process alone.
   */
  onInterrupt?(say: () => string, code: number): void;
}

/**
 * The process's: its output written by console.log/console.error, because Bun writes those straight to the
 * descriptor, while the first touch of process.stdout or process.stderr builds Node's stream objects, which costs a
 * one-shot command milliseconds at start and at exit (`npm run bench:startup`). node:tty is loaded at the first line
 * that asks, not at start: it brings node:net and Node's streams (docs/performance.md), and most one-shot commands
 * log nothing.
 */
export const processIo = (): Io => ({
  env: process.env,
  cwd: process.cwd(),
  stdout: (text) => console.log(text),
  stderr: writeStderr,
  stderrIsTty: () => process.getBuiltinModule("node:tty").isatty(2),
  onInterrupt(say, code) {
    const stop = () => {
      writeStderr(say());
      process.exit(code);
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  },
});

/**
 * A line to fd 2 as it is: Bun's console.error paints its text red on a terminal, which made every log line's time
 * (the text before the log's own colours) read as an error. Written whole, or, should the descriptor refuse (EAGAIN
 * on a non-blocking one), by console.error, which waits.
 */
function writeStderr(line: string): void {
  const bytes = new TextEncoder().encode(line + "\n");
  let done = 0;
  try {
    const { writeSync } = process.getBuiltinModule("node:fs");
    while (done < bytes.length) done += writeSync(2, bytes, done);
  } catch {
    if (done === 0) console.error(line);
    else console.error(new TextDecoder().decode(bytes.subarray(done, -1)));
  }
}
