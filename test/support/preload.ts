/**
 * Loaded before every test file (bunfig.toml `preload`): processes started through test/support/procs.ts are
 * killed after their test, even when it failed or timed out, and at the end of the run, on bun's exit, or when the
 * run is interrupted by a signal.
 */
import { afterAll, afterEach, setDefaultTimeout } from "bun:test";
import { killTracked } from "./procs.ts";

// bunfig.toml's [test] timeout is not applied by this bun (1.4.5: every test got 5 s). This call holds for the
// first test file of a run only (a single file run by hand); `npm test` passes --timeout 20000 for every file.
setDefaultTimeout(20_000);

afterEach(() => {
  const left = killTracked("test");
  if (left) console.error(`test/support: killed ${left} process(es) the test left running`);
});
afterAll(() => {
  killTracked("all");
});
process.on("exit", () => killTracked("all"));
// Interrupted (Ctrl-C, CI's timeout), bun would die without an "exit" event and leave every server, client and
// display running: exit instead, so the line above stops them (and ./netns.ts deletes its namespaces).
for (const [signal, code] of [
  ["SIGINT", 130],
  ["SIGTERM", 143],
  ["SIGHUP", 129],
] as const)
  process.on(signal, () => {
    console.error(`test/support: ${signal}: stopping every process the tests started`);
    process.exit(code);
  });
