/**
 * Loaded before every test file (bunfig.toml `preload`): processes started through test/support/procs.ts are
 * killed after their test, even when it failed or timed out, and at the end of the run or on bun's exit.
 */
import { afterAll, afterEach, setDefaultTimeout } from "bun:test";
import { killTracked } from "./procs.ts";

// bunfig.toml's [test] timeout is not applied by this bun (1.4.5: every test got 5 s): set it here.
setDefaultTimeout(20_000);

afterEach(() => {
  const left = killTracked("test");
  if (left) console.error(`test/support: killed ${left} process(es) the test left running`);
});
afterAll(() => {
  killTracked("all");
});
process.on("exit", () => killTracked("all"));
