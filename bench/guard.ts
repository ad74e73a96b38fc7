/**
 * A bench's flow, run to its report or to one line on stderr saying it ended without one (and a non-zero exit): a
 * bench must never end silently with success. Bun ends a process whose event loop has nothing left to wait for, a
 * promise still pending or not: `main()` awaited at the top level then hangs (Bun 1.4.5, no `beforeExit`); started
 * without that await, as here, the process would exit 0 with no output; `beforeExit` catches it. SIGINT and SIGTERM
 * say where the run was too (SIGHUP is left alone: `nohup` ignores it, a handler would not), and `cleanUp` runs.
 */
export function runToReport(
  name: string,
  main: (phase: (what: string) => void) => Promise<void>,
  cleanUp: () => void = () => {},
): void {
  const started = performance.now();
  let phase = "the start";
  let finished = false;
  const fail = (why: string, code: number) => {
    const s = ((performance.now() - started) / 1000).toFixed(0);
    if (!finished) console.error(`${name}: ${why} after ${s} s (last: ${phase}): no report`);
    cleanUp();
    process.exit(code);
  };
  process.on("beforeExit", () => {
    if (!finished) fail("ended with the run unfinished (nothing left to wait for)", 1);
  });
  for (const [signal, code] of [
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const)
    process.on(signal, () => fail(signal, code));
  main((what) => void (phase = what)).then(
    () => void (finished = true),
    (error: unknown) => {
      console.error(error);
      fail("failed", 1);
    },
  );
}
