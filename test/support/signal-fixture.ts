/**
 * Run by ./signals.test.ts as a test file of its own (`bun test <this file>`): starts what a real-server test
 * starts, a tracked process and, where root can make one, a network namespace with a process in it, prints them
 * on one line, and waits to be interrupted.
 */
import { test } from "bun:test";
import { createNetns, netnsMissing } from "./netns.ts";
import { spawn } from "./procs.ts";

test("waits for a signal", async () => {
  const outside = spawn(["sleep", "600"], { stdout: "ignore", scope: "file" });
  const ns = netnsMissing() ? undefined : await createNetns("hub-signal");
  const inside = ns && spawn(ns.exec(["sleep", "600"]), { stdout: "ignore", scope: "file" });
  console.log(`STARTED ${JSON.stringify({ pids: [outside.pid, inside?.pid].filter(Boolean), ns: ns?.name })}`);
  await new Promise(() => {});
}, 600_000);
