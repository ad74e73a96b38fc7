/**
 * A token guesser, run as its own process (`bun hello-flood.ts '<json>'`) so the plugin link under test shares no event
 * loop with it: opens `count` connections to the plugin port, paced evenly over `durationMs` and at most `parallel` at
 * once, each from one of `from` (local addresses, in turn: 127.0.0.2, or many to rotate), each answering the challenge with a
 * wrong token as a plugin would. Prints one JSON line: how many connections were made, how many hellos got the answer
 * "wrong token" (each of those reached the token check), how many were refused with "throttled", and the rest.
 */
import * as net from "node:net";
import { helloLine } from "./fake-plugin.ts";

interface Args {
  port: number;
  host?: string;
  from: string[];
  count: number;
  durationMs: number;
  parallel?: number;
}

export interface FloodReport {
  attempts: number;
  /** Answered `"error":"auth"`: the token was compared. */
  checked: number;
  /** Answered `"error":"throttled"`: refused before reading. */
  throttled: number;
  /** Closed with no answer, or an answer of another kind. */
  other: number;
  /** Could not connect at all (the listener's backlog was full, or the address could not be bound). */
  failed: number;
  /** From the first connection to the last one opened, and to the last one closed. */
  launchedMs: number;
  elapsedMs: number;
}

const args = JSON.parse(process.argv[2] ?? "{}") as Args;
const report: FloodReport = { attempts: 0, checked: 0, throttled: 0, other: 0, failed: 0, launchedMs: 0, elapsedMs: 0 };
const parallel = args.parallel ?? 256;
let open = 0;
let wake: (() => void) | undefined;

function attempt(localAddress: string, i: number): void {
  open++;
  report.attempts++;
  let text = "";
  let connected = false;
  const socket = net.connect({ host: args.host ?? "127.0.0.1", port: args.port, localAddress });
  socket.setEncoding("utf8");
  socket.on("connect", () => {
    connected = true;
  });
  socket.on("data", (t: string) => {
    // The challenge comes first; the guess answers it as a plugin would.
    const first = !text.includes("\n");
    text += t;
    const challenge = first && text.includes("\n") ? JSON.parse(text.slice(0, text.indexOf("\n"))) : undefined;
    if (challenge?.t === "challenge") socket.write(helloLine(challenge.nonce, `guess-${i}`));
  });
  socket.on("error", () => {});
  socket.on("close", () => {
    if (!connected) report.failed++;
    else if (text.includes('"error":"auth"')) report.checked++;
    else if (text.includes('"error":"throttled"')) report.throttled++;
    else report.other++;
    open--;
    wake?.();
  });
  // A peer that keeps the connection open after its answer is not waited for.
  setTimeout(() => socket.destroy(), 3000).unref();
}

const started = performance.now();
for (let i = 0; i < args.count; i++) {
  const due = started + (i * args.durationMs) / args.count;
  const wait = due - performance.now();
  if (wait > 5) await Bun.sleep(wait); // in small bursts: a timer per connection would fall behind
  while (open >= parallel) await new Promise<void>((resolve) => (wake = resolve));
  attempt(args.from[i % args.from.length]!, i);
}
report.launchedMs = Math.round(performance.now() - started);
while (open > 0) await new Promise<void>((resolve) => (wake = resolve));
report.elapsedMs = Math.round(performance.now() - started);
console.log(JSON.stringify(report));
