import { spawn } from "node:child_process";
import { childEnv } from "./child-env.ts";
import { HUB_EVENTS, type EventBus, type HubEventName } from "./events.ts";
import type { Logger } from "./log.ts";
import { serial } from "./serial.ts";

/** Splits a configured command line into argv (quotes group words). No shell ever sees it. */
export function splitCommand(line: string): string[] {
  const argv: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g;
  for (const m of line.matchAll(re))
    argv.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, "$1") : (m[2] ?? m[3] ?? ""));
  return argv;
}

/**
 * `[hooks] <event> = "<command>"`: runs the command when the event happens, with the event's data as JSON on
 * stdin, without the agent waiting for it. Game data only ever travels on stdin, never into the command line. The hook gets the few variables every
 * program needs (childEnv), never hub-agent's HUB_* settings and secrets.
 */
export function attachHooks(events: EventBus, hooks: Record<string, string>, logger: Logger, timeoutMs = 30_000) {
  for (const [name, line] of Object.entries(hooks)) {
    if (!HUB_EVENTS.includes(name as HubEventName)) {
      logger.warn(`hooks.${name} is not an event: use one of ${HUB_EVENTS.join(", ")}`);
      continue;
    }
    const [cmd, ...args] = splitCommand(line);
    if (!cmd) continue;
    // Detached from the bus, which orders startup and player handling: a slow hook (up to its timeout) must not
    // hold up a player's user lookup. Runs of one hook still go one after another, in the order of the events.
    const inOrder = serial();
    events.on(name as HubEventName, (data) => {
      const payload = { event: name, ...data };
      void inOrder(() => runHook(cmd, args, payload, logger, timeoutMs));
    });
  }
}

function runHook(cmd: string, args: string[], data: unknown, logger: Logger, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ["pipe", "ignore", "pipe"], timeout: timeoutMs, env: childEnv() });
    let stderr = "";
    child.stderr?.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-500)));
    child.on("error", (e) => {
      logger.warn(`hook ${cmd} could not start: ${e.message}`);
      resolve();
    });
    child.on("close", (code) => {
      if (code !== 0) logger.warn(`hook ${cmd} exited ${code}${stderr ? `: ${stderr.trim()}` : ""}`);
      resolve();
    });
    child.stdin?.on("error", () => {}); // a hook that ignores stdin must not crash the agent
    child.stdin?.end(JSON.stringify(data) + "\n");
  });
}
