/**
 * Loaded before every test file (bunfig.toml `preload`): processes started through test/support/procs.ts are
 * killed after their test, even when it failed or timed out, and at the end of the run or on bun's exit.
 */
import { afterAll, afterEach } from "bun:test";
import { killTracked } from "./procs.ts";

afterEach(() => {
  const left = killTracked("test");
  if (left) console.error(`test/support: killed ${left} process(es) the test left running`);
});
afterAll(() => {
  killTracked("all");
});
process.on("exit", () => killTracked("all"));
